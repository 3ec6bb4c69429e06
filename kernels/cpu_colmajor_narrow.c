/* The narrow column-major CPU kernel (AVX-512 F + BW): x = t.T of a
 * contiguous t whose columns are short, as a decode step's few tokens make
 * them (column stride S <= ROWOPS_COLMAJOR_NARROW_MAX elements). See
 * cpu_colmajor.h for the layout; kernels/eligibility.c admits the call.
 *
 * Such an x is one dense span of memory, column j being S consecutive
 * elements. The wide-tile kernel (cpu_colmajor_avx2.c) loads a 16-row
 * unit per column: at B = 3 most of each unit is other columns' elements,
 * and the call took 4-5x the contiguous one. Here the span is read as it
 * lies, 64 bytes at a time, and h = x + residual (rounded to the dtype) is
 * formed on it there, every lane useful. A block of V columns (V: elements
 * per 64 bytes) is then S vectors of h, and row b's V elements of the
 * block sit at positions b + S q (q < V): one permute per vector, masked to
 * the lanes that vector holds, gathers them (S permutes per row and
 * block). Each gathered row is stored to h's destination (residual_out, or
 * out for rms_norm_rows) and its squares summed; pass 2 (cpu_colmajor_
 * rows.h, shared with the wide-tile kernel) then reads each row of h back
 * from cache: out = h * rstd (* w).
 *
 * Sums: each lane of a row adds one square per block for CHUNK_BLOCKS
 * blocks, then the row's lanes join its total in double, so the error
 * does not grow with N (as rowops_sum.h's blocked sums). */
#define ROWOPS_VEC16_BITS 512
#include "cpu_colmajor.h"
#include "cpu_colmajor_rows.h"
#include "cpu_vec16.h"

#define MAX_S ROWOPS_COLMAJOR_NARROW_MAX
#define CHUNK_BLOCKS 16
/* The span is prefetched this many bytes ahead (cold, one thread, B = 10
 * bfloat16: 1.9x the contiguous call's time without, 1.1x with). */
#ifndef LOAD_AHEAD
#define LOAD_AHEAD 4096
#endif
/* h's destination lines are prefetched for writing this many blocks
 * ahead: k rows are k store streams, beyond what the hardware follows. */
#ifndef STORE_AHEAD
#define STORE_AHEAD 4
#endif

/* One thread's rows [b0, b0 + k) of a call. */
typedef struct narrow {
    const char *x, *r; /* element (0, 0); r NULL unless fused */
    int64_t s, n;
    int64_t valid; /* elements of the span from x (and r) that may be read */
    int k;
    char *h[MAX_S]; /* h's destination row of each of the k rows */
    double tot[MAX_S];
} narrow;

/* h of 32 16-bit elements: x + r rounded to the dtype (x alone when r is
 * not given), packed back in x's order. */
ALWAYS_INLINE __m512i h32(__m512i x, const __m512i *r, int bf)
{
    if (!r)
        return x;
    vec16 lo, hi, rlo, rhi;
    if (bf) {
        v16_load32_bf16(&x, &lo, &hi);
        v16_load32_bf16(r, &rlo, &rhi);
        lo = v16_round_bf16(v16_add(lo, rlo));
        hi = v16_round_bf16(v16_add(hi, rhi));
        return _mm512_packus_epi32(
            _mm512_srli_epi32(_mm512_castps_si512(lo), 16),
            _mm512_srli_epi32(_mm512_castps_si512(hi), 16));
    }
    lo = v16_add(v16_from_f16(_mm512_castsi512_si256(x)),
                 v16_from_f16(_mm512_castsi512_si256(*r)));
    hi = v16_add(v16_from_f16(_mm512_extracti64x4_epi64(x, 1)),
                 v16_from_f16(_mm512_extracti64x4_epi64(*r, 1)));
    return _mm512_inserti64x4(_mm512_castsi256_si512(v16_to_f16(lo)),
                              v16_to_f16(hi), 1);
}

