/* The fast CPU kernel at 512 bits (AVX-512 F + BW, with FMA and F16C),
 * for the calls the eligibility function admits to the fast path on CPUs
 * that have them: the algorithm of cpu_fast_avx2.c (kernels/
 * cpu_fast_pipeline.h: pipelined passes, a float32 scratch row, bfloat16
 * rounded in integer arithmetic and NaN rows redone exactly) over blocks
 * of 32 elements in two 512-bit vectors. It exists because at 256 bits
 * the bfloat16 conversions and rounding cap one core below the memory
 * bandwidth (bandwidth set, 1 thread: 31 of 52 GB/s); at 512 bits half
 * the instructions do the same work.
 *
 * Rows are 32-byte aligned on the fast path, not 64: the non-temporal
 * stores go out as two 256-bit halves. bfloat16 widening interleaves with
 * zeros per 128-bit lane (lanes hold elements {8k..8k+3} and {8k+4..
 * 8k+7}); the packing back undoes it, and a float32 weight is permuted to
 * match. This file alone is compiled with -mavx512f -mavx512bw -mfma
 * -mf16c; it runs only where rowops_cpu_features() reports them. */
#include "cpu_fast_pipeline.h"

#include <immintrin.h>

/* ---- stores -------------------------------------------------------------- */

/* 64 bytes at a 32-byte aligned p: streamed as two halves, or one store. */
static inline void store64(void *p, __m512i v, int stream)
{
    if (stream) {
        _mm256_stream_si256((__m256i *)p, _mm512_castsi512_si256(v));
        _mm256_stream_si256((__m256i *)p + 1, _mm512_extracti64x4_epi64(v, 1));
    } else {
        _mm512_storeu_si512(p, v);
    }
}

/* ---- bfloat16, 32 at a time in the interleaved order ----------------------
 */

static inline void load32_bf16(const void *p, __m512 *lo, __m512 *hi)
{
    const __m512i v = _mm512_loadu_si512(p);
    const __m512i z = _mm512_setzero_si512();
    *lo = _mm512_castsi512_ps(_mm512_unpacklo_epi16(z, v));
    *hi = _mm512_castsi512_ps(_mm512_unpackhi_epi16(z, v));
}

/* Round to nearest even (finite or infinite input), low half cleared. */
static inline __m512 round_bf16(__m512 v)
{
    const __m512i b = _mm512_castps_si512(v);
    const __m512i lsb =
        _mm512_and_si512(_mm512_srli_epi32(b, 16), _mm512_set1_epi32(1));
    const __m512i t =
        _mm512_add_epi32(b, _mm512_add_epi32(lsb, _mm512_set1_epi32(0x7fff)));
    return _mm512_castsi512_ps(
        _mm512_and_si512(t, _mm512_set1_epi32((int)0xffff0000u)));
}

static inline void store32_bf16(void *p, __m512 lo, __m512 hi, int stream)
{
    store64(p,
            _mm512_packus_epi32(_mm512_srli_epi32(_mm512_castps_si512(lo), 16),
                                _mm512_srli_epi32(_mm512_castps_si512(hi), 16)),
            stream);
}

/* The weight of a 32-element block in the interleaved order. */
static inline void load32_w_bf16_order(const row_ctx *k, int64_t i, __m512 *lo,
                                       __m512 *hi)
{
    if (!k->w_f32) {
        load32_bf16((const uint16_t *)k->w + i, lo, hi);
        return;
    }
    const float *w = (const float *)k->w + i;
    const __m512 a = _mm512_loadu_ps(w), b = _mm512_loadu_ps(w + 16);
    const __m512i lo_idx = _mm512_setr_epi32(0, 1, 2, 3, 8, 9, 10, 11, 16, 17,
                                             18, 19, 24, 25, 26, 27);
    const __m512i hi_idx = _mm512_add_epi32(lo_idx, _mm512_set1_epi32(4));
    *lo = _mm512_permutex2var_ps(a, lo_idx, b);
    *hi = _mm512_permutex2var_ps(a, hi_idx, b);
}

/* ---- float16 (F16C at 512 bits), natural order -------------------------- */

static inline __m512 load16_f16(const uint16_t *p)
{
    return _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)p));
}

static inline __m256i to16_f16(__m512 v)
{
    return _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
}

static inline __m512 load16_w_f16(const row_ctx *k, int64_t i)
{
    return k->w_f32 ? _mm512_loadu_ps((const float *)k->w + i)
                    : load16_f16((const uint16_t *)k->w + i);
}

