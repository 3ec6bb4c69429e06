/* The fast kernels' width layer: vec16, sixteen floats, as one 512-bit
 * register (AVX-512 F + BW) or two 256-bit ones (AVX2), and the handful
 * of operations the block functions (cpu_fast_blocks.h) are written in,
 * each with its two forms side by side. The including file defines
 * ROWOPS_VEC16_BITS as 512 or 256 and is compiled for that instruction
 * set; nothing else in the block functions depends on the width.
 *
 * Sixteen bfloat16 or float16 values fill 32 bytes, so a 32-element block
 * of a 16-bit row is one 64-byte line, held as two vec16 (lo, hi). bfloat16
 * is widened by interleaving with zeros per 128-bit lane, so lo and hi
 * hold the block's elements in an order of the width's own (512: lanes of
 * {8k..8k+3} in lo, {8k+4..8k+7} in hi; 256: lo is elements 0-15 as {0-3,
 * 8-11} and {4-7, 12-15}, hi likewise 16-31). Packing back to 16 bits
 * undoes it, and a float32 weight is loaded in the same order; float16 and
 * float32 keep the natural order (lo: 0-15, hi: 16-31). Every 64 bytes go
 * out as consecutive stores, so a streamed line fills its write-combining
 * buffer at once; rows are 32-byte aligned on the fast path, so streamed
 * stores are 256 bits wide at both widths. */
#ifndef ROWOPS_CPU_VEC16_H
#define ROWOPS_CPU_VEC16_H

#include <immintrin.h>
#include <stdint.h>

#if ROWOPS_VEC16_BITS == 512

typedef __m512 vec16;
typedef __m256i half16; /* sixteen float16 */

static inline vec16 v16_zero(void)
{
    return _mm512_setzero_ps();
}
static inline vec16 v16_set1(float f)
{
    return _mm512_set1_ps(f);
}
static inline vec16 v16_load(const float *p) /* 64-byte aligned */
{
    return _mm512_load_ps(p);
}
static inline vec16 v16_loadu(const float *p)
{
    return _mm512_loadu_ps(p);
}
static inline void v16_store(float *p, vec16 v) /* 64-byte aligned */
{
    _mm512_store_ps(p, v);
}
static inline vec16 v16_add(vec16 a, vec16 b)
{
    return _mm512_add_ps(a, b);
}
static inline vec16 v16_mul(vec16 a, vec16 b)
{
    return _mm512_mul_ps(a, b);
}
static inline vec16 v16_fmadd(vec16 a, vec16 b, vec16 c)
{
    return _mm512_fmadd_ps(a, b, c);
}
static inline float v16_hsum2(vec16 a, vec16 b)
{
    return _mm512_reduce_add_ps(_mm512_add_ps(a, b));
}

/* 64 bytes at a 32-byte aligned p: two streamed halves, or one store. */
static inline void v16_store64_bits(void *p, __m512i v, int stream)
{
    if (stream) {
        _mm256_stream_si256((__m256i *)p, _mm512_castsi512_si256(v));
        _mm256_stream_si256((__m256i *)p + 1, _mm512_extracti64x4_epi64(v, 1));
    } else {
        _mm512_storeu_si512(p, v);
    }
}
static inline void v16_store_f32(float *p, vec16 v, int stream)
{
    v16_store64_bits(p, _mm512_castps_si512(v), stream);
}

static inline void v16_load32_bf16(const void *p, vec16 *lo, vec16 *hi)
{
    const __m512i v = _mm512_loadu_si512(p);
    const __m512i z = _mm512_setzero_si512();
    *lo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v));
    *hi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v));
}
/* Round to nearest even (finite or infinite input), low half cleared:
 * the rounded value, still a float. */
static inline vec16 v16_round_bf16(vec16 v)
{
    const __m512i b = _mm512_castps_si512(v);
    const __m512i lsb =
        _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    const __m512i t =
        _mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    return _mm512_castsi512_ps(
        _mm512_and_si512(t, _mm512_set1_epi32((int)0xffff0000u)));
}
/* v16_round_bf16 that keeps NaN a NaN (its quiet bit set, as the scalar
 * rounding does): for values that are stored before their row's sum is
 * known to be finite. */
static inline vec16 v16_round_bf16_nan(vec16 v)
{
    const __mmask16 nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    return _mm512_castsi512_ps(_mm512_mask_or_epi32(
        _mm512_castps_si512(v16_round_bf16(v)), nan, _mm512_castps_si512(v),
        _mm512_set1_epi32(0x00400000)));
}
/* v16_round_bf16 without clearing the low half: the rounded bfloat16 in
 * each element's high half, for packing only. */
