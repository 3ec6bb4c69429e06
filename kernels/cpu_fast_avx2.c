/* The fast CPU kernel (AVX2 + FMA + F16C), for calls the eligibility
 * function admits: float32/float16/bfloat16, unit last-dimension stride,
 * 32-byte aligned rows, 1 <= N <= the one-pass limit.
 *
 * Per row, pass 1 reads x (and residual), forms h, stores it (fused op),
 * keeps it as float32 in a scratch row (L1) and accumulates h^2 in float32
 * lanes; pass 2 scales the scratch row and stores out. Memory sees each
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
#include "rowops.h"
#include "rowops_elem.h"

#include <immintrin.h>
#include <math.h>

/* Rows up to this many elements keep h in a stack scratch row (two of
 * 32 KiB); wider rows re-read it in pass 2. */
#define SCRATCH_ELEMS 8192

typedef struct row_ctx {
    int64_t n;
    float eps;
    const void *w; /* NULL: no weight (rms_norm_rows) */
    int w_f32;     /* weight stored as float32 (else as x's dtype) */
    int stream;    /* non-temporal stores for out and h */
} row_ctx;

/* One row's pointers; r and h are NULL for rms_norm_rows. */
typedef struct row_ptrs {
    const void *x, *r;
    void *h, *out;
    float *rstd;
} row_ptrs;

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

static inline float weight_at(const row_ctx *k, int64_t i, rowops_dtype dt)
{
    return rowops_load_f(k->w, i, k->w_f32 ? ROWOPS_F32 : dt);
}

/* ---- more conversions ------------------------------------------------- */

/* Element i of h (x alone for rms_norm_rows: r == NULL), rounded. */
static inline float bf16_h_at(const uint16_t *x, const uint16_t *r, int64_t i)
{
    const float v = rowops_bf16_to_f32(x[i]);
    return r ? rowops_bf16_to_f32(
                   rowops_f32_to_bf16(v + rowops_bf16_to_f32(r[i])))
             : v;
}

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

/* ---- pass 1 and pass 2 of one 16-element block, per dtype ---------------
 * p1: reads x (and r), forms h, stores it (float16/float32 only), keeps it
 * in s (if s) and accumulates squares. p2: given the block's h as two
 * vectors in the dtype's lane order, stores h (bfloat16 only) and out.
 * src_mem: the block's h for pass 2 without a scratch row. */

static inline void p1_bf16(const row_ctx *k, const void *x, const void *r,
                           void *h, float *s, int64_t i, __m256 *a0, __m256 *a1)
{
    (void)k;
    (void)h;
    __m256 lo, hi;
    load16_bf16((const uint16_t *)x + i, &lo, &hi);
    if (r) {
        __m256 rlo, rhi;
        load16_bf16((const uint16_t *)r + i, &rlo, &rhi);
        lo = round_bf16(_mm256_add_ps(lo, rlo));
        hi = round_bf16(_mm256_add_ps(hi, rhi));
    }
    if (s) {
        _mm256_store_ps(s + i, lo);
        _mm256_store_ps(s + i + 8, hi);
    }
    *a0 = _mm256_fmadd_ps(lo, lo, *a0);
    *a1 = _mm256_fmadd_ps(hi, hi, *a1);
}

static inline void p2_bf16(const row_ctx *k, __m256 lo, __m256 hi, void *h,
                           void *out, int64_t i, __m256 rv)
{
    if (h)
        store16_bf16((uint16_t *)h + i, lo, hi, k->stream);
    lo = _mm256_mul_ps(lo, rv);
    hi = _mm256_mul_ps(hi, rv);
    if (k->w) {
        __m256 wlo, whi;
        load16_w_bf16_order(k, i, &wlo, &whi);
        lo = _mm256_mul_ps(lo, wlo);
        hi = _mm256_mul_ps(hi, whi);
    }
    store16_bf16((uint16_t *)out + i, round_bf16(lo), round_bf16(hi),
                 k->stream);
}

/* bfloat16 pass 1 writes nothing, so x and r are intact in pass 2. */
static inline void src_mem_bf16(const void *x, const void *r, const void *h,
                                int64_t i, __m256 *lo, __m256 *hi)
{
    (void)h;
    load16_bf16((const uint16_t *)x + i, lo, hi);
    if (r) {
        __m256 rlo, rhi;
        load16_bf16((const uint16_t *)r + i, &rlo, &rhi);
        *lo = round_bf16(_mm256_add_ps(*lo, rlo));
        *hi = round_bf16(_mm256_add_ps(*hi, rhi));
    }
}

