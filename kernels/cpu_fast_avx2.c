/* The fast CPU kernel (AVX2 + FMA + F16C), for calls the eligibility
 * function admits: float32/float16/bfloat16, unit last-dimension stride,
 * 32-byte aligned rows, 1 <= N <= the one-pass limit.
 *
 * Per row, pass 1 reads x (and residual), forms h, keeps it as float32 in
 * a scratch row (L1) and accumulates h^2 in float32 lanes; pass 2 stores h
 * (fused op) from the scratch row, scales it and stores out. Memory sees each
 * input read once and each output written once. The passes of consecutive
 * rows are software-pipelined: one loop runs pass 2 of row j and pass 1 of
 * row j+1 (two scratch rows), so reads and writes stream together; a
 * read-only phase followed by a write-only phase per row measured 25-35 %
 * below the same traffic interleaved. Rows wider than the scratch row
 * (rare: N > 8192) take the two passes one after the other, pass 2
 * re-reading the row from L2. Two entry points differ
 * only in the stores: rowops_cpu_fast_avx2 uses ordinary stores (outputs
 * stay in cache for the next op), rowops_cpu_fast_avx2_nt streams them
 * past the cache (no read-for-ownership of the destination lines), which
 * the eligibility function picks when the outputs exceed the last-level
 * cache anyway.
 *
 * bfloat16 is widened by interleaving with zeros (one shuffle per 8
 * values): lanes then hold elements {0-3, 8-11} and {4-7, 12-15} of a
 * 16-element block, an order the packing back to 16 bits undoes for free;
 * the weight is loaded in the same order. Rounding to bfloat16 skips NaN
 * handling, so a bfloat16 row writes nothing in pass 1 (h waits in the
 * scratch row): a row whose sum of squares is not finite, or every row when
 * the weight holds a NaN or an infinity, is then done by the strided
 * kernel, whose scalar conversions define the NaN results, from inputs
 * still intact even in place. float32 arithmetic and the F16C conversions
 * treat NaN exactly as the scalar code does. This file alone is
 * compiled with -mavx2 -mfma -mf16c and only called when
 * rowops_cpu_features() reports all three. */
#include "cpu_fast_pipeline.h"

#include <immintrin.h>
#include <math.h>

/* ---- float32 <-> bfloat16, 16 at a time in the interleaved order ------ */

static inline void load16_bf16(const void *p, __m256 *lo, __m256 *hi)
{
    const __m256i v = _mm256_loadu_si256((const __m256i *)p);
    const __m256i z = _mm256_setzero_si256();
    *lo = _mm256_castsi256_ps(_mm256_unpacklo_epi16(z, v));
    *hi = _mm256_castsi256_ps(_mm256_unpackhi_epi16(z, v));
}

/* Round to nearest even, finite or infinite input (NaN: see above).
 * Returns the float32 bits with the low half cleared, i.e. the rounded
 * value, still as a float. */
static inline __m256 round_bf16(__m256 v)
{
    const __m256i b = _mm256_castps_si256(v);
    const __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(b, 16), _mm256_set1_epi32(1));
    const __m256i t =
        _mm256_add_epi32(b, _mm256_add_epi32(lsb, _mm256_set1_epi32(0x7fff)));
    return _mm256_castsi256_ps(
        _mm256_and_si256(t, _mm256_set1_epi32((int)0xffff0000u)));
}

/* Two rounded halves (round_bf16 results) -> 16 bfloat16 in order. */
static inline void store16_bf16(void *p, __m256 lo, __m256 hi, int stream)
{
    const __m256i packed =
        _mm256_packus_epi32(_mm256_srli_epi32(_mm256_castps_si256(lo), 16),
                            _mm256_srli_epi32(_mm256_castps_si256(hi), 16));
    if (stream)
        _mm256_stream_si256((__m256i *)p, packed);
    else
        _mm256_storeu_si256((__m256i *)p, packed);
}

/* The weight of a 16-element bfloat16 block, in the interleaved order. */
static inline void load16_w_bf16_order(const row_ctx *k, int64_t i, __m256 *lo,
                                       __m256 *hi)
{
    if (!k->w_f32) {
        load16_bf16((const uint16_t *)k->w + i, lo, hi);
        return;
    }
    const float *w = (const float *)k->w + i;
    *lo = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(w)),
                               _mm_loadu_ps(w + 8), 1);
    *hi = _mm256_insertf128_ps(_mm256_castps128_ps256(_mm_loadu_ps(w + 4)),
                               _mm_loadu_ps(w + 12), 1);
}