static inline __m512i round_hi_bf16(vec16 v)
{
    const __m512i b = _mm512_castps_si512(v);
    const __m512i lsb =
        _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    return _mm512_add_epi32(b,
                            _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
}
/* The high halves of lo's and hi's elements -> 32 bfloat16 in order: one
 * two-source word permute where shifting both and packing took three. */
static inline __m512i pack_hi_bf16(__m512i lo, __m512i hi)
{
    /* word j of lane k = j / 8: lo's element 4k + j % 8 for j % 8 < 4,
     * else hi's 4k + j % 8 - 4 (operand hi's words count from 32) */
    static const uint16_t idx[32] = {1,  3,  5,  7,  33, 35, 37, 39, 9,  11, 13,
                                     15, 41, 43, 45, 47, 17, 19, 21, 23, 49, 51,
                                     53, 55, 25, 27, 29, 31, 57, 59, 61, 63};
    return _mm512_permutex2var_epi16(lo, _mm512_loadu_si512(idx), hi);
}
/* Two rounded vec16 (v16_round_bf16) -> 32 bfloat16 in order. */
static inline void v16_store32_bf16(void *p, vec16 lo, vec16 hi, int stream)
{
    v16_store64_bits(
        p, pack_hi_bf16(_mm512_castps_si512(lo), _mm512_castps_si512(hi)),
        stream);
}
/* Two vec16 of finite or infinite values rounded to nearest even -> 32
 * bfloat16 in order (v16_store32_bf16 of v16_round_bf16's, with fewer
 * operations). */
static inline void v16_store32_bf16_round(void *p, vec16 lo, vec16 hi,
                                          int stream)
{
    v16_store64_bits(p, pack_hi_bf16(round_hi_bf16(lo), round_hi_bf16(hi)),
                     stream);
}
/* A float32 weight's 32 elements at w in the bfloat16 order. */
static inline void v16_load32_f32_bf16_order(const float *w, vec16 *lo,
                                             vec16 *hi)
{
    const __m512 a = _mm512_loadu_ps(w), b = _mm512_loadu_ps(w + 16);
    const __m512i lo_idx = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17,
                                             18, 19, 24, 25, 26, 27);
    const __m512i hi_idx = _mm512_add_epi32(lo_idx, _mm512_set1_epi32(4));
    *lo = _mm512_permutex2var_ps(a, lo_idx, b);
    *hi = _mm512_permutex2var_ps(a, hi_idx, b);
}

static inline vec16 v16_load_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}
static inline half16 v16_to_f16(vec16 v)
{
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
}
static inline vec16 v16_from_f16(half16 h)
{
    return _mm512_cvtph_ps(h);
}
static inline void v16_store32_f16(uint16_t *p, half16 lo, half16 hi,
                                   int stream)
{
    v16_store64_bits(p, _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1),
                     stream);
}

#elif ROWOPS_VEC16_BITS == 256

typedef struct vec16 {
    __m256 a, b;
} vec16;
typedef struct half16 {
    __m128i a, b;
} half16;