static inline void p1_f16(const row_ctx *k, const void *x, const void *r,
                          void *h, float *s, int64_t i, __m256 *a0, __m256 *a1)
{
    const uint16_t *xp = (const uint16_t *)x + i;
    __m256 a = load8_f16(xp), b = load8_f16(xp + 8);
    if (r) {
        const uint16_t *rp = (const uint16_t *)r + i;
        const __m128i ha = to8_f16(_mm256_add_ps(a, load8_f16(rp)));
        const __m128i hb = to8_f16(_mm256_add_ps(b, load8_f16(rp + 8)));
        store16_f16((uint16_t *)h + i, ha, hb, k->stream);
        a = _mm256_cvtph_ps(ha);
        b = _mm256_cvtph_ps(hb);
    }
    if (s) {
        _mm256_store_ps(s + i, a);
        _mm256_store_ps(s + i + 8, b);
    }
    *a0 = _mm256_fmadd_ps(a, a, *a0);
    *a1 = _mm256_fmadd_ps(b, b, *a1);
}

static inline void p2_f16(const row_ctx *k, __m256 a, __m256 b, void *h,
                          void *out, int64_t i, __m256 rv)
{
    (void)h;
    a = _mm256_mul_ps(a, rv);
    b = _mm256_mul_ps(b, rv);
    if (k->w) {
        a = _mm256_mul_ps(a, load8_w_f16(k, i));
        b = _mm256_mul_ps(b, load8_w_f16(k, i + 8));
    }
    store16_f16((uint16_t *)out + i, to8_f16(a), to8_f16(b), k->stream);
}

/* In place, r is h after pass 1: read h (or x) back. */
static inline void src_mem_f16(const void *x, const void *r, const void *h,
                               int64_t i, __m256 *a, __m256 *b)
{
    const uint16_t *p = (const uint16_t *)(r ? h : x) + i;
    *a = load8_f16(p);
    *b = load8_f16(p + 8);
}

static inline void p1_f32(const row_ctx *k, const void *x, const void *r,
                          void *h, float *s, int64_t i, __m256 *a0, __m256 *a1)
{
    const float *xp = (const float *)x + i;
    __m256 a = _mm256_loadu_ps(xp), b = _mm256_loadu_ps(xp + 8);
    if (r) {
        const float *rp = (const float *)r + i;
        a = _mm256_add_ps(a, _mm256_loadu_ps(rp));
        b = _mm256_add_ps(b, _mm256_loadu_ps(rp + 8));
        store8_f32((float *)h + i, a, k->stream);
        store8_f32((float *)h + i + 8, b, k->stream);
    }
    if (s) {
        _mm256_store_ps(s + i, a);
        _mm256_store_ps(s + i + 8, b);
    }
    *a0 = _mm256_fmadd_ps(a, a, *a0);
    *a1 = _mm256_fmadd_ps(b, b, *a1);
}

static inline void p2_f32(const row_ctx *k, __m256 a, __m256 b, void *h,
                          void *out, int64_t i, __m256 rv)
{
    (void)h;
    a = _mm256_mul_ps(a, rv);
    b = _mm256_mul_ps(b, rv);
    if (k->w) {
        const float *w = (const float *)k->w + i;
        a = _mm256_mul_ps(a, _mm256_loadu_ps(w));
        b = _mm256_mul_ps(b, _mm256_loadu_ps(w + 8));
    }
    store8_f32((float *)out + i, a, k->stream);
    store8_f32((float *)out + i + 8, b, k->stream);
}

static inline void src_mem_f32(const void *x, const void *r, const void *h,
                               int64_t i, __m256 *a, __m256 *b)
{
    const float *p = (const float *)(r ? h : x) + i;
    *a = _mm256_loadu_ps(p);
    *b = _mm256_loadu_ps(p + 8);
}

/* ---- the scalar tails (elements past the last 16-block), per dtype ---- */

static inline float to_f(const void *p, int64_t i, rowops_dtype dt)
{
    return rowops_load_f(p, i, dt);
}