static inline float hsum8(__m256 v)
{
    const __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

/* ---- more conversions ------------------------------------------------- */

static inline __m256 load8_f16(const uint16_t *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static inline __m128i to8_f16(__m256 v)
{
    return _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
}

static inline void store16_f16(uint16_t *p, __m128i lo, __m128i hi, int stream)
{
    const __m256i v = _mm256_set_m128i(hi, lo);
    if (stream)
        _mm256_stream_si256((__m256i *)p, v);
    else
        _mm256_storeu_si256((__m256i *)p, v);
}

static inline __m256 load8_w_f16(const row_ctx *k, int64_t i)
{
    return k->w_f32 ? _mm256_loadu_ps((const float *)k->w + i)
                    : load8_f16((const uint16_t *)k->w + i);
}

static inline void store8_f32(float *p, __m256 v, int stream)
{
    if (stream)
        _mm256_stream_ps(p, v);
    else
        _mm256_storeu_ps(p, v);
}

/* ---- pass 1 and pass 2 of one 32-element block, per dtype ---------------
 * A block is two 16-element halves, each held as two vectors (v16), so
 * that pass 2 writes each output's 64-byte line with consecutive stores:
 * streamed 16-bit halves of a line, interleaved with the other output's,
 * left write-combining buffers half full (fused bfloat16 at 256 MiB, 2
 * threads: 13.8 GB/s against 27.5 with whole lines, paired runs).
 * p1: reads x (and r), forms h, keeps it in s (if s) and accumulates
 * squares; without s (rows wider than the scratch row) it stores h
 * (float16/float32) itself. p2: given the block's h, stores h (if h) and
 * out. src_mem: the block's h for pass 2 without a scratch row. */

typedef struct v16 {
    __m256 a, b; /* one 16-element half, in its dtype's lane order */
} v16;

/* h of one 16-element half at j, rounded to the dtype, in its lane order;
 * h (not NULL: a row without a scratch row) gets it stored (16-bit
 * bfloat16 h waits for pass 2, see the top). */
static inline v16 half_bf16(const row_ctx *k, const void *x, const void *r,
                            void *h, int64_t j)
{
    (void)k;
    (void)h;
    v16 v;
    load16_bf16((const uint16_t *)x + j, &v.a, &v.b);
    if (r) {
        __m256 rlo, rhi;
        load16_bf16((const uint16_t *)r + j, &rlo, &rhi);
        v.a = round_bf16(_mm256_add_ps(v.a, rlo));
        v.b = round_bf16(_mm256_add_ps(v.b, rhi));
    }
    return v;
}

static inline v16 half_f16(const row_ctx *k, const void *x, const void *r,
                           void *h, int64_t j)
{
    const uint16_t *xp = (const uint16_t *)x + j;
    v16 v = {load8_f16(xp), load8_f16(xp + 8)};
    if (r) {
        const uint16_t *rp = (const uint16_t *)r + j;
        const __m128i ha = to8_f16(_mm256_add_ps(v.a, load8_f16(rp)));
        const __m128i hb = to8_f16(_mm256_add_ps(v.b, load8_f16(rp + 8)));
        if (h)
            store16_f16((uint16_t *)h + j, ha, hb, k->stream);
        v.a = _mm256_cvtph_ps(ha);
        v.b = _mm256_cvtph_ps(hb);
    }
    return v;
}

static inline v16 half_f32(const row_ctx *k, const void *x, const void *r,
                           void *h, int64_t j)
{
    const float *xp = (const float *)x + j;
    v16 v = {_mm256_loadu_ps(xp), _mm256_loadu_ps(xp + 8)};
    if (r) {
        const float *rp = (const float *)r + j;
        v.a = _mm256_add_ps(v.a, _mm256_loadu_ps(rp));
        v.b = _mm256_add_ps(v.b, _mm256_loadu_ps(rp + 8));
        if (h) {
            store8_f32((float *)h + j, v.a, k->stream);
            store8_f32((float *)h + j + 8, v.b, k->stream);
        }
    }
    return v;
}

/* Pass 1 of a block, per dtype of ES bytes: both halves' h into s (if s;
 * else stored to h, if the dtype stores it in pass 1) and their squares. */
#define DEFINE_P1(D, ES)                                                       \
    static inline void p1_##D(const row_ctx *k, const void *x, const void *r,  \
                              void *h, float *s, int64_t i, v16 *a0, v16 *a1)  \
    {                                                                          \
        for (int half = 0; half < 2; ++half) {                                 \
            const int64_t j = i + 16 * half;                                   \
            v16 *acc = half ? a1 : a0;                                         \
            prefetch_ahead(x, r, j *ES);                                       \
            const v16 v = half_##D(k, x, r, s ? NULL : h, j);                  \
            if (s) {                                                           \
                _mm256_store_ps(s + j, v.a);                                   \
                _mm256_store_ps(s + j + 8, v.b);                               \
            }                                                                  \
            acc->a = _mm256_fmadd_ps(v.a, v.a, acc->a);                        \
            acc->b = _mm256_fmadd_ps(v.b, v.b, acc->b);                        \
        }                                                                      \
    }
DEFINE_P1(bf16, 2)
DEFINE_P1(f16, 2)
DEFINE_P1(f32, 4)

/* One half's out, rounded, in the interleaved order. */
static inline v16 out_bf16(const row_ctx *k, v16 v, int64_t j, __m256 rv)
{
    v.a = _mm256_mul_ps(v.a, rv);
    v.b = _mm256_mul_ps(v.b, rv);
    if (k->w) {
        __m256 wlo, whi;
        load16_w_bf16_order(k, j, &wlo, &whi);
        v.a = _mm256_mul_ps(v.a, wlo);
        v.b = _mm256_mul_ps(v.b, whi);
    }
    return (v16){round_bf16(v.a), round_bf16(v.b)};
}

static inline void p2_bf16(const row_ctx *k, v16 lo, v16 hi, void *h, void *out,
                           int64_t i, v16 rv)
{
    if (h) {
        store16_bf16((uint16_t *)h + i, lo.a, lo.b, k->stream);
        store16_bf16((uint16_t *)h + i + 16, hi.a, hi.b, k->stream);
    }
    const v16 o0 = out_bf16(k, lo, i, rv.a), o1 = out_bf16(k, hi, i + 16, rv.a);
    store16_bf16((uint16_t *)out + i, o0.a, o0.b, k->stream);
    store16_bf16((uint16_t *)out + i + 16, o1.a, o1.b, k->stream);
}

/* bfloat16 pass 1 writes nothing, so x and r are intact in pass 2. */
static inline void src_mem_bf16(const void *x, const void *r, const void *h,
                                int64_t i, v16 *lo, v16 *hi)
{
    (void)h;
    *lo = half_bf16(NULL, x, r, NULL, i);
    *hi = half_bf16(NULL, x, r, NULL, i + 16);
}

static inline v16 out_f(const row_ctx *k, v16 v, int64_t j, __m256 rv, int f16)
{
    v.a = _mm256_mul_ps(v.a, rv);
    v.b = _mm256_mul_ps(v.b, rv);
    if (k->w && f16) {
        v.a = _mm256_mul_ps(v.a, load8_w_f16(k, j));
        v.b = _mm256_mul_ps(v.b, load8_w_f16(k, j + 8));
    } else if (k->w) {
        const float *w = (const float *)k->w + j;
        v.a = _mm256_mul_ps(v.a, _mm256_loadu_ps(w));
        v.b = _mm256_mul_ps(v.b, _mm256_loadu_ps(w + 8));
    }
    return v;
}

static inline void p2_f16(const row_ctx *k, v16 lo, v16 hi, void *h, void *out,
                          int64_t i, v16 rv)
{
    if (h) { /* h is float16-exact: the conversion back is too */
        store16_f16((uint16_t *)h + i, to8_f16(lo.a), to8_f16(lo.b), k->stream);
        store16_f16((uint16_t *)h + i + 16, to8_f16(hi.a), to8_f16(hi.b),
                    k->stream);
    }
    const v16 o0 = out_f(k, lo, i, rv.a, 1), o1 = out_f(k, hi, i + 16, rv.a, 1);
    store16_f16((uint16_t *)out + i, to8_f16(o0.a), to8_f16(o0.b), k->stream);
    store16_f16((uint16_t *)out + i + 16, to8_f16(o1.a), to8_f16(o1.b),
                k->stream);
}

/* In place, r is h after pass 1: read h (or x) back. */
static inline void src_mem_f16(const void *x, const void *r, const void *h,
                               int64_t i, v16 *lo, v16 *hi)
{
    const uint16_t *p = (const uint16_t *)(r ? h : x) + i;
    *lo = (v16){load8_f16(p), load8_f16(p + 8)};
    *hi = (v16){load8_f16(p + 16), load8_f16(p + 24)};
}

static inline void p2_f32(const row_ctx *k, v16 lo, v16 hi, void *h, void *out,
                          int64_t i, v16 rv)
{
    float *hp = h, *op = out;
    if (hp) {
        store8_f32(hp + i, lo.a, k->stream);
        store8_f32(hp + i + 8, lo.b, k->stream);
        store8_f32(hp + i + 16, hi.a, k->stream);
        store8_f32(hp + i + 24, hi.b, k->stream);
    }
    const v16 o0 = out_f(k, lo, i, rv.a, 0), o1 = out_f(k, hi, i + 16, rv.a, 0);
    store8_f32(op + i, o0.a, k->stream);
    store8_f32(op + i + 8, o0.b, k->stream);
    store8_f32(op + i + 16, o1.a, k->stream);
    store8_f32(op + i + 24, o1.b, k->stream);
}

static inline void src_mem_f32(const void *x, const void *r, const void *h,
                               int64_t i, v16 *lo, v16 *hi)
{
    const float *p = (const float *)(r ? h : x) + i;
    *lo = (v16){_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)};
    *hi = (v16){_mm256_loadu_ps(p + 16), _mm256_loadu_ps(p + 24)};
}