static inline void store32_f16(uint16_t *p, __m256i lo, __m256i hi, int stream)
{
    store64(p, _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1), stream);
}

/* ---- pass 1 and pass 2 of one 32-element block, per dtype --------------- */

static inline void p1_bf16(const row_ctx *k, const void *x, const void *r,
                           void *h, float *s, int64_t i, __m512 *a0, __m512 *a1)
{
    (void)k;
    (void)h;
    prefetch_ahead(x, r, i * 2);
    __m512 lo, hi;
    load32_bf16((const uint16_t *)x + i, &lo, &hi);
    if (r) {
        __m512 rlo, rhi;
        load32_bf16((const uint16_t *)r + i, &rlo, &rhi);
        lo = round_bf16(_mm512_add_ps(lo, rlo));
        hi = round_bf16(_mm512_add_ps(hi, rhi));
    }
    if (s) {
        _mm512_store_ps(s + i, lo);
        _mm512_store_ps(s + i + 16, hi);
    }
    *a0 = _mm512_fmadd_ps(lo, lo, *a0);
    *a1 = _mm512_fmadd_ps(hi, hi, *a1);
}

static inline void p2_bf16(const row_ctx *k, __m512 lo, __m512 hi, void *h,
                           void *out, int64_t i, __m512 rv)
{
    if (h)
        store32_bf16((uint16_t *)h + i, lo, hi, k->stream);
    lo = _mm512_mul_ps(lo, rv);
    hi = _mm512_mul_ps(hi, rv);
    if (k->w) {
        __m512 wlo, whi;
        load32_w_bf16_order(k, i, &wlo, &whi);
        lo = _mm512_mul_ps(lo, wlo);
        hi = _mm512_mul_ps(hi, whi);
    }
    store32_bf16((uint16_t *)out + i, round_bf16(lo), round_bf16(hi),
                 k->stream);
}

/* bfloat16 pass 1 writes nothing, so x and r are intact in pass 2. */
static inline void src_mem_bf16(const void *x, const void *r, const void *h,
                                int64_t i, __m512 *lo, __m512 *hi)
{
    (void)h;
    load32_bf16((const uint16_t *)x + i, lo, hi);
    if (r) {
        __m512 rlo, rhi;
        load32_bf16((const uint16_t *)r + i, &rlo, &rhi);
        *lo = round_bf16(_mm512_add_ps(*lo, rlo));
        *hi = round_bf16(_mm512_add_ps(*hi, rhi));
    }
}

static inline void p1_f16(const row_ctx *k, const void *x, const void *r,
                          void *h, float *s, int64_t i, __m512 *a0, __m512 *a1)
{
    prefetch_ahead(x, r, i * 2);
    const uint16_t *xp = (const uint16_t *)x + i;
    __m512 a = load16_f16(xp), b = load16_f16(xp + 16);
    if (r) {
        const uint16_t *rp = (const uint16_t *)r + i;
        const __m256i ha = to16_f16(_mm512_add_ps(a, load16_f16(rp)));
        const __m256i hb = to16_f16(_mm512_add_ps(b, load16_f16(rp + 16)));
        if (!s)
            store32_f16((uint16_t *)h + i, ha, hb, k->stream);
        a = _mm512_cvtph_ps(ha);
        b = _mm512_cvtph_ps(hb);
    }
    if (s) {
        _mm512_store_ps(s + i, a);
        _mm512_store_ps(s + i + 16, b);
    }
    *a0 = _mm512_fmadd_ps(a, a, *a0);
    *a1 = _mm512_fmadd_ps(b, b, *a1);
}

static inline void p2_f16(const row_ctx *k, __m512 a, __m512 b, void *h,
                          void *out, int64_t i, __m512 rv)
{
    if (h)
        store32_f16((uint16_t *)h + i, to16_f16(a), to16_f16(b), k->stream);
    a = _mm512_mul_ps(a, rv);
    b = _mm512_mul_ps(b, rv);
    if (k->w) {
        a = _mm512_mul_ps(a, load16_w_f16(k, i));
        b = _mm512_mul_ps(b, load16_w_f16(k, i + 16));
    }
    store32_f16((uint16_t *)out + i, to16_f16(a), to16_f16(b), k->stream);
}

/* In place, r is h after pass 1: read h (or x) back. */
static inline void src_mem_f16(const void *x, const void *r, const void *h,
                               int64_t i, __m512 *a, __m512 *b)
{
    const uint16_t *p = (const uint16_t *)(r ? h : x) + i;
    *a = load16_f16(p);
    *b = load16_f16(p + 16);
}