/* Pass 1 over [from, n): writes h (float16/float32) and s; the sum. */
static float tail1(const row_ctx *k, rowops_dtype dt, const row_ptrs *p,
                   float *s, int64_t from)
{
    float sum = 0.f;
    for (int64_t i = from; i < k->n; ++i) {
        float v = to_f(p->x, i, dt);
        if (p->r) {
            const float raw = v + to_f(p->r, i, dt);
            if (dt == ROWOPS_BF16) {
                v = rowops_bf16_to_f32(rowops_f32_to_bf16(raw));
            } else {
                rowops_store_f(p->h, i, dt, raw);
                v = to_f(p->h, i, dt);
            }
        }
        if (s)
            s[i] = v;
        sum += v * v;
    }
    return sum;
}

/* Pass 2 over [from, n): h from s, else as src_mem reads it. */
static void tail2(const row_ctx *k, rowops_dtype dt, const row_ptrs *p,
                  const float *s, int64_t from, float rstd)
{
    for (int64_t i = from; i < k->n; ++i) {
        float v;
        if (s)
            v = s[i];
        else if (dt == ROWOPS_BF16)
            v = bf16_h_at(p->x, p->r, i);
        else
            v = to_f(p->r ? p->h : p->x, i, dt);
        if (p->h && dt == ROWOPS_BF16)
            rowops_store_f(p->h, i, dt, v);
        float y = v * rstd;
        if (k->w)
            y *= weight_at(k, i, dt);
        rowops_store_f(p->out, i, dt, y);
    }
}

/* ---- the row drivers, one set per dtype ---------------------------------
 * Only bfloat16 rows can fail (non-finite sum: redone by the caller). */

#define SUM_OK_bf16(sum) isfinite(sum)
#define SUM_OK_f16(sum) 1
#define SUM_OK_f32(sum) 1

#define DEFINE_DRIVERS(D, DT)                                                  \
    /* One row, pass 1 then pass 2 (no scratch). 0: redo the row. */           \
    static int wide_##D(const row_ctx *k, const row_ptrs *p)                   \
    {                                                                          \
        const int64_t blocks = k->n & ~(int64_t)15;                            \
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;                              \
        for (int64_t i = 0; i < blocks; i += 16)                               \
            p1_##D(k, p->x, p->r, p->h, NULL, i, &a0, &a1);                    \
        const float sum =                                                      \
            hsum8(_mm256_add_ps(a0, a1)) + tail1(k, DT, p, NULL, blocks);      \
        if (!SUM_OK_##D(sum))                                                  \
            return 0;                                                          \
        const float rstd = 1.0f / sqrtf(sum / (float)k->n + k->eps);           \
        const __m256 rv = _mm256_set1_ps(rstd);                                \
        for (int64_t i = 0; i < blocks; i += 16) {                             \
            __m256 lo, hi;                                                     \
            src_mem_##D(p->x, p->r, p->h, i, &lo, &hi);                        \
            p2_##D(k, lo, hi, p->h, p->out, i, rv);                            \
        }                                                                      \
        tail2(k, DT, p, NULL, blocks, rstd);                                   \
        *p->rstd = rstd;                                                       \
        return 1;                                                              \
    }                                                                          \
                                                                               \
    /* Pass 1 of one row into s; returns its sum of squares. */                \
    static float first_##D(const row_ctx *k, const row_ptrs *p, float *s)      \
    {                                                                          \
        const int64_t blocks = k->n & ~(int64_t)15;                            \
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;                              \
        for (int64_t i = 0; i < blocks; i += 16)                               \
            p1_##D(k, p->x, p->r, p->h, s, i, &a0, &a1);                       \
        return hsum8(_mm256_add_ps(a0, a1)) + tail1(k, DT, p, s, blocks);      \
    }                                                                          \
                                                                               \
    /* Rows [b, e) pipelined; rows whose sum fails are redone strided. */      \
    static void rows_##D(const rowops_call *c, const row_ctx *k, int64_t b,    \
                         int64_t e, float *s_cur, float *s_next)               \
    {                                                                          \
        const int64_t blocks = k->n & ~(int64_t)15;                            \
        row_ptrs cur;                                                          \
        row_pointers(c, b, &cur);                                              \
        row_ptrs next = cur;                                                   \
        float sum = first_##D(k, &cur, s_cur);                                 \
        for (int64_t j = b; j < e; ++j) {                                      \
            const int more = j + 1 < e;                                        \
            if (more)                                                          \
                row_pointers(c, j + 1, &next);                                 \
            float next_sum = 0.f;                                              \
            if (!SUM_OK_##D(sum)) {                                            \
                rowops_cpu_strided(c, j, j + 1); /* nothing written yet */     \
                if (more)                                                      \
                    next_sum = first_##D(k, &next, s_next);                    \
            } else {                                                           \
                const float rstd = 1.0f / sqrtf(sum / (float)k->n + k->eps);   \
                const __m256 rv = _mm256_set1_ps(rstd);                        \
                __m256 a0 = _mm256_setzero_ps(), a1 = a0;                      \
                for (int64_t i = 0; i < blocks; i += 16) {                     \
                    p2_##D(k, _mm256_load_ps(s_cur + i),                       \
                           _mm256_load_ps(s_cur + i + 8), cur.h, cur.out, i,   \
                           rv);                                                \
                    if (more)                                                  \
                        p1_##D(k, next.x, next.r, next.h, s_next, i, &a0,      \
                               &a1);                                           \
                }                                                              \
                tail2(k, DT, &cur, s_cur, blocks, rstd);                       \
                *cur.rstd = rstd;                                              \
                if (more)                                                      \
                    next_sum = hsum8(_mm256_add_ps(a0, a1)) +                  \
                               tail1(k, DT, &next, s_next, blocks);            \
            }                                                                  \
            float *t = s_cur;                                                  \
            s_cur = s_next;                                                    \
            s_next = t;                                                        \
            cur = next;                                                        \
            sum = next_sum;                                                    \
        }                                                                      \
    }