/* acc + the squares of 32 16-bit values. */
ALWAYS_INLINE vec16 squares32(__m512i v, vec16 acc, int bf)
{
    vec16 lo, hi;
    if (bf) {
        v16_load32_bf16(&v, &lo, &hi);
    } else {
        lo = v16_from_f16(_mm512_castsi512_si256(v));
        hi = v16_from_f16(_mm512_extracti64x4_epi64(v, 1));
    }
    return v16_fmadd(hi, hi, v16_fmadd(lo, lo, acc));
}

/* Load mask of the 64 bytes at element off of a span of `left` readable
 * elements (per: elements per 64 bytes): no read past the span's end. */
static inline uint32_t span_mask(int64_t off, int64_t left, int per)
{
    if (off + per <= left)
        return per == 32 ? 0xffffffffu : 0xffffu;
    return off < left ? (uint32_t)((1ull << (left - off)) - 1) : 0;
}

/* Each row's gather from a block of `per` columns (S vectors of `per`
 * elements): idx[i], the lane of its element q in whichever vector holds
 * it (16-bit lanes for per = 32, 32-bit for per = 16), and m[i][u], the
 * elements q that vector u holds. */
static void gather_plan(const narrow *g, int64_t b0, int per, __m512i *idx,
                        uint32_t m[][MAX_S])
{
    memset(m, 0, sizeof(uint32_t) * MAX_S * MAX_S);
    for (int i = 0; i < g->k; ++i) {
        _Alignas(64) uint16_t l16[32];
        _Alignas(64) int32_t l32[16];
        for (int q = 0; q < per; ++q) {
            const int64_t p = b0 + i + g->s * q;
            if (per == 32)
                l16[q] = (uint16_t)(p % 32);
            else
                l32[q] = (int32_t)(p % 16);
            m[i][p / per] |= 1u << q;
        }
        idx[i] = _mm512_load_si512(per == 32 ? (void *)l16 : (void *)l32);
    }
}

/* The span's S vectors from element base prefetched LOAD_AHEAD bytes on
 * (as the row kernels' prefetch_t1), never past the span. */
static inline void prefetch_span(const narrow *g, int64_t base, int per, int es)
{
    for (int u = 0; u < g->s; ++u) {
        const int64_t at = (base + (int64_t)per * u) * es + LOAD_AHEAD;
        if (at < g->valid * es) {
            _mm_prefetch(g->x + at, _MM_HINT_T1);
            if (g->r)
                _mm_prefetch(g->r + at, _MM_HINT_T1);
        }
    }
}

/* After a block: each row's lanes join its total in double every
 * CHUNK_BLOCKS blocks and at the end. */
static inline void chunk_sums(narrow *g, vec16 *acc, int *blk, int last)
{
    if (++*blk < CHUNK_BLOCKS && !last)
        return;
    for (int i = 0; i < g->k; ++i) {
        g->tot[i] += _mm512_reduce_add_ps(acc[i]);
        acc[i] = _mm512_setzero_ps();
    }
    *blk = 0;
}

/* Prefetch for writing the line STORE_AHEAD blocks on of h's row i. */
static inline void prefetch_h(const narrow *g, int i, int64_t j, int per,
                              int es)
{
    if (j + (int64_t)per * STORE_AHEAD < g->n)
        _m_prefetchw(g->h[i] + es * (j + (int64_t)per * STORE_AHEAD));
}

