#include "cpu_features.h"

#include <stdio.h>
#include <stdlib.h>
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
    const int amd = !memcmp(v, "AuthenticAMD", 12);
    if ((f & ROWOPS_CPU_AVX512F) && family == 0x19 && amd)
        f |= ROWOPS_CPU_AVX512_HALF_RATE;
    if (family == 0x1a && amd)
        f |= ROWOPS_CPU_PREFETCH_NTA;
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

int rowops_cpu_capability_parse(const char *value, unsigned *keep)
{
    const unsigned all = ~0u,
                   no512 =
                       ~(unsigned)(ROWOPS_CPU_AVX512F | ROWOPS_CPU_AVX512BW |
                                   ROWOPS_CPU_PROPERTIES),
                   none = no512 & ~(unsigned)ROWOPS_CPU_FAST_FEATURES;
    if (!value || !*value || !strcmp(value, "avx512"))
        *keep = all;
    else if (!strcmp(value, "avx2"))
        *keep = no512;
    else if (!strcmp(value, "default"))
        *keep = none;
    else
        return -1;
    return 0;
}

/* The capability's mask and name, read once (a race between threads writes
 * the same values; the warning may then print twice). */
static int capability_read;
static unsigned capability_keep = ~0u;
static const char *capability_name;

static void read_capability(void)
{
    if (__atomic_load_n(&capability_read, __ATOMIC_ACQUIRE))
        return;
    const char *v = getenv(ROWOPS_CPU_CAPABILITY_ENV);
    unsigned keep;
    if (rowops_cpu_capability_parse(v, &keep)) {
        fprintf(stderr,
                "rowops: %s=%s is not " ROWOPS_CPU_CAPABILITY_NAMES
                "; not applied (the kernels use every feature detected)\n",
                ROWOPS_CPU_CAPABILITY_ENV, v);
        keep = ~0u;
        v = NULL;
    }
    capability_keep = keep;
    capability_name = v && *v ? v : NULL;
    __atomic_store_n(&capability_read, 1, __ATOMIC_RELEASE);
}

const char *rowops_cpu_capability(void)
{
    read_capability();
    return capability_name;
}

unsigned rowops_cpu_features(void)
{
    read_capability();
    const unsigned hw = rowops_cpu_features_detected() & capability_keep;
    if (override_mask < 0)
        return hw;
    return (hw & (unsigned)override_mask) |
           ((unsigned)override_mask & ROWOPS_CPU_PROPERTIES);
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
                 {ROWOPS_CPU_AVX512_HALF_RATE, "512-bit at half rate"},
                 {ROWOPS_CPU_PREFETCH_NTA, "non-temporal prefetch"}};
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