static inline void p1_f32(const row_ctx *k, const void *x, const void *r,
                          void *h, float *s, int64_t i, __m512 *a0, __m512 *a1)
{
    prefetch_ahead(x, r, i * 4); /* a block is two lines */
    prefetch_ahead(x, r, i * 4 + 64);
    const float *xp = (const float *)x + i;
    __m512 a = _mm512_loadu_ps(xp), b = _mm512_loadu_ps(xp + 16);
    if (r) {
        const float *rp = (const float *)r + i;
        a = _mm512_add_ps(a, _mm512_loadu_ps(rp));
        b = _mm512_add_ps(b, _mm512_loadu_ps(rp + 16));
        if (!s) {
            store64((float *)h + i, _mm512_castps_si512(a), k->stream);
            store64((float *)h + i + 16, _mm512_castps_si512(b), k->stream);
        }
    }
    if (s) {
        _mm512_store_ps(s + i, a);
        _mm512_store_ps(s + i + 16, b);
    }
    *a0 = _mm512_fmadd_ps(a, a, *a0);
    *a1 = _mm512_fmadd_ps(b, b, *a1);
}

static inline void p2_f32(const row_ctx *k, __m512 a, __m512 b, void *h,
                          void *out, int64_t i, __m512 rv)
{
    if (h) {
        store64((float *)h + i, _mm512_castps_si512(a), k->stream);
        store64((float *)h + i + 16, _mm512_castps_si512(b), k->stream);
    }
    a = _mm512_mul_ps(a, rv);
    b = _mm512_mul_ps(b, rv);
    if (k->w) {
        const float *w = (const float *)k->w + i;
        a = _mm512_mul_ps(a, _mm512_loadu_ps(w));
        b = _mm512_mul_ps(b, _mm512_loadu_ps(w + 16));
    }
    store64((float *)out + i, _mm512_castps_si512(a), k->stream);
    store64((float *)out + i + 16, _mm512_castps_si512(b), k->stream);
}

static inline void src_mem_f32(const void *x, const void *r, const void *h,
                               int64_t i, __m512 *a, __m512 *b)
{
    const float *p = (const float *)(r ? h : x) + i;
    *a = _mm512_loadu_ps(p);
    *b = _mm512_loadu_ps(p + 16);
}

/* ---- the drivers --------------------------------------------------------- */

#define FAST_VEC __m512
#define FAST_BLOCK 32
#define FAST_ZERO() _mm512_setzero_ps()
#define FAST_SET1(f) _mm512_set1_ps(f)
#define FAST_LOAD(p) _mm512_load_ps(p)
#define FAST_HSUM2(a, b) _mm512_reduce_add_ps(_mm512_add_ps(a, b))

DEFINE_DRIVERS(bf16, ROWOPS_BF16)
DEFINE_DRIVERS(f16, ROWOPS_F16)
DEFINE_DRIVERS(f32, ROWOPS_F32)

/* 1 if every weight is finite (exponent not all ones); unit stride. */
static int weight_finite(const rowops_call *c, int64_t n)
{
    const int f32 = c->weight.dtype == ROWOPS_F32;
    const int64_t per = f32 ? 16 : 32, blocks = n / per * per;
    const char *p = c->weight.data;
    __mmask64 bad = 0;
    for (int64_t i = 0; i < blocks; i += per, p += 64) {
        const __m512i v = _mm512_loadu_si512(p);
        if (f32) {
            const __m512i m = _mm512_set1_epi32(0x7f800000);
            bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(v, m), m);
        } else {
            const __m512i m = _mm512_set1_epi16(0x7f80);
            bad |= _mm512_cmpeq_epi16_mask(_mm512_and_si512(v, m), m);
        }
    }
    if (bad)
        return 0;
    for (int64_t i = blocks; i < n; ++i)
        if (!isfinite(rowops_load_f(c->weight.data, i, c->weight.dtype)))
            return 0;
    return 1;
}

DEFINE_FAST_ROWS(fast_rows, weight_finite, _mm_sfence)

void rowops_cpu_fast_avx512(const rowops_call *c, int64_t row_begin,
                            int64_t row_end)
{
    fast_rows(c, row_begin, row_end, 0);
}

void rowops_cpu_fast_avx512_nt(const rowops_call *c, int64_t row_begin,
                               int64_t row_end)
{
    fast_rows(c, row_begin, row_end, 1);
}
