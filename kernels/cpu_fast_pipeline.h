/* The fast CPU kernels' row pipeline, shared by every vector width
 * (cpu_fast_avx2.c, cpu_fast_avx512.c): the per-row state, the scalar
 * tails, and the drivers that run pass 1 and pass 2 of consecutive rows
 * in one loop. cpu_fast_blocks.h, written once over the width layer
 * (cpu_vec16.h), defines what the drivers are instantiated with:
 *   FAST_VEC, FAST_BLOCK (elements per block: two vectors), FAST_ZERO(),
 *   FAST_SET1(f), FAST_LOAD(p) (aligned float load), FAST_HSUM2(a, b),
 * and per dtype D in {bf16, f16, f32} the block functions
 *   p1_D(k, x, r, h, sd, i, &a0, &a1)  pass 1 of elements [i, i+BLOCK),
 *                                      h kept at sd (NULL: none)
 *   PREFETCH_BLOCK_D(P, x, r, i)       P (prefetch_t1 or prefetch_nta) for
 *                                      each line of the block
 *   p2_D(k, lo, hi, h, out, i, rv)     pass 2 from h as two vectors
 *   src_mem_D(x, r, h, i, &lo, &hi)    h for pass 2 without a scratch row
 * and instantiates DEFINE_DRIVERS(D, DT, V, PREFETCH) for each dtype, once
 * with the L2 prefetch (V empty, prefetch_t1) and once non-temporal (V
 * _nta, prefetch_nta), and the float32 two-pass driver once more without
 * prefetch (DEFINE_TWO_PASS, V _np, prefetch_none); the kernel's
 * file then makes its entry points with DEFINE_FAST_ROWS(entry,
 * prefix_finite). */
#ifndef ROWOPS_CPU_FAST_PIPELINE_H
#define ROWOPS_CPU_FAST_PIPELINE_H

#include "rowops.h"
#include "rowops_elem.h"
#include "rowops_sum.h"
#include "test_slowdown.h"

#include <immintrin.h>
#include <math.h>

/* Rows up to this many elements keep h in a stack scratch row (32 KiB);
 * wider rows re-read it in pass 2. */
#define SCRATCH_ELEMS 8192
/* Rows of at least this many elements share one scratch row between the
 * two rows in flight (rows_D), shorter ones alternate two. What a row
 * reads again then stays in L1 the better: on Zen 5 (opcost ab, 256 MiB
 * and in-cache calls, paired) fused float32 N = 4096 took x0.87-0.95 the
 * time of two rows, N = 8192 x0.83-0.92, rms_norm_rows bfloat16 N = 8192
 * x0.78-0.91; at N = 1024 fused bfloat16 on one thread x1.095, where
 * pass 2's start moves every row and its runs end at unpredictable
 * places (docs/history.md). */
#define ONE_SCRATCH_MIN 2048

/* Elements per chunk of the sum of squares: each lane of the two vector
 * accumulators adds one term per block, so ROWOPS_SUM_LANE_TERMS per
 * chunk; chunk sums are added in double (rowops_sum.h). One horizontal sum
 * per chunk (2048 or 4096 elements) costs nothing measurable. */
#define FAST_CHUNK ((int64_t)FAST_BLOCK * ROWOPS_SUM_LANE_TERMS)

/* The row's sum of squares in float from its chunk sums and scalar tail (a
 * sum beyond float's range is the contract's Inf case). */
static inline float chunked_sum(const rowops_sum *chunks, float tail)
{
    rowops_sum t = *chunks;
    rowops_sum_add(&t, tail);
    return (float)rowops_sum_value(&t);
}

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

static inline float weight_at(const row_ctx *k, int64_t i, rowops_dtype dt)
{
    return rowops_load_f(k->w, i, k->w_f32 ? ROWOPS_F32 : dt);
}

