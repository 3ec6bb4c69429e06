/* float16/bfloat16 conversions against independent oracles: the compiler's
 * _Float16 (IEEE binary16, round-to-nearest-even) and, for bfloat16, the
 * nearest of the two truncation neighbours computed in double. */
#include "c_samples.h"
#include "rowops_half.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static uint16_t oracle_f16(float f)
{
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, sizeof u);
    return u;
}

static float oracle_f16_to_f32(uint16_t u)
{
    _Float16 h;
    memcpy(&h, &u, sizeof h);
    return (float)h;
}

/* A bfloat16 value, with the Inf pattern read as 2^128 (where rounding
 * past the largest finite value lands). */
static double bf16_extended(uint16_t b)
{
    const float v = rowops_bf16_to_f32(b);
    return isinf(v) ? copysign(ldexp(1.0, 128), v) : (double)v;
}

static uint16_t oracle_bf16(float f)
{
    const uint32_t x = rowops_f32_bits(f);
    const uint16_t lo = (uint16_t)(x >> 16);
    if ((x & 0xffffu) == 0)
        return lo;
    const uint16_t hi = (uint16_t)(lo + 1);
    const double dl = fabs(bf16_extended(lo) - f);
    const double dh = fabs(bf16_extended(hi) - f);
    if (dl != dh)
        return dl < dh ? lo : hi;
    return (lo & 1) ? hi : lo;
}

static int same_or_both_nan16(uint16_t a, uint16_t b)
{
    const int an = (a & 0x7c00u) == 0x7c00u && (a & 0x3ffu);
    const int bn = (b & 0x7c00u) == 0x7c00u && (b & 0x3ffu);
    return an || bn ? (an && bn) : a == b;
}

int main(void)
{
    /* Every float16 bit pattern to float32 and back. */
    int bad = 0;
    for (uint32_t u = 0; u < 65536; ++u) {
        const float a = rowops_f16_to_f32((uint16_t)u);
        const float b = oracle_f16_to_f32((uint16_t)u);
        if (!(a == b || (isnan(a) && isnan(b))) ||
            (a == b && signbit(a) != signbit(b)))
            ++bad;
        if (!same_or_both_nan16(rowops_f32_to_f16(a), (uint16_t)u))
            ++bad;
    }
    C_EXPECT(bad == 0, "float16 round trip: %d mismatches", bad);

    /* float32 -> float16: a sweep of all exponents, plus every midpoint and
     * its neighbours between consecutive float16 values. */
    bad = 0;
    long tried = 0;
    for (uint64_t x = 0; x <= 0xffffffffull; x += 4093) {
        float f = rowops_bits_f32((uint32_t)x);
        ++tried;
        if (!same_or_both_nan16(rowops_f32_to_f16(f), oracle_f16(f)))
            ++bad;
    }
    for (uint32_t u = 0; u < 0x7c00u; ++u) {
        const double lo = rowops_f16_to_f32((uint16_t)u);
        const double hi = rowops_f16_to_f32((uint16_t)(u + 1));
        const uint32_t mid = rowops_f32_bits((float)((lo + hi) / 2));
        for (int d = -2; d <= 2; ++d)
            for (int s = 0; s < 2; ++s) {
                const float f = rowops_bits_f32((mid + (uint32_t)d) |
                                                (s ? 0x80000000u : 0));
                ++tried;
                if (!same_or_both_nan16(rowops_f32_to_f16(f), oracle_f16(f)))
                    ++bad;
            }
    }
    C_EXPECT(bad == 0, "float32->float16: %d of %ld mismatches", bad, tried);

    /* bfloat16 */
    bad = 0;
    for (uint64_t x = 0; x <= 0xffffffffull; x += 997) {
        const float f = rowops_bits_f32((uint32_t)x);
        if (isnan(f)) {
            const uint16_t b = rowops_f32_to_bf16(f);
            if (!((b & 0x7f80u) == 0x7f80u && (b & 0x7fu)))
                ++bad;
            continue;
        }
        if (rowops_f32_to_bf16(f) != oracle_bf16(f))
            ++bad;
    }
    C_EXPECT(bad == 0, "float32->bfloat16: %d mismatches", bad);
    C_EXPECT(rowops_f32_to_bf16(1.00390625f) == 0x3f80u, "tie to even");
    C_EXPECT(rowops_f32_to_f16(65520.f) == 0x7c00u, "65520 -> inf");
    C_EXPECT(rowops_f32_to_f16(65519.f) == 0x7bffu, "65519 -> 65504");
    return c_report("test_half");
}
