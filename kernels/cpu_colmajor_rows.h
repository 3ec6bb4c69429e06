/* The column-major kernels' shared element work (AVX2 + FMA + F16C):
 * 16-bit loads, conversions and rounding in 256-bit vectors, and the row
 * pass out = h * rstd (* w) over one row-major row of h, with the rounding
 * of the contract. Included by cpu_colmajor_avx2.c and
 * cpu_colmajor_narrow.c, each compiled with at least -mavx2 -mfma -mf16c. */
#ifndef ROWOPS_CPU_COLMAJOR_ROWS_H
#define ROWOPS_CPU_COLMAJOR_ROWS_H

#include "rowops.h"
#include "rowops_elem.h"

#include <immintrin.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define ALWAYS_INLINE static inline __attribute__((always_inline))
#define LINE_BYTES 64

/* ---- conversions -------------------------------------------------------- */

/* float32 -> bfloat16, round to nearest even: the result is the high half
 * of each 32-bit lane (the low half is left over; bf16_pack drops it,
 * bf16_hi_only clears it). No NaN fix-up: every NaN this is applied to
 * comes from bfloat16 values and float arithmetic on them (an operand's
 * payload or the default NaN), so its low 16 bits are zero, rounding cannot
 * carry, and the result is the quiet NaN rowops_f32_to_bf16 gives. */
ALWAYS_INLINE __m256i bf16_round(__m256 v)
{
    const __m256i b = _mm256_castps_si256(v);
    const __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    return _mm256_add_epi32(b,
                            _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
}

/* As bf16_round for any float (a float32 weight may carry any NaN): NaN
 * quieted with its sign and top payload kept, as rowops_f32_to_bf16. */
ALWAYS_INLINE __m256i bf16_round_nan(__m256 v)
{
    const __m256i b = _mm256_castps_si256(v);
    const __m256i quiet = _mm256_or_si256(b, _mm256_set1_epi32(0x400000));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    return _mm256_blendv_epi8(bf16_round(v), quiet, nan);
}

/* The rounded value as a float. */
ALWAYS_INLINE __m256 bf16_hi_only(__m256i t)
{
    return _mm256_castsi256_ps(
        _mm256_and_si256(t, _mm256_set1_epi32((int)0xffff0000u)));
}

/* Two vectors of rounded lanes in the lo/hi layout (below) -> 16 words in
 * order. */
ALWAYS_INLINE __m256i bf16_pack(__m256i lo, __m256i hi)
{
    return _mm256_packus_epi32(_mm256_srli_epi32(lo, 16),
                               _mm256_srli_epi32(hi, 16));
}

ALWAYS_INLINE __m256i combine128(__m128i lo, __m128i hi)
{
    return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

ALWAYS_INLINE float to_f16(uint16_t v, int bf)
{
    return bf ? rowops_bf16_to_f32(v) : rowops_f16_to_f32(v);
}

ALWAYS_INLINE uint16_t from_f16(float v, int bf)
{
    return bf ? rowops_f32_to_bf16(v) : rowops_f32_to_f16(v);
}

/* 16 consecutive 16-bit elements as floats in the lo/hi layout:
 *   float16:  lo = elements 0..7, hi = 8..15 (two F16C conversions)
 *   bfloat16: lo = 0-3, 8-11; hi = 4-7, 12-15 (in-lane unpack)
 * bf16_pack (or combine128 of two F16C conversions) undoes it. */
ALWAYS_INLINE void load16(const uint16_t *p, __m256 *lo, __m256 *hi, int bf)
{
    if (bf) {
        const __m256i z = _mm256_setzero_si256();
        const __m256i v = _mm256_loadu_si256((const __m256i *)p);
        *lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, v));
        *hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, v));
    } else {
        *lo = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
        *hi = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p + 8)));
    }
}

/* 16 packed 16-bit elements (a register) as floats in load16's layout. */
ALWAYS_INLINE void unpack16(__m256i v, __m256 *lo, __m256 *hi, int bf)
{
    if (bf) {
        const __m256i z = _mm256_setzero_si256();
        *lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, v));
        *hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, v));
    } else {
        *lo = _mm256_cvtph_ps(_mm256_castsi256_si128(v));
        *hi = _mm256_cvtph_ps(_mm256_extracti128_si256(v, 1));
    }
}

/* 16 float32 in order (two vectors) -> the lo/hi layout. */
ALWAYS_INLINE void layout16(__m256 a, __m256 b, __m256 *lo, __m256 *hi, int bf)
{
    if (bf) {
        *lo = _mm256_permute2f128_ps(a, b, 0x20);
        *hi = _mm256_permute2f128_ps(a, b, 0x31);
    } else {
        *lo = a;
        *hi = b;
    }
}

/* ---- pass 2: one row, out = h * rstd (* w) ------------------------------ */

/* Elements from p to its next 64-byte boundary (at most n). */
static int64_t to_line(const void *p, int es, int64_t n)
{
    const int64_t e =
        (int64_t)((LINE_BYTES - (uintptr_t)p % LINE_BYTES) % LINE_BYTES) / es;
    return e < n ? e : n;
}

ALWAYS_INLINE __m256 out8_f32(const float *h, const float *w, __m256 rv)
{
    const __m256 y = _mm256_mul_ps(_mm256_loadu_ps(h), rv);
    return w ? _mm256_mul_ps(y, _mm256_loadu_ps(w)) : y;
}