/* Software prefetch of x and residual ahead of pass 1's loads: the
 * hardware prefetchers alone left one core at 20 (bfloat16) to 29
 * (float32) GB/s on streaming rows of the fused op. About 8 KiB ahead in
 * all, split over the input streams, measured best on one core (fused,
 * 4 KiB per stream: 51 GB/s against 42 at 2 KiB and 35 at 8 KiB; one
 * stream: 55 at 8 KiB against 43 at 4 KiB). Into L2 (T1), where the L1
 * streamer takes it on: on the Zen 4 host of 2026-12-01, 256 MiB fused
 * calls on one thread ran 12-14 % faster than with T0 (bfloat16 AVX-512
 * 16.4-17.9 -> 19.2-20.0 GB/s, AVX2 16.9-19.1 -> 20.8-21.9, float32
 * streamed 23.7-27.3 -> 26.9-30.0; 3 to 4 runs each, alternating builds),
 * and no slower on two (an L1 prefetch holds one of its few miss buffers
 * until the line arrives). Past a row's end it fetches the next row's
 * start, which is what comes next in contiguous rows.
 *
 * prefetch_nta (the _nta entries) fetches the same lines non-temporally
 * (PREFETCHNTA: into L1, marked to leave first, not kept in L2). The
 * inputs are read once; the scratch row and the weight are read again
 * every row. With T1 the lines streaming through L1 evict them, and their
 * reloads from L2 cost the core a share of its DRAM rate that grows with
 * the row (docs/history.md, "Non-temporal prefetch": on Zen 5 a probe
 * that also reads a 16 KiB scratch ring and a 16 KiB weight row kept 0.75
 * of the plain probe's rate, 0.955 with 4 KiB ones). */
/* One body for both hints, instantiated per hint: _mm_prefetch takes its
 * hint as a constant (clang's is a macro that insists on one), and the
 * drivers are instantiated once per prefetch function (DEFINE_DRIVERS):
 * gcc 12 drops every prefetch of a function that picks its hint at run
 * time. */
#define DEFINE_PREFETCH(name, hint)                                            \
    static inline void name(const void *x, const void *r, int64_t off)         \
    {                                                                          \
        if (r) {                                                               \
            _mm_prefetch((const char *)x + off + 4096, hint);                  \
            _mm_prefetch((const char *)r + off + 4096, hint);                  \
        } else {                                                               \
            _mm_prefetch((const char *)x + off + 8192, hint);                  \
        }                                                                      \
    }
DEFINE_PREFETCH(prefetch_t1, _MM_HINT_T1)
DEFINE_PREFETCH(prefetch_nta, _MM_HINT_NTA)
#undef DEFINE_PREFETCH

/* No software prefetch: for float32 rows with ordinary stores, whose
 * inputs are often hot (in place, in a model), and where the hardware
 * prefetchers keep up with two passes over one row. */
static inline void prefetch_none(const void *x, const void *r, int64_t off)
{
    (void)x;
    (void)r;
    (void)off;
}

/* ---- scalar conversions ---------------------------------------------- */

/* ---- the scalar tails (elements past the last 16-block), per dtype ---- */

static inline float to_f(const void *p, int64_t i, rowops_dtype dt)
{
    return rowops_load_f(p, i, dt);
}

