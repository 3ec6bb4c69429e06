/* float16 and bfloat16 conversions in portable C, round-to-nearest-even,
 * IEEE semantics for Inf, NaN and subnormals (tested exhaustively against the
 * compiler's _Float16 in tests/c/test_half.c). */
#ifndef ROWOPS_HALF_H
#define ROWOPS_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t rowops_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float rowops_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float rowops_bf16_to_f32(uint16_t h)
{
    return rowops_bits_f32((uint32_t)h << 16);
}

static inline uint16_t rowops_f32_to_bf16(float f)
{
    uint32_t x = rowops_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((x >> 16) | 0x40u); /* quiet the NaN, keep sign */
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

static inline float rowops_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1fu)
        return rowops_bits_f32(sign | 0x7f800000u | (mant << 13));
    if (exp == 0) {
        if (mant == 0)
            return rowops_bits_f32(sign);
        /* Subnormal: shift the leading one into the implicit position. */
        exp = 113;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            --exp;
        }
        return rowops_bits_f32(sign | (exp << 23) | ((mant & 0x3ffu) << 13));
    }
    return rowops_bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

static inline uint16_t rowops_f32_to_f16(float f)
{
    const uint32_t x = rowops_f32_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax >= 0x7f800000u) /* Inf stays Inf, NaN becomes a quiet NaN */
        return (uint16_t)(sign | (ax > 0x7f800000u ? 0x7e00u : 0x7c00u));
    if (ax >= 0x477ff000u) /* >= 65520 rounds to Inf */
        return (uint16_t)(sign | 0x7c00u);
    if (ax >= 0x38800000u) { /* normal in float16 */
        ax += 0xfffu + ((ax >> 13) & 1u);
        return (uint16_t)(sign | ((ax - 0x38000000u) >> 13));
    }
    if (ax <= 0x33000000u) /* <= 2^-25: rounds to (signed) zero */
        return sign;
    /* Subnormal in float16: count units of 2^-24 with round-half-even. */
    const uint32_t exp = ax >> 23;
    const uint32_t mant = (ax & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - exp;
    uint32_t q = mant >> shift;
    const uint32_t rem = mant & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (q & 1u)))
        ++q;
    return (uint16_t)(sign | q);
}

#endif
