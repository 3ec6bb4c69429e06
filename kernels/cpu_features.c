#include "cpu_features.h"

#include <stdio.h>
#include <string.h>

static int override_mask = -1;

static unsigned detect(void)
{
    unsigned f = 0;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2"))
        f |= ROWOPS_CPU_AVX2;
    if (__builtin_cpu_supports("fma"))
        f |= ROWOPS_CPU_FMA;
    if (__builtin_cpu_supports("avx512f"))
        f |= ROWOPS_CPU_AVX512F;
    if (__builtin_cpu_supports("avx512bw"))
        f |= ROWOPS_CPU_AVX512BW;
    /* F16C has no __builtin_cpu_supports name in gcc 12: CPUID.1:ECX[29] */
    unsigned a, b, c, d;
    __asm__("cpuid" : "=a"(a), "=b"(b), "=c"(c), "=d"(d) : "a"(1), "c"(0));
    if (c & (1u << 29))
        f |= ROWOPS_CPU_F16C;
    /* family: the base field, plus the extended one where the base is 15 */
    const unsigned family =
        ((a >> 8) & 0xf) + (((a >> 8) & 0xf) == 0xf ? (a >> 20) & 0xff : 0);
    unsigned v[4];
    __asm__("cpuid"
            : "=a"(v[3]), "=b"(v[0]), "=d"(v[1]), "=c"(v[2])
            : "a"(0), "c"(0));
    if ((f & ROWOPS_CPU_AVX512F) && family == 0x19 &&
        !memcmp(v, "AuthenticAMD", 12))
        f |= ROWOPS_CPU_AVX512_HALF_RATE;
#endif
    return f;
}

unsigned rowops_cpu_features_detected(void)
{
    /* Idempotent: a race between threads writes the same value. */
    static volatile int cached = -1;
    if (cached < 0)
        cached = (int)detect();
    return (unsigned)cached;
}

unsigned rowops_cpu_features(void)
{
    const unsigned hw = rowops_cpu_features_detected();
    if (override_mask < 0)
        return hw;
    return (hw & (unsigned)override_mask) |
           ((unsigned)override_mask & ROWOPS_CPU_AVX512_HALF_RATE);
}

int rowops_cpu_features_override(int mask)
{
    const int previous = override_mask;
    override_mask = mask < 0 ? -1 : mask;
    return previous;
}

const char *rowops_cpu_features_text(unsigned mask, char *buf, unsigned len)
{
    static const struct {
        unsigned bit;
        const char *name;
    } names[] = {{ROWOPS_CPU_AVX2, "AVX2"},
                 {ROWOPS_CPU_FMA, "FMA"},
                 {ROWOPS_CPU_F16C, "F16C"},
                 {ROWOPS_CPU_AVX512F, "AVX512F"},
                 {ROWOPS_CPU_AVX512BW, "AVX512BW"},
                 {ROWOPS_CPU_AVX512_HALF_RATE, "512-bit at half rate"}};
    if (!len)
        return buf;
    buf[0] = '\0';
    for (unsigned i = 0; i < sizeof names / sizeof names[0]; ++i) {
        if (!(mask & names[i].bit))
            continue;
        const size_t used = strlen(buf);
        snprintf(buf + used, len - used, "%s%s", used ? "+" : "",
                 names[i].name);
    }
    if (!buf[0])
        snprintf(buf, len, "none");
    return buf;
}