/* Pass 1 over [from, n): writes s, else h; the sum. */
static float tail1(const row_ctx *k, rowops_dtype dt, row_ptrs pv, float *s,
                   int64_t from)
{
    const row_ptrs *p = &pv;
    float sum = 0.f;
    for (int64_t i = from; i < k->n; ++i) {
        float v = to_f(p->x, i, dt);
        if (p->r) {
            const float raw = v + to_f(p->r, i, dt);
            if (dt == ROWOPS_BF16 && s) {
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

/* Pass 2 over [from, n): h from s (bfloat16 h stored from there), else as
 * src_mem reads it. */
static void tail2(const row_ctx *k, rowops_dtype dt, row_ptrs pv,
                  const float *s, int64_t from, float rstd)
{
    const row_ptrs *p = &pv;
    for (int64_t i = from; i < k->n; ++i) {
        const float v = s ? s[i] : to_f(p->r ? p->h : p->x, i, dt);
        if (s && p->h && dt == ROWOPS_BF16)
            rowops_store_f(p->h, i, dt, v);
        float y = v * rstd;
        if (k->w)
            y *= weight_at(k, i, dt);
        rowops_store_f(p->out, i, dt, y);
    }
}

static inline row_ptrs row_at(const rowops_call *c, int64_t row)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    row_ptrs p;
    p.x = rowops_tensor_row_ptr(&c->x, row);
    p.r = fused ? rowops_tensor_row_ptr(&c->residual, row) : NULL;
    p.h = fused ? rowops_tensor_row_ptr(&c->residual_out, row) : NULL;
    p.out = rowops_tensor_row_ptr(&c->out, row);
    p.rstd = rowops_tensor_index_ptr(&c->rstd, row);
    return p;
}

/* Where pass 2 of row j starts (in elements; it wraps around the row)
 * while pass 1 of row j+1 runs in the same loop. A load whose address
 * agrees in its low 12 bits with a streamed store still in flight waits
 * for it (4 KiB aliasing); rows whose inputs and outputs share their page
 * offsets (page-aligned buffers, rows a multiple of 4 KiB) then stall on
 * every block. Measured on Zen 4 (fused bfloat16, 256 MiB, 2 threads,
 * paired runs): streamed 0.49 of the DRAM ceiling with the same offsets,
 * 0.78 with stores one 64-byte block ahead, 0.85-0.91 from 128 bytes on,
 * and 0.48 again at exactly 4096. So the start is the block offset that
 * puts every output's page offset farthest (circularly) from every
 * input's; calls with ordinary stores keep 0 (no gain measured). */
static int64_t stream_rotation(const rowops_call *c, int64_t b, int64_t e,
                               int64_t blocks, int64_t block, rowops_dtype dt)
{
    if (e - b < 2 || blocks < 2 * block)
        return 0;
    const row_ptrs p0 = row_at(c, b), p1 = row_at(c, b + 1);
    const void *stores[2] = {p0.out, p0.h}, *loads[2] = {p1.x, p1.r};
    const int ns = p0.h ? 2 : 1, nl = p1.r ? 2 : 1;
    const int64_t es = (int64_t)rowops_dtype_size(dt);
    int64_t best = 0, best_gap = -1;
    for (int64_t rot = 0; rot < blocks && rot * es < 4096; rot += block) {
        int64_t gap = 4096;
        for (int i = 0; i < ns; ++i)
            for (int j = 0; j < nl; ++j) {
                const int64_t d = ((int64_t)(uintptr_t)stores[i] + rot * es -
                                   (int64_t)(uintptr_t)loads[j]) &
                                  4095;
                const int64_t circ = d < 4096 - d ? d : 4096 - d;
                gap = circ < gap ? circ : gap;
            }
        if (gap > best_gap) {
            best_gap = gap;
            best = rot;
        }
    }
    return best;
}

/* ---- the row drivers, one set per dtype ---------------------------------
 * Only bfloat16 rows can fail (non-finite sum: redone by the caller). */

#define SUM_OK_bf16(sum) isfinite(sum)
#define SUM_OK_f16(sum) 1
#define SUM_OK_f32(sum) 1

/* Each driver its own function: inlined into the entry, the six of them
 * made one function whose loops gcc compiled worse (rms_norm_rows
 * bfloat16 N = 1024, one thread, x1.13 the time of the same source
 * compiled alone; opcost ab, paired). */
#define NOINLINE __attribute__((noinline))

/* The drivers' loops read the call's settings (k) and the row's pointers
 * from locals whose address nothing outside the inlined block functions
 * sees: the vector stores go through may-alias types, so with k or the
 * row pointers behind a parameter's pointer gcc reloaded every one of them
 * after every store (the tails and first_ get the caller's copies). */
#define LOCAL_CTX                                                              \
    const row_ctx kv = *kin;                                                   \
    const row_ctx *const k = &kv

#define DEFINE_TWO_PASS(D, DT, V, PREFETCH)                                    \
    /* Pass 1 of one row into s (NULL: none); returns its sum of squares. */   \
    static float first_##D##V(const row_ctx *kin, row_ptrs pv, float *s)       \
    {                                                                          \
        LOCAL_CTX;                                                             \
        const row_ptrs *const p = &pv;                                         \
        const int64_t blocks = k->n & ~(int64_t)(FAST_BLOCK - 1);              \
        rowops_sum acc = {0, 0};                                               \
        for (int64_t c = 0; c < blocks; c += FAST_CHUNK) {                     \
            const int64_t ce = rowops_sum_block_end(c, FAST_CHUNK, blocks);    \
            FAST_VEC a0 = FAST_ZERO(), a1 = a0;                                \
            for (int64_t i = c; i < ce; i += FAST_BLOCK) {                     \
                PREFETCH_BLOCK_##D(PREFETCH, p->x, p->r, i);                   \
                p1_##D(k, p->x, p->r, p->h, s ? s + i : NULL, i, &a0, &a1);    \
            }                                                                  \
            rowops_sum_add(&acc, FAST_HSUM2(a0, a1));                          \
        }                                                                      \
        return chunked_sum(&acc, tail1(kin, DT, pv, s, blocks));               \
    }                                                                          \
                                                                               \
    /* One row, pass 1 then pass 2, no scratch row: pass 1 stores h (rounded   \
     * keeping NaN), pass 2 reads it back. A row whose sum is not finite       \
     * (bfloat16: the vector rounding of out does not keep NaN) runs pass 2    \
     * in the scalar tail. */                                                  \
    static void wide_##D##V(const row_ctx *kin, row_ptrs pv)                   \
    {                                                                          \
        LOCAL_CTX;                                                             \
        const row_ptrs *const p = &pv;                                         \
        const int64_t blocks = k->n & ~(int64_t)(FAST_BLOCK - 1);              \
        const float sum = first_##D##V(kin, pv, NULL);                         \
        const float rstd = 1.0f / sqrtf(sum / (float)k->n + k->eps);           \
        const FAST_VEC rv = FAST_SET1(rstd);                                   \
        const int64_t vec_end = SUM_OK_##D(sum) ? blocks : 0;                  \
        for (int64_t i = 0; i < vec_end; i += FAST_BLOCK) {                    \
            FAST_VEC lo, hi;                                                   \
            src_mem_##D(p->x, p->r, p->h, i, &lo, &hi);                        \
            p2_##D(k, lo, hi, NULL, p->out, i, rv);                            \
        }                                                                      \
        tail2(kin, DT, pv, NULL, vec_end, rstd);                               \
        *p->rstd = rstd;                                                       \
    }

/* The pipelined drivers (rows_, rows1_) of dtype D, hint V; they call the
 * DEFINE_TWO_PASS drivers of the same D and V. */
#define DEFINE_PIPELINE(D, DT, V, PREFETCH)                                    \
    /* Rows [b, e) pipelined, two scratch rows alternating (rows shorter than  \
     * ONE_SCRATCH_MIN); rows whose sum fails are redone strided. */           \
    NOINLINE static void rows_##D##V(const rowops_call *c, const row_ctx *kin, \
                                     int64_t b, int64_t e, float *s_cur,       \
                                     float *s_next)                            \
    {                                                                          \
        LOCAL_CTX;                                                             \
        const int64_t blocks = k->n & ~(int64_t)(FAST_BLOCK - 1);              \
        const int64_t rot =                                                    \
            k->stream ? stream_rotation(c, b, e, blocks, FAST_BLOCK, DT) : 0;  \
        row_ptrs cur = row_at(c, b), next = cur;                               \
        float sum = first_##D##V(kin, cur, s_cur);                             \
        for (int64_t j = b; j < e; ++j) {                                      \
            const int more = j + 1 < e;                                        \
            if (more)                                                          \
                next = row_at(c, j + 1);                                       \
            float next_sum = 0.f;                                              \
            if (!SUM_OK_##D(sum)) {                                            \
                rowops_cpu_strided(c, j, j + 1); /* nothing written yet */     \
                if (more)                                                      \
                    next_sum = first_##D##V(kin, next, s_next);                \
            } else {                                                           \
                const float rstd = 1.0f / sqrtf(sum / (float)k->n + k->eps);   \
                const FAST_VEC rv = FAST_SET1(rstd);                           \
                rowops_sum acc = {0, 0};                                       \
                for (int64_t ch = 0; ch < blocks; ch += FAST_CHUNK) {          \
                    const int64_t ce =                                         \
                        rowops_sum_block_end(ch, FAST_CHUNK, blocks);          \
                    FAST_VEC a0 = FAST_ZERO(), a1 = a0;                        \
                    for (int64_t i = ch; i < ce; i += FAST_BLOCK) {            \
                        int64_t q = i + rot;                                   \
                        if (q >= blocks)                                       \
                            q -= blocks;                                       \
                        p2_##D(k, FAST_LOAD(s_cur + q),                        \
                               FAST_LOAD(s_cur + q + FAST_BLOCK / 2), cur.h,   \
                               cur.out, q, rv);                                \
                        if (more) {                                            \
                            PREFETCH_BLOCK_##D(PREFETCH, next.x, next.r, i);   \
                            p1_##D(k, next.x, next.r, next.h, s_next + i, i,   \
                                   &a0, &a1);                                  \
                        }                                                      \
                    }                                                          \
                    rowops_sum_add(&acc, FAST_HSUM2(a0, a1));                  \
                }                                                              \
                tail2(kin, DT, cur, s_cur, blocks, rstd);                      \
                *cur.rstd = rstd;                                              \
                if (more)                                                      \
                    next_sum = chunked_sum(                                    \
                        &acc, tail1(kin, DT, next, s_next, blocks));           \
            }                                                                  \
            float *t = s_cur;                                                  \
            s_cur = s_next;                                                    \
            s_next = t;                                                        \
            cur = next;                                                        \
            sum = next_sum;                                                    \
        }                                                                      \
    }                                                                          \
                                                                               \
    /* Rows [b, e) pipelined through one scratch row (rows of at least         \
     * ONE_SCRATCH_MIN): pass 1 of row j + 1 writes each block where pass 2    \
     * of row j has just read one, so a row's element 0 sits at slot sb,       \
     * which moves by rot a row (stream_rotation: pass 2 starts rot blocks     \
     * in). Rows whose sum fails are redone strided. */                        \
    NOINLINE static void rows1_##D##V(const rowops_call *c,                    \
                                      const row_ctx *kin, int64_t b,           \
                                      int64_t e, float *s)                     \
    {                                                                          \
        LOCAL_CTX;                                                             \
        const int64_t blocks = k->n & ~(int64_t)(FAST_BLOCK - 1);              \
        const int64_t rot =                                                    \
            k->stream ? stream_rotation(c, b, e, blocks, FAST_BLOCK, DT) : 0;  \
        row_ptrs cur = row_at(c, b), next = cur;                               \
        float sum = first_##D##V(kin, cur, s);                                 \
        int64_t sb = 0;                                                        \
        for (int64_t j = b; j < e; ++j) {                                      \
            const int more = j + 1 < e;                                        \
            if (more)                                                          \
                next = row_at(c, j + 1);                                       \
            float next_sum = 0.f;                                              \
            if (!SUM_OK_##D(sum)) {                                            \
                rowops_cpu_strided(c, j, j + 1); /* nothing written yet */     \
                if (more)                                                      \
                    next_sum = first_##D##V(kin, next, s);                     \
                sb = 0;                                                        \
            } else {                                                           \
                const float rstd = 1.0f / sqrtf(sum / (float)k->n + k->eps);   \
                const FAST_VEC rv = FAST_SET1(rstd);                           \
                rowops_sum acc = {0, 0};                                       \
                for (int64_t ch = 0; ch < blocks; ch += FAST_CHUNK) {          \
                    const int64_t ce =                                         \
                        rowops_sum_block_end(ch, FAST_CHUNK, blocks);          \
                    FAST_VEC a0 = FAST_ZERO(), a1 = a0;                        \
                    /* runs of blocks where neither q nor the slot wraps */    \
                    for (int64_t i = ch; i < ce;) {                            \
                        int64_t q = i + rot, slot;                             \
                        if (q >= blocks)                                       \
                            q -= blocks;                                       \
                        slot = q + sb;                                         \
                        if (slot >= blocks)                                    \
                            slot -= blocks;                                    \
                        int64_t len = ce - i;                                  \
                        if (blocks - q < len)                                  \
                            len = blocks - q;                                  \
                        if (blocks - slot < len)                               \
                            len = blocks - slot;                               \
                        float *sp = s + slot;                                  \
                        for (int64_t t = 0; t < len; t += FAST_BLOCK) {        \
                            p2_##D(k, FAST_LOAD(sp + t),                       \
                                   FAST_LOAD(sp + t + FAST_BLOCK / 2), cur.h,  \
                                   cur.out, q + t, rv);                        \
                            if (more) {                                        \
                                PREFETCH_BLOCK_##D(PREFETCH, next.x, next.r,   \
                                                   i + t);                     \
                                p1_##D(k, next.x, next.r, next.h, sp + t,      \
                                       i + t, &a0, &a1);                       \
                            }                                                  \
                        }                                                      \
                        i += len;                                              \
                    }                                                          \
                    rowops_sum_add(&acc, FAST_HSUM2(a0, a1));                  \
                }                                                              \
                /* the tails keep their places: pass 2's before pass 1's */    \
                tail2(kin, DT, cur, s, blocks, rstd);                          \
                *cur.rstd = rstd;                                              \
                if (more)                                                      \
                    next_sum =                                                 \
                        chunked_sum(&acc, tail1(kin, DT, next, s, blocks));    \
                sb += rot;                                                     \
                if (sb >= blocks)                                              \
                    sb -= blocks;                                              \
            }                                                                  \
            cur = next;                                                        \
            sum = next_sum;                                                    \
        }                                                                      \
    }