/* Pass 1 in 16 bits: blocks of 32 columns. */
ALWAYS_INLINE void pass1_16(narrow *g, int64_t b0, int bf)
{
    const int64_t s = g->s, n = g->n;
    const uint16_t *x = (const uint16_t *)g->x, *r = (const uint16_t *)g->r;
    __m512i idx[MAX_S];
    uint32_t m[MAX_S][MAX_S];
    gather_plan(g, b0, 32, idx, m);
    vec16 acc[MAX_S];
    for (int i = 0; i < g->k; ++i)
        acc[i] = _mm512_setzero_ps();
    int blk = 0;
    for (int64_t j = 0; j < n; j += 32) {
        const int64_t base = j * s, left = g->valid - base;
        prefetch_span(g, base, 32, 2);
        __m512i v[MAX_S];
        for (int u = 0; u < s; ++u) {
            const __mmask32 lm = span_mask(32 * (int64_t)u, left, 32);
            const __m512i xv = _mm512_maskz_loadu_epi16(lm, x + base + 32 * u);
            if (r) {
                const __m512i rv =
                    _mm512_maskz_loadu_epi16(lm, r + base + 32 * u);
                v[u] = h32(xv, &rv, bf);
            } else {
                v[u] = xv;
            }
        }
        const __mmask32 sm =
            n - j >= 32 ? 0xffffffffu : (__mmask32)((1u << (n - j)) - 1);
        for (int i = 0; i < g->k; ++i) {
            prefetch_h(g, i, j, 32, 2);
            __m512i row = _mm512_maskz_permutexvar_epi16(m[i][0], idx[i], v[0]);
            for (int u = 1; u < s; ++u)
                row = _mm512_mask_permutexvar_epi16(row, m[i][u], idx[i], v[u]);
            _mm512_mask_storeu_epi16(g->h[i] + 2 * j, sm, row);
            acc[i] = squares32(row, acc[i], bf); /* lanes past n hold 0 */
        }
        chunk_sums(g, acc, &blk, j + 32 >= n);
    }
}

/* Pass 1 in float32: blocks of 16 columns. */
static void pass1_f32(narrow *g, int64_t b0)
{
    const int64_t s = g->s, n = g->n;
    const float *x = (const float *)g->x, *r = (const float *)g->r;
    __m512i idx[MAX_S];
    uint32_t m[MAX_S][MAX_S];
    gather_plan(g, b0, 16, idx, m);
    vec16 acc[MAX_S];
    for (int i = 0; i < g->k; ++i)
        acc[i] = _mm512_setzero_ps();
    int blk = 0;
    for (int64_t j = 0; j < n; j += 16) {
        const int64_t base = j * s, left = g->valid - base;
        prefetch_span(g, base, 16, 4);
        __m512 v[MAX_S];
        for (int u = 0; u < s; ++u) {
            const __mmask16 lm =
                (__mmask16)span_mask(16 * (int64_t)u, left, 16);
            v[u] = _mm512_maskz_loadu_ps(lm, x + base + 16 * u);
            if (r)
                v[u] = _mm512_add_ps(
                    v[u], _mm512_maskz_loadu_ps(lm, r + base + 16 * u));
        }
        const __mmask16 sm =
            n - j >= 16 ? 0xffffu : (__mmask16)((1u << (n - j)) - 1);
        for (int i = 0; i < g->k; ++i) {
            prefetch_h(g, i, j, 16, 4);
            __m512 row =
                _mm512_maskz_permutexvar_ps((__mmask16)m[i][0], idx[i], v[0]);
            for (int u = 1; u < s; ++u)
                row = _mm512_mask_permutexvar_ps(row, (__mmask16)m[i][u],
                                                 idx[i], v[u]);
            _mm512_mask_storeu_ps(g->h[i] + 4 * j, sm, row);
            acc[i] = _mm512_fmadd_ps(row, row, acc[i]);
        }
        chunk_sums(g, acc, &blk, j + 16 >= n);
    }
}

static void pass1_bf16(narrow *g, int64_t b0)
{
    pass1_16(g, b0, 1);
}

static void pass1_f16(narrow *g, int64_t b0)
{
    pass1_16(g, b0, 0);
}

/* Pass 2 of one row at 512 bits: out = h * rstd (* w), blocks of 32;
 * the tail (and a float32 weight with NaNs in bfloat16, which rounds
 * with payloads kept) by the wide-tile kernel's row pass. */