static void row_pointers(const rowops_call *c, int64_t row, row_ptrs *p)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    p->x = rowops_tensor_row_ptr(&c->x, row);
    p->r = fused ? rowops_tensor_row_ptr(&c->residual, row) : NULL;
    p->h = fused ? rowops_tensor_row_ptr(&c->residual_out, row) : NULL;
    p->out = rowops_tensor_row_ptr(&c->out, row);
    p->rstd =
        (float *)c->rstd.data +
        rowops_index_offset(c->rstd.sizes, c->rstd.strides, c->rstd.rank, row);
}

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

static void fast_rows(const rowops_call *c, int64_t row_begin, int64_t row_end,
                      int stream)
{
    if (row_begin >= row_end)
        return;
    const int64_t n = c->x.sizes[c->x.rank - 1];
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const rowops_dtype dt = c->x.dtype;
    /* A non-finite weight makes NaN outputs from finite rows: every
     * bfloat16 row then takes the exact path. */
    if (dt == ROWOPS_BF16 && fused && !weight_finite(c, n)) {
        rowops_cpu_strided(c, row_begin, row_end);
        return;
    }
    const row_ctx k = {
        .n = n,
        .eps = (float)c->eps,
        .w = fused ? c->weight.data : NULL,
        .w_f32 = fused && c->weight.dtype == ROWOPS_F32,
        .stream = stream,
    };
    if (n <= SCRATCH_ELEMS) {
        float s0[SCRATCH_ELEMS] __attribute__((aligned(32)));
        float s1[SCRATCH_ELEMS] __attribute__((aligned(32)));
        switch (dt) {
        case ROWOPS_BF16: rows_bf16(c, &k, row_begin, row_end, s0, s1); break;
        case ROWOPS_F16: rows_f16(c, &k, row_begin, row_end, s0, s1); break;
        default: rows_f32(c, &k, row_begin, row_end, s0, s1); break;
        }
    } else {
        for (int64_t row = row_begin; row < row_end; ++row) {
            row_ptrs p;
            row_pointers(c, row, &p);
            const int ok = dt == ROWOPS_BF16  ? wide_bf16(&k, &p)
                           : dt == ROWOPS_F16 ? wide_f16(&k, &p)
                                              : wide_f32(&k, &p);
            if (!ok)
                rowops_cpu_strided(c, row, row + 1); /* nothing written */
        }
    }
    if (stream)
        _mm_sfence(); /* order the streamed rows before the caller's join */
}

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