/* Every driver of dtype D with hint V. */
#define DEFINE_DRIVERS(D, DT, V, PREFETCH)                                     \
    DEFINE_TWO_PASS(D, DT, V, PREFETCH)                                        \
    DEFINE_PIPELINE(D, DT, V, PREFETCH)

/* DEFINE_FAST_ROWS's pipelined rows of dtype D: one scratch row or two,
 * the L2 or the non-temporal prefetch (names from its scope). */
#define RUN_ROWS(D)                                                            \
    do {                                                                       \
        if (one && nta)                                                        \
            rows1_##D##_nta(c, &k, row_begin, row_end, s0);                    \
        else if (one)                                                          \
            rows1_##D(c, &k, row_begin, row_end, s0);                          \
        else if (nta)                                                          \
            rows_##D##_nta(c, &k, row_begin, row_end, s0, s1);                 \
        else                                                                   \
            rows_##D(c, &k, row_begin, row_end, s0, s1);                       \
    } while (0)

/* The entry points ENTRY (ordinary stores), ENTRY##_nt (streamed) and
 * ENTRY##_nta (streamed, inputs prefetched non-temporally): a non-finite weight
 * sends every bfloat16 row to the strided kernel; rows up to SCRATCH_ELEMS are
 * pipelined, wider ones and float32 fused rows with ordinary stores two passes
 * a row; a fence orders streamed stores before the caller's join.
 * PREFIX_FINITE(c, n, &done) checks the weight's first done elements with
 * vectors (unit stride on the fast path: eligibility condition 4), 1 if all are
 * finite; the rest is checked here. */