static void pass2(const char *h, const void *w, int w_f32, char *out, int64_t n,
                  float rstd, rowops_dtype dt, int w_nan)
{
    const vec16 rv = v16_set1(rstd);
    const int64_t es = (int64_t)rowops_dtype_size(dt), ws = w_f32 ? 4 : es;
    int64_t j = 0;
    for (; !w_nan && j + 32 <= n; j += 32) {
        const char *wj = w ? (const char *)w + j * ws : NULL;
        vec16 a, b;
        if (dt == ROWOPS_BF16) {
            v16_load32_bf16(h + j * 2, &a, &b);
        } else if (dt == ROWOPS_F16) {
            a = v16_load_f16((const uint16_t *)h + j);
            b = v16_load_f16((const uint16_t *)h + j + 16);
        } else {
            a = v16_loadu((const float *)h + j);
            b = v16_loadu((const float *)h + j + 16);
        }
        a = v16_mul(a, rv);
        b = v16_mul(b, rv);
        if (wj) {
            vec16 wa, wb;
            if (w_f32 && dt == ROWOPS_BF16) {
                v16_load32_f32_bf16_order((const float *)wj, &wa, &wb);
            } else if (w_f32 || dt == ROWOPS_F32) {
                wa = v16_loadu((const float *)wj);
                wb = v16_loadu((const float *)wj + 16);
            } else if (dt == ROWOPS_BF16) {
                v16_load32_bf16(wj, &wa, &wb);
            } else {
                wa = v16_load_f16((const uint16_t *)wj);
                wb = v16_load_f16((const uint16_t *)wj + 16);
            }
            a = v16_mul(a, wa);
            b = v16_mul(b, wb);
        }
        if (dt == ROWOPS_BF16) {
            v16_store32_bf16_round(out + j * 2, a, b, 0);
        } else if (dt == ROWOPS_F16) {
            v16_store32_f16((uint16_t *)out + j, v16_to_f16(a), v16_to_f16(b),
                            0);
        } else {
            _mm512_storeu_ps((float *)out + j, a);
            _mm512_storeu_ps((float *)out + j + 16, b);
        }
    }
    if (j == n)
        return;
    const void *wt = w ? (const char *)w + j * ws : NULL;
    if (dt == ROWOPS_F32)
        row_out_f32((const float *)h + j, wt, (float *)out + j, n - j, rstd, 0);
    else
        row_out_16((const uint16_t *)h + j, wt, w_f32, (uint16_t *)out + j,
                   n - j, rstd, dt == ROWOPS_BF16, 0, w_nan);
}

void rowops_cpu_colmajor_narrow(const rowops_call *c, int64_t row_begin,
                                int64_t row_end)
{
    if (row_begin >= row_end)
        return;
    const rowops_dtype dt = c->x.dtype;
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    narrow g;
    g.x = c->x.data;
    g.r = fused ? c->residual.data : NULL;
    g.s = c->x.strides[1];
    g.n = c->x.sizes[1];
    g.valid = (g.n - 1) * g.s + c->x.sizes[0];
    g.k = (int)(row_end - row_begin);
    memset(g.tot, 0, sizeof g.tot);
    /* h goes to residual_out (fused) or is staged in out itself */
    const rowops_tensor *ht = fused ? &c->residual_out : &c->out;
    for (int i = 0; i < g.k; ++i)
        g.h[i] = rowops_tensor_row_ptr(ht, row_begin + i);
    if (dt == ROWOPS_F32)
        pass1_f32(&g, row_begin);
    else if (dt == ROWOPS_BF16)
        pass1_bf16(&g, row_begin);
    else
        pass1_f16(&g, row_begin);

    const void *w = fused ? c->weight.data : NULL;
    const int w_f32 = fused && c->weight.dtype == ROWOPS_F32;
    const int w_nan = w_f32 && dt == ROWOPS_BF16 &&
                      colmajor_weight_nan((const float *)w, g.n);
    for (int i = 0; i < g.k; ++i) {
        const int64_t row = row_begin + i;
        const float rstd = colmajor_rstd((float)g.tot[i], g.n, (float)c->eps);
        *(float *)rowops_tensor_index_ptr(&c->rstd, row) = rstd;
        pass2(g.h[i], w, w_f32, rowops_tensor_row_ptr(&c->out, row), g.n, rstd,
              dt, w_nan);
    }
}