/* nt: out's 64-byte lines are streamed (out is float-aligned). */
static void row_out_f32(const float *h, const float *w, float *out, int64_t n,
                        float rstd, int nt)
{
    const __m256 rv = _mm256_set1_ps(rstd);
    int64_t j = 0;
    if (nt) {
        for (const int64_t e = to_line(out, 4, n); j < e; ++j)
            out[j] = w ? h[j] * rstd * w[j] : h[j] * rstd;
        for (; j + 16 <= n; j += 16) {
            _mm256_stream_ps(out + j, out8_f32(h + j, w ? w + j : NULL, rv));
            _mm256_stream_ps(out + j + 8,
                             out8_f32(h + j + 8, w ? w + j + 8 : NULL, rv));
        }
    }
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(out + j, out8_f32(h + j, w ? w + j : NULL, rv));
    for (; j < n; ++j)
        out[j] = w ? h[j] * rstd * w[j] : h[j] * rstd;
}

/* 16 elements of out; w: NULL, float32 (w_f32) or the dtype. */
ALWAYS_INLINE __m256i out16(const uint16_t *h, const void *w, int w_f32,
                            __m256 rv, int bf, int wnan)
{
    __m256 lo, hi;
    load16(h, &lo, &hi, bf);
    lo = _mm256_mul_ps(lo, rv);
    hi = _mm256_mul_ps(hi, rv);
    if (w) {
        __m256 wlo, whi;
        if (w_f32)
            layout16(_mm256_loadu_ps((const float *)w),
                     _mm256_loadu_ps((const float *)w + 8), &wlo, &whi, bf);
        else
            load16(w, &wlo, &whi, bf);
        lo = _mm256_mul_ps(lo, wlo);
        hi = _mm256_mul_ps(hi, whi);
    }
    if (!bf)
        return combine128(_mm256_cvtps_ph(lo, _MM_FROUND_TO_NEAREST_INT),
                          _mm256_cvtps_ph(hi, _MM_FROUND_TO_NEAREST_INT));
    if (wnan) /* a float32 weight with NaNs: any payload */
        return bf16_pack(bf16_round_nan(lo), bf16_round_nan(hi));
    return bf16_pack(bf16_round(lo), bf16_round(hi));
}

ALWAYS_INLINE uint16_t out1_16(const uint16_t *h, const void *w, int w_f32,
                               int64_t j, float rstd, int bf)
{
    float y = to_f16(h[j], bf) * rstd;
    if (w)
        y *= w_f32 ? ((const float *)w)[j]
                   : to_f16(((const uint16_t *)w)[j], bf);
    return from_f16(y, bf);
}

ALWAYS_INLINE void row_out_16(const uint16_t *h, const void *w, int w_f32,
                              uint16_t *out, int64_t n, float rstd, int bf,
                              int nt, int wnan)
{
    const __m256 rv = _mm256_set1_ps(rstd);
    const int ws = w_f32 ? 4 : 2;
#define W_AT(j) (w ? (const char *)w + (j)*ws : NULL)
    int64_t j = 0;
    if (nt) {
        for (const int64_t e = to_line(out, 2, n); j < e; ++j)
            out[j] = out1_16(h, w, w_f32, j, rstd, bf);
        for (; j + 32 <= n; j += 32) {
            _mm256_stream_si256((__m256i *)(out + j),
                                out16(h + j, W_AT(j), w_f32, rv, bf, wnan));
            _mm256_stream_si256(
                (__m256i *)(out + j + 16),
                out16(h + j + 16, W_AT(j + 16), w_f32, rv, bf, wnan));
        }
    }
    for (; j + 16 <= n; j += 16)
        _mm256_storeu_si256((__m256i *)(out + j),
                            out16(h + j, W_AT(j), w_f32, rv, bf, wnan));
#undef W_AT
    for (; j < n; ++j)
        out[j] = out1_16(h, w, w_f32, j, rstd, bf);
}

/* A row's rstd from its sum of squares: the contract's float formula. */
static inline float colmajor_rstd(float sum, int64_t n, float eps)
{
    return 1.0f / sqrtf(sum / (float)n + eps);
}

/* One row's pass 2 in the dtype dt: rstd from its sum of squares, stored
 * at rstd_at, then out = h * rstd (* w) (w NULL for rms_norm_rows; h may
 * be out itself). */
ALWAYS_INLINE void colmajor_row_out(const void *h, const void *w, int w_f32,
                                    void *out, int64_t n, float sum, float eps,
                                    float *rstd_at, int dt, int nt, int w_nan)
{
    const float rstd = colmajor_rstd(sum, n, eps);
    *rstd_at = rstd;
    if (dt == ROWOPS_F32)
        row_out_f32((const float *)h, w, (float *)out, n, rstd, nt);
    else if (dt == ROWOPS_BF16 && w_nan)
        row_out_16((const uint16_t *)h, w, w_f32, (uint16_t *)out, n, rstd, 1,
                   nt, 1);
    else
        row_out_16((const uint16_t *)h, w, w_f32, (uint16_t *)out, n, rstd,
                   dt == ROWOPS_BF16, nt, 0);
}

/* Whether a float32 weight of n elements holds a NaN (bfloat16 outputs
 * then round with NaN payloads kept). */
static inline int colmajor_weight_nan(const float *w, int64_t n)
{
    for (int64_t j = 0; j < n; ++j)
        if (isnan(w[j]))
            return 1;
    return 0;
}

#endif