#define DEFINE_FAST_ROWS(ENTRY, PREFIX_FINITE)                                 \
    static int ENTRY##_weight_finite(const rowops_call *c, int64_t n)          \
    {                                                                          \
        int64_t done = 0;                                                      \
        if (!PREFIX_FINITE(c, n, &done))                                       \
            return 0;                                                          \
        for (int64_t i = done; i < n; ++i)                                     \
            if (!isfinite(rowops_load_f(c->weight.data, i, c->weight.dtype)))  \
                return 0;                                                      \
        return 1;                                                              \
    }                                                                          \
    static void ENTRY##_rows(const rowops_call *c, int64_t row_begin,          \
                             int64_t row_end, int stream, int nta)             \
    {                                                                          \
        if (row_begin >= row_end)                                              \
            return;                                                            \
        const int64_t spin_from = rowops_test_slowdown_start();                \
        const int64_t n = c->x.sizes[c->x.rank - 1];                           \
        const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;               \
        const rowops_dtype dt = c->x.dtype;                                    \
        /* A non-finite weight makes NaN outputs from finite rows: every       \
         * bfloat16 row then takes the exact path. */                          \
        if (dt == ROWOPS_BF16 && fused && !ENTRY##_weight_finite(c, n)) {      \
            rowops_cpu_strided(c, row_begin, row_end);                         \
            return;                                                            \
        }                                                                      \
        const row_ctx k = {                                                    \
            .n = n,                                                            \
            .eps = (float)c->eps,                                              \
            .w = fused ? c->weight.data : NULL,                                \
            .w_f32 = fused && c->weight.dtype == ROWOPS_F32,                   \
            .stream = stream,                                                  \
        };                                                                     \
        /* float32 fused rows with ordinary stores: two passes a row, no       \
         * software prefetch. Pass 1 stores h where it belongs and pass 2      \
         * reads it back from L1, so a block stores its two outputs and        \
         * nothing else (the pipeline also fills a float32 scratch row: 6      \
         * stores a block against 4), and a row's inputs, h and weight         \
         * (48 KiB at N = 4096) stay in L1, where the pipeline keeps two       \
         * rows in flight. Zen 5, N = 4096, one thread, in place, paired       \
         * with the pipeline: x0.58-0.60 at B = 64-204 with the inputs hot,    \
         * x0.66-0.75 evicted; functional x0.84 hot, x0.95-0.99 evicted        \
         * (results/experiments/20261207-two-pass). */                         \
        const int two_pass = fused && dt == ROWOPS_F32 && !stream;             \
        if (n <= SCRATCH_ELEMS && !two_pass) {                                 \
            float s0[SCRATCH_ELEMS] __attribute__((aligned(64)));              \
            float s1[SCRATCH_ELEMS] __attribute__((aligned(64)));              \
            const int one = n >= ONE_SCRATCH_MIN;                              \
            switch (dt) {                                                      \
            case ROWOPS_BF16: RUN_ROWS(bf16); break;                           \
            case ROWOPS_F16: RUN_ROWS(f16); break;                             \
            default: RUN_ROWS(f32); break;                                     \
            }                                                                  \
        } else {                                                               \
            void (*const wide)(const row_ctx *, row_ptrs) =                    \
                two_pass && n <= SCRATCH_ELEMS ? wide_f32_np                   \
                : dt == ROWOPS_BF16 ? (nta ? wide_bf16_nta : wide_bf16)        \
                : dt == ROWOPS_F16  ? (nta ? wide_f16_nta : wide_f16)          \
                                    : (nta ? wide_f32_nta : wide_f32);          \
            for (int64_t row = row_begin; row < row_end; ++row) {              \
                wide(&k, row_at(c, row));                                      \
            }                                                                  \
        }                                                                      \
        if (stream)                                                            \
            _mm_sfence(); /* order the streamed rows before the join */        \
        rowops_test_slowdown_spin(spin_from);                                  \
        rowops_test_wrong_rows(c, row_begin, row_end);                         \
    }                                                                          \
    void ENTRY(const rowops_call *c, int64_t row_begin, int64_t row_end)       \
    {                                                                          \
        ENTRY##_rows(c, row_begin, row_end, 0, 0);                             \
    }                                                                          \
    void ENTRY##_nt(const rowops_call *c, int64_t row_begin, int64_t row_end)  \
    {                                                                          \
        ENTRY##_rows(c, row_begin, row_end, 1, 0);                             \
    }                                                                          \
    void ENTRY##_nta(const rowops_call *c, int64_t row_begin, int64_t row_end) \
    {                                                                          \
        ENTRY##_rows(c, row_begin, row_end, 1, 1);                             \
    }

#endif