static inline vec16 v16_zero(void)
{
    return (vec16){_mm256_setzero_ps(), _mm256_setzero_ps()};
}
static inline vec16 v16_set1(float f)
{
    return (vec16){_mm256_set1_ps(f), _mm256_set1_ps(f)};
}
static inline vec16 v16_load(const float *p)
{
    return (vec16){_mm256_load_ps(p), _mm256_load_ps(p + 8)};
}
static inline vec16 v16_loadu(const float *p)
{
    return (vec16){_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
}
static inline void v16_store(float *p, vec16 v)
{
    _mm256_store_ps(p, v.a);
    _mm256_store_ps(p + 8, v.b);
}
static inline vec16 v16_add(vec16 x, vec16 y)
{
    return (vec16){_mm256_add_ps(x.a, y.a), _mm256_add_ps(x.b, y.b)};
}
static inline vec16 v16_mul(vec16 x, vec16 y)
{
    return (vec16){_mm256_mul_ps(x.a, y.a), _mm256_mul_ps(x.b, y.b)};
}
static inline vec16 v16_fmadd(vec16 x, vec16 y, vec16 z)
{
    return (vec16){_mm256_fmadd_ps(x.a, y.a, z.a),
                   _mm256_fmadd_ps(x.b, y.b, z.b)};
}
static inline float v16_hsum2(vec16 x, vec16 y)
{
    const __m256 v =
        _mm256_add_ps(_mm256_add_ps(x.a, x.b), _mm256_add_ps(y.a, y.b));
    const __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

static inline void v16_store32_bits(void *p, __m256i v, int stream)
{
    if (stream)
        _mm256_stream_si256((__m256i *)p, v);
    else
        _mm256_storeu_si256((__m256i *)p, v);
}
static inline void v16_store_f32(float *p, vec16 v, int stream)
{
    v16_store32_bits(p, _mm256_castps_si256(v.a), stream);
    v16_store32_bits(p + 8, _mm256_castps_si256(v.b), stream);
}

/* 16 bfloat16 at p -> one vec16 in the interleaved order. */
static inline vec16 v16_load16_bf16(const void *p)
{
    const __m256i v = _mm256_loadu_si256((const __m256i *)p);
    const __m256i z = _mm256_setzero_si256();
    return (vec16){_mm256_castsi256_ps(_mm256_unpacklo_epi16(z, v)),
                   _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, v))};
}
static inline void v16_load32_bf16(const void *p, vec16 *lo, vec16 *hi)
{
    *lo = v16_load16_bf16(p);
    *hi = v16_load16_bf16((const uint16_t *)p + 16);
}
static inline __m256 round8_bf16(__m256 v)
{
    const __m256i b = _mm256_castps_si256(v);
    const __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i t =
        _mm256_add_epi32(b, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    return _mm256_castsi256_ps(
        _mm256_and_si256(t, _mm256_set1_epi32((int)0xffff0000u)));
}
static inline vec16 v16_round_bf16(vec16 v)
{
    return (vec16){round8_bf16(v.a), round8_bf16(v.b)};
}
static inline __m256 round8_bf16_nan(__m256 v)
{
    const __m256 nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m256 quiet =
        _mm256_or_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(0x00400000)));
    return _mm256_blendv_ps(round8_bf16(v), quiet, nan);
}
static inline vec16 v16_round_bf16_nan(vec16 v)
{
    return (vec16){round8_bf16_nan(v.a), round8_bf16_nan(v.b)};
}
static inline __m256i pack16_bf16(vec16 v)
{
    return _mm256_packus_epi32(_mm256_srli_epi32(_mm256_castps_si256(v.a), 16),
                               _mm256_srli_epi32(_mm256_castps_si256(v.b), 16));
}
static inline void v16_store32_bf16(void *p, vec16 lo, vec16 hi, int stream)
{
    v16_store32_bits(p, pack16_bf16(lo), stream);
    v16_store32_bits((uint16_t *)p + 16, pack16_bf16(hi), stream);
}
/* round8_bf16 without clearing the low half (packing shifts it out). */
static inline __m256 round8_hi_bf16(__m256 v)
{
    const __m256i b = _mm256_castps_si256(v);
    const __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    return _mm256_castsi256_ps(
        _mm256_add_epi32(b, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff))));
}
static inline void v16_store32_bf16_round(void *p, vec16 lo, vec16 hi,
                                          int stream)
{
    v16_store32_bf16(p, (vec16){round8_hi_bf16(lo.a), round8_hi_bf16(lo.b)},
                     (vec16){round8_hi_bf16(hi.a), round8_hi_bf16(hi.b)},
                     stream);
}
static inline vec16 load16_f32_bf16_order(const float *w)
{
    return (vec16){
        _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(w)),
                             _mm_loadu_ps(w + 8), 1),
        _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(w + 4)),
                             _mm_loadu_ps(w + 12), 1)};
}
static inline void v16_load32_f32_bf16_order(const float *w, vec16 *lo,
                                             vec16 *hi)
{
    *lo = load16_f32_bf16_order(w);
    *hi = load16_f32_bf16_order(w + 16);
}

static inline vec16 v16_load_f16(const uint16_t *p)
{
    return (vec16){_mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p)),
                   _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p + 1))};
}
static inline half16 v16_to_f16(vec16 v)
{
    return (half16){_mm256_cvtps_ph(v.a, _MM_FROUND_TO_NEAREST_INT),
                    _mm256_cvtps_ph(v.b, _MM_FROUND_TO_NEAREST_INT)};
}
static inline vec16 v16_from_f16(half16 h)
{
    return (vec16){_mm256_cvtph_ps(h.a), _mm256_cvtph_ps(h.b)};
}
static inline void v16_store32_f16(uint16_t *p, half16 lo, half16 hi,
                                   int stream)
{
    v16_store32_bits(p, _mm256_set_m128i(lo.b, lo.a), stream);
    v16_store32_bits(p + 16, _mm256_set_m128i(hi.b, hi.a), stream);
}

#else
#error "define ROWOPS_VEC16_BITS as 512 or 256 before including cpu_vec16.h"
#endif

#endif