static inline v16 v16_load(const float *p)
{
    return (v16){_mm256_load_ps(p), _mm256_load_ps(p + 8)};
}

#define FAST_VEC v16
#define FAST_BLOCK 32
#define FAST_ZERO() ((v16){_mm256_setzero_ps(), _mm256_setzero_ps()})
#define FAST_SET1(f) ((v16){_mm256_set1_ps(f), _mm256_set1_ps(f)})
#define FAST_LOAD(p) v16_load(p)
#define FAST_HSUM2(x, y)                                                       \
    hsum8(_mm256_add_ps(_mm256_add_ps((x).a, (x).b),                           \
                        _mm256_add_ps((y).a, (y).b)))

DEFINE_DRIVERS(bf16, ROWOPS_BF16)
DEFINE_DRIVERS(f16, ROWOPS_F16)
DEFINE_DRIVERS(f32, ROWOPS_F32)

/* ---- entry points -------------------------------------------------------- */

/* 1 if every weight is finite (exponent not all ones). The weight has unit
 * stride on the fast path (eligibility condition 4); 16 at a time. */
static int weight_finite(const rowops_call *c, int64_t n)
{
    const int f32 = c->weight.dtype == ROWOPS_F32;
    const __m256i mask = _mm256_set1_epi32(f32 ? 0x7f800000 : 0x7f807f80);
    __m256i bad = _mm256_setzero_si256();
    const int64_t per = f32 ? 8 : 16, blocks = n / per * per;
    const __m256i *p = c->weight.data;
    for (int64_t i = 0; i < blocks; i += per, ++p) {
        const __m256i e = _mm256_and_si256(_mm256_loadu_si256(p), mask);
        /* per 32 bits (f32) or per 16 bits: exponent == all ones */
        bad = _mm256_or_si256(bad, f32 ? _mm256_cmpeq_epi32(e, mask)
                                       : _mm256_cmpeq_epi16(e, mask));
    }
    if (!_mm256_testz_si256(bad, bad))
        return 0;
    for (int64_t i = blocks; i < n; ++i)
        if (!isfinite(rowops_load_f(c->weight.data, i, c->weight.dtype)))
            return 0;
    return 1;
}

DEFINE_FAST_ROWS(fast_rows, weight_finite, _mm_sfence)

void rowops_cpu_fast_avx2(const rowops_call *c, int64_t row_begin,
                          int64_t row_end)
{
    fast_rows(c, row_begin, row_end, 0);
}

void rowops_cpu_fast_avx2_nt(const rowops_call *c, int64_t row_begin,
                             int64_t row_end)
{
    fast_rows(c, row_begin, row_end, 1);
}
