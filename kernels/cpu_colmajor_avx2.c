/* The column-major CPU kernel (AVX2 + FMA + F16C): rows of x with unit
 * stride, element (b, j) at x + b + j * S (x = t.T of a contiguous t). See
 * cpu_colmajor.h for the preconditions.
 *
 * Rows are processed in tiles of R rows, a multiple of the vector unit (8
 * rows for float32, 16 for float16/bfloat16: one column of a unit is one
 * 32-byte load). Pass 1 walks the tile's columns in blocks of one cache
 * line of output per row (16 float32 or 32 16-bit columns):
 *   A. per column, every unit's segment of x (and residual) is loaded: the
 *      tile's whole column, R * size contiguous bytes, prefetched
 *      PREFETCH_BYTES of the span (at least PREFETCH_COLS columns) ahead;
 *      h is formed, rounded to the dtype and staged; after the block its
 *      squares are summed from the staging in float32 lanes (lane = row:
 *      no horizontal sums);
 *   B. the staged block is transposed in registers (8x8) into row order;
 *   C. each row's line is stored to h's destination at once.
 * B and C of block k run interleaved with A of block k + 1 (two staging
 * buffers), so loads stay in flight through the transposes. h's
 * destination is residual_out (fused) or out (rms_norm_rows: h = x, scaled
 * in place by pass 2). Pass 2 runs row-major over the tile: out = h * rstd
 * (* weight), reading h back.
 *
 * Tile size: R = SEGMENT_BYTES / size, so the column segments read from
 * memory are long enough for DRAM and the prefetcher, and h's whole lines
 * are written with streaming stores when the rows share an alignment: no
 * read for ownership, a line per row scattered over R rows that no
 * prefetcher follows (h is read back from memory, which costs what the
 * read for ownership would). Whole-line writes also keep power-of-two row
 * strides (all of a tile's rows in one L1 set) from evicting half-written
 * lines. An earlier form kept h in L2 for calls that fit in cache (R * N *
 * size within 256 KiB) with ordinary stores: with the outputs cold, as
 * in a model (the weights between two norms stream through the LLC), it
 * ran at 0.48-0.65 of this form's speed at B = 101-405 (docs/history.md).
 * out is streamed for large calls (STREAM_MIN_BYTES); below that it stays
 * in cache for the op that reads it next.
 *
 * Each column's square is added to a per-block partial sum, blocks to a
 * per-chunk sum (CHUNK_BLOCKS), chunks to the total in double (as
 * rowops_sum.h's blocked sums): each float32 lane adds at most one block's
 * columns then CHUNK_BLOCKS block sums, so the error does not grow with N.
 *
 * A range that is not a multiple of the unit ends with one unit moved back
 * (or forward) to lie inside the tensor: rows outside [row_begin, row_end)
 * are read but never written. A 16-bit tensor with fewer rows than one
 * unit (B = 3 of a decode step) is one unit from row 0: its lanes past B
 * read the next column's elements (never stored), and the last columns,
 * where such a read would pass the tensor's last element, are read through
 * a zeroed copy of their B elements. Measured at N = 4096 bfloat16 against
 * rowops_cpu_strided, which walks each row at stride S: B = 6 32 us
 * against 58, B = 10 47-55 against 71, B = 3 28-29 against 30-46. A
 * float32 tensor under one unit (8 rows) still goes to rowops_cpu_strided:
 * B = 3 took 27-36 us as a unit against 16 strided. */
#define ROWOPS_TRANSPOSE_BITS 256
#include "cpu_colmajor.h"
#include "cpu_colmajor_rows.h"
#include "cpu_colmajor_transpose.h"

#include <immintrin.h>
#include <math.h>
#include <string.h>

/* Rows per tile: one tile column (R * element size) is at most
 * SEGMENT_BYTES of contiguous input, read whole and prefetched
 * PREFETCH_COLS columns ahead (short segments waste DRAM bandwidth). */
#ifndef SEGMENT_BYTES
#define SEGMENT_BYTES 512
#endif
#define MAX_TILE_ROWS (SEGMENT_BYTES / 2)
#define MAX_UNITS (SEGMENT_BYTES / 32)
#ifndef PREFETCH_BYTES
#define PREFETCH_BYTES 4096
#endif
#ifndef PREFETCH_COLS
#define PREFETCH_COLS 8
#endif
#ifndef PREFETCH_HINT
#define PREFETCH_HINT _MM_HINT_T2
#endif
/* Calls with at least this many bytes per tensor stream out's whole lines
 * too. */
#ifndef STREAM_MIN_BYTES
#define STREAM_MIN_BYTES (8 << 20)
#endif
/* Column blocks summed into one partial sum before it joins the total. */
#define CHUNK_BLOCKS 16

typedef struct cm_ctx {
    const rowops_call *c;
    const char *x, *r; /* element (0, 0); r is NULL unless fused */
    int64_t s;         /* column stride of x and residual, elements */
    int64_t n;
    int fused;
    const void *w; /* NULL unless fused */
    int w_f32;
    float eps;
    int head; /* columns of the first block (to h's line), -1: none */
    /* columns from safe_cols on are read through a copy of their first
     * tail_bytes (a unit wider than the tensor's rows: B < unit) */
    int64_t safe_cols;
    int tail_bytes;
    int nt_h;  /* stream h's whole lines */
    int nt_o;  /* stream out's whole lines */
    int w_nan; /* a float32 weight holds a NaN (bfloat16 rounding) */
} cm_ctx;

/* ---- transposes --------------------------------------------------------- */

/* 8x8 float32: v[c] is column c (lane = row) on entry, row c on return. */
ALWAYS_INLINE void transpose8_ps(__m256 v[8])
{
    const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]);
    const __m256 t1 = _mm256_unpackhi_ps(v[0], v[1]);
    const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]);
    const __m256 t3 = _mm256_unpackhi_ps(v[2], v[3]);
    const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]);
    const __m256 t5 = _mm256_unpackhi_ps(v[4], v[5]);
    const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]);
    const __m256 t7 = _mm256_unpackhi_ps(v[6], v[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    v[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    v[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    v[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    v[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    v[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    v[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    v[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    v[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* ---- pass 1 ------------------------------------------------------------- */

/* One column of a 16-row unit at element offset off: h (row order) and its
 * floats in lo/hi (r is read only when fused). */
ALWAYS_INLINE __m256i col_16(const uint16_t *x, const uint16_t *r, int64_t off,
                             __m256 *lo, __m256 *hi, int fused, int bf)
{
    x += off;
    load16(x, lo, hi, bf);
    if (!fused)
        return _mm256_loadu_si256((const __m256i *)x);
    __m256 rlo, rhi;
    load16(r + off, &rlo, &rhi, bf);
    *lo = _mm256_add_ps(*lo, rlo);
    *hi = _mm256_add_ps(*hi, rhi);
    if (bf) {
        const __m256i a = bf16_round(*lo), b = bf16_round(*hi);
        *lo = bf16_hi_only(a);
        *hi = bf16_hi_only(b);
        return bf16_pack(a, b);
    }
    const __m128i a = _mm256_cvtps_ph(*lo, _MM_FROUND_TO_NEAREST_INT);
    const __m128i b = _mm256_cvtps_ph(*hi, _MM_FROUND_TO_NEAREST_INT);
    *lo = _mm256_cvtph_ps(a);
    *hi = _mm256_cvtph_ps(b);
    return combine128(a, b);
}

/* One row's block (line[0..1], nq columns of es bytes) to p: a whole line
 * (streamed when nt: p is then 64-byte aligned) or the first nq columns. */
ALWAYS_INLINE void put_line(char *p, const __m256i line[2], int nq, int cb,
                            int es, int nt)
{
    if (nq == cb && nt) {
        _mm256_stream_si256((__m256i *)p, line[0]);
        _mm256_stream_si256((__m256i *)(p + 32), line[1]);
    } else if (nq == cb) {
        _mm256_storeu_si256((__m256i *)p, line[0]);
        _mm256_storeu_si256((__m256i *)(p + 32), line[1]);
    } else {
        memcpy(p, line, (size_t)nq * (size_t)es);
    }
}

/* Phases B and C for one unit: its staged block (st[q] = column q, row
 * order) transposed into whole lines per row, each row's line then stored
 * at once (rows[i] NULL: not ours). float32: two 8x8 transposes give the
 * two halves of the 8 rows' lines. */
static void emit_f32(const __m256i *st, char **rows, int64_t off, int nq,
                     int nt)
{
    __m256i line[8][2];
    for (int g = 0; g * 8 < nq; ++g) {
        __m256 v[8];
        for (int q = 0; q < 8; ++q)
            v[q] = _mm256_castsi256_ps(st[g * 8 + q]);
        transpose8_ps(v);
        for (int q = 0; q < 8; ++q)
            line[q][g] = _mm256_castps_si256(v[q]);
    }
    for (int q = 0; q < 8; ++q)
        if (rows[q])
            put_line(rows[q] + off, line[q], nq, 16, 4, nt);
}

/* 16-bit: per 8 rows (half h of the unit) and 16 columns (c), columns q
 * and q + 8 share a register (one per 128-bit lane), so the in-lane
 * transpose (cpu_colmajor_transpose.h) leaves 16 consecutive columns of one
 * row per register. */
static void emit_16(const __m256i *st, char **rows, int64_t off, int nq, int nt)
{
    for (int h = 0; h < 2; ++h) {
        __m256i line[8][2];
        for (int c = 0; c * 16 < nq; ++c) {
            __m256i v[8];
            for (int q = 0; q < 8; ++q) {
                const __m128i *a = (const __m128i *)&st[c * 16 + q] + h;
                const __m128i *b = (const __m128i *)&st[c * 16 + 8 + q] + h;
                v[q] = combine128(_mm_load_si128(a), _mm_load_si128(b));
            }
            transpose8_epi16_lanes(v);
            for (int q = 0; q < 8; ++q)
                line[q][c] = v[q];
        }
        for (int q = 0; q < 8; ++q)
            if (rows[h * 8 + q])
                put_line(rows[h * 8 + q] + off, line[q], nq, 32, 2, nt);
    }
}

/* Pass 1 over the tile rows t0 .. t0 + rows - 1: h to the dst rows (NULL:
 * not ours), sums[i] = the sum of h^2 of row t0 + i. Column blocks are one
 * line of dst per row; the first block has head columns (dst's rows all
 * share one alignment when head >= 0 is given, else blocks start at 0). */
ALWAYS_INLINE void pass1(const cm_ctx *k, int64_t t0, int rows, char **dst,
                         float *sums, int fused, int dt)
{
    const int is16 = dt != ROWOPS_F32, bf = dt == ROWOPS_BF16;
    const int es = is16 ? 2 : 4, unit = is16 ? 16 : 8;
    const int nu = rows / unit, nacc = is16 ? 2 * nu : nu;
    const int cb = LINE_BYTES / es;         /* columns per block */
    const int64_t n = k->n, cs = k->s * es; /* column stride, bytes */
    const int64_t seg = (int64_t)rows * es; /* a column of the tile */
    const char *x = k->x + t0 * es;
    const char *r = fused ? k->r + t0 * es : NULL;
    /* Two staging buffers: block k is staged in one while block k - 1 is
     * transposed and stored from the other, a unit after every few
     * columns, so loads stay in flight through the transposes. (About
     * 40 KiB of stack in all, with the tile's row pointers.) */
    __m256i st[2][MAX_UNITS][LINE_BYTES / 2];
    __m256 chunk[2 * MAX_UNITS];
    __m256d tot[2][2 * MAX_UNITS]; /* lanes 0-3 and 4-7 of each chunk */
    for (int a = 0; a < nacc; ++a) {
        chunk[a] = _mm256_setzero_ps();
        tot[0][a] = tot[1][a] = _mm256_setzero_pd();
    }
    /* columns ahead: PREFETCH_COLS, or PREFETCH_BYTES of the span where
     * columns are short (a decode step's: 8 columns of 10 bfloat16 rows
     * are 160 bytes, far too close for memory's latency) */
    int64_t ahead = PREFETCH_BYTES / cs;
    if (ahead < PREFETCH_COLS)
        ahead = PREFETCH_COLS;
    int64_t j = 0, prev_j = 0;
    int prev_nq = 0, done = nu; /* units of the previous block stored */
#define EMIT_PREV(upto)                                                        \
    for (; done < (upto); ++done) {                                            \
        if (is16)                                                              \
            emit_16(st[(blk + 1) & 1][done], dst + done * 16, prev_j * es,     \
                    prev_nq, k->nt_h);                                         \
        else                                                                   \
            emit_f32(st[(blk + 1) & 1][done], dst + done * 8, prev_j * es,     \
                     prev_nq, k->nt_h);                                        \
    }
    int blk = 0;
    for (; j < n; ++blk) {
        int nq = blk == 0 && k->head > 0 ? k->head : cb;
        if (nq > n - j)
            nq = (int)(n - j);
        __m256i(*sb)[LINE_BYTES / 2] = st[blk & 1];
        /* A partial block's columns past its end are transposed too (never
         * stored): zeroed so they are defined. */
        for (int u = 0; u < nu && nq < cb; ++u)
            for (int q = nq; q < cb; ++q)
                sb[u][q] = _mm256_setzero_si256();
        /* Phase A: whole column segments, column by column. */
        for (int q = 0; q < nq; ++q) {
            const int64_t jq = j + q;
            if (jq + ahead < n) {
                const char *px = x + (jq + ahead) * cs;
                const char *pr = fused ? r + (jq + ahead) * cs : NULL;
                for (int64_t o = 0; o < seg + 63; o += 64) {
                    _mm_prefetch(px + (o < seg ? o : seg - 1), PREFETCH_HINT);
                    if (fused)
                        _mm_prefetch(pr + (o < seg ? o : seg - 1),
                                     PREFETCH_HINT);
                }
            }
            const char *xq = x + jq * cs;
            const char *rq = fused ? r + jq * cs : NULL;
            _Alignas(32) char bx[32], br[32];
            if (jq >= k->safe_cols) {
                memset(bx, 0, sizeof bx);
                memcpy(bx, xq, (size_t)k->tail_bytes);
                xq = bx;
                if (fused) {
                    memset(br, 0, sizeof br);
                    memcpy(br, rq, (size_t)k->tail_bytes);
                    rq = br;
                }
            }
            for (int u = 0; u < nu; ++u) {
                if (is16) {
                    __m256 lo, hi;
                    sb[u][q] =
                        col_16((const uint16_t *)xq, (const uint16_t *)rq,
                               u * 16, &lo, &hi, fused, bf);
                } else {
                    __m256 v = _mm256_loadu_ps((const float *)xq + u * 8);
                    if (fused)
                        v = _mm256_add_ps(
                            v, _mm256_loadu_ps((const float *)rq + u * 8));
                    sb[u][q] = _mm256_castps_si256(v);
                }
            }
            /* Phases B and C of the previous block, spread over this one. */
            EMIT_PREV((q + 1) * nu / nq);
        }
        EMIT_PREV(nu);
        /* The block's squares, per unit, from the staged h: a register
         * sum per unit and block (summed column by column, the sums kept
         * in an array would chain each column to the last one's store). */
        for (int u = 0; u < nu; ++u) {
            __m256 slo = _mm256_setzero_ps(), shi = _mm256_setzero_ps();
            for (int q = 0; q < nq; ++q) {
                if (is16) {
                    __m256 lo, hi;
                    unpack16(sb[u][q], &lo, &hi, bf);
                    slo = _mm256_fmadd_ps(lo, lo, slo);
                    shi = _mm256_fmadd_ps(hi, hi, shi);
                } else {
                    const __m256 v = _mm256_castsi256_ps(sb[u][q]);
                    slo = _mm256_fmadd_ps(v, v, slo);
                }
            }
            if (is16) {
                chunk[2 * u] = _mm256_add_ps(chunk[2 * u], slo);
                chunk[2 * u + 1] = _mm256_add_ps(chunk[2 * u + 1], shi);
            } else {
                chunk[u] = _mm256_add_ps(chunk[u], slo);
            }
        }
        prev_j = j;
        prev_nq = nq;
        done = 0;
        j += nq;
        if ((blk + 1) % CHUNK_BLOCKS == 0 || j >= n)
            for (int a = 0; a < nacc; ++a) {
                tot[0][a] = _mm256_add_pd(
                    tot[0][a],
                    _mm256_cvtps_pd(_mm256_castps256_ps128(chunk[a])));
                tot[1][a] = _mm256_add_pd(
                    tot[1][a],
                    _mm256_cvtps_pd(_mm256_extractf128_ps(chunk[a], 1)));
                chunk[a] = _mm256_setzero_ps();
            }
    }
    EMIT_PREV(nu); /* the last block (blk - 1) */
#undef EMIT_PREV
    /* the totals in float (a sum beyond its range: the contract's Inf) */
    __m256 totf[2 * MAX_UNITS];
    for (int a = 0; a < nacc; ++a)
        totf[a] = _mm256_set_m128(_mm256_cvtpd_ps(tot[1][a]),
                                  _mm256_cvtpd_ps(tot[0][a]));
    for (int u = 0; u < nu; ++u) {
        if (is16) {
            __m256 a, b;
            layout16(totf[2 * u], totf[2 * u + 1], &a, &b, bf);
            _mm256_storeu_ps(sums + u * 16, a);
            _mm256_storeu_ps(sums + u * 16 + 8, b);
        } else {
            _mm256_storeu_ps(sums + u * 8, totf[u]);
        }
    }
}

/* ---- tiles -------------------------------------------------------------- */

/* Row pointers of an output for rows t0 .. t0 + rows - 1; NULL outside
 * [wlo, whi). */
static void row_ptrs(const rowops_tensor *t, int64_t t0, int rows, int64_t wlo,
                     int64_t whi, char **p)
{
    for (int i = 0; i < rows; ++i) {
        const int64_t row = t0 + i;
        p[i] = row >= wlo && row < whi ? rowops_tensor_row_ptr(t, row) : NULL;
    }
}

ALWAYS_INLINE void tile(const cm_ctx *k, int64_t t0, int rows, int64_t wlo,
                        int64_t whi, int dt)
{
    const rowops_call *c = k->c;
    char *op[MAX_TILE_ROWS], *hp[MAX_TILE_ROWS];
    float sums[MAX_TILE_ROWS];
    row_ptrs(&c->out, t0, rows, wlo, whi, op);
    if (k->fused)
        row_ptrs(&c->residual_out, t0, rows, wlo, whi, hp);
    /* h goes to residual_out (fused) or is staged in out itself */
    if (k->fused)
        pass1(k, t0, rows, hp, sums, 1, dt);
    else
        pass1(k, t0, rows, op, sums, 0, dt);
    for (int i = 0; i < rows; ++i) {
        if (!op[i])
            continue;
        colmajor_row_out(k->fused ? hp[i] : op[i], k->w, k->w_f32, op[i], k->n,
                         sums[i], k->eps,
                         rowops_tensor_index_ptr(&c->rstd, t0 + i), dt, k->nt_o,
                         k->w_nan);
    }
}

static void tile_f32(const cm_ctx *k, int64_t t0, int rows, int64_t wlo,
                     int64_t whi)
{
    tile(k, t0, rows, wlo, whi, ROWOPS_F32);
}

static void tile_f16(const cm_ctx *k, int64_t t0, int rows, int64_t wlo,
                     int64_t whi)
{
    tile(k, t0, rows, wlo, whi, ROWOPS_F16);
}

static void tile_bf16(const cm_ctx *k, int64_t t0, int rows, int64_t wlo,
                      int64_t whi)
{
    tile(k, t0, rows, wlo, whi, ROWOPS_BF16);
}

/* Whether every row of t starts at the same offset within a 64-byte line
 * (element-aligned): then column blocks can follow t's lines. */
static int rows_share_alignment(const rowops_tensor *t, int64_t es)
{
    return (uintptr_t)t->data % (uintptr_t)es == 0 &&
           (t->rank < 2 || (t->strides[0] * es) % LINE_BYTES == 0);
}

void rowops_cpu_colmajor_avx2(const rowops_call *c, int64_t row_begin,
                              int64_t row_end)
{
    if (row_begin >= row_end)
        return;
    const rowops_dtype dt = c->x.dtype;
    const int unit = dt == ROWOPS_F32 ? 8 : 16;
    const int64_t B = c->x.sizes[0];
    if (B < unit && dt == ROWOPS_F32) { /* see the top */
        rowops_cpu_strided(c, row_begin, row_end);
        return;
    }
    const int64_t es = (int64_t)rowops_dtype_size(dt);
    cm_ctx k;
    k.c = c;
    k.fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    k.x = c->x.data;
    k.r = k.fused ? c->residual.data : NULL;
    k.s = c->x.strides[1];
    k.n = c->x.sizes[1];
    k.w = k.fused ? c->weight.data : NULL;
    k.w_f32 = k.fused && c->weight.dtype == ROWOPS_F32;
    k.eps = (float)c->eps;
    /* B < unit: a unit's read at column j reaches element j S + unit - 1,
     * past the last one ((N - 1) S + B - 1) from column N - ceil((unit -
     * B) / S) on */
    k.safe_cols = k.n;
    k.tail_bytes = (int)(B * es);
    if (B < unit) {
        const int64_t tail = (unit - B + k.s - 1) / k.s;
        k.safe_cols = k.n > tail ? k.n - tail : 0;
    }
    k.w_nan = k.w_f32 && dt == ROWOPS_BF16 &&
              colmajor_weight_nan((const float *)k.w, k.n);
    /* h goes to residual_out (fused) or out: column blocks follow its
     * lines when its rows share an alignment, and are streamed (no read
     * for ownership, no cache conflicts between rows). */
    const rowops_tensor *ht = k.fused ? &c->residual_out : &c->out;
    const int big = B * k.n * es >= STREAM_MIN_BYTES;
    k.head = -1;
    k.nt_h = 0;
    if (rows_share_alignment(ht, es)) {
        k.head = (int)to_line(ht->data, (int)es, k.n);
        k.nt_h = 1;
    }
    k.nt_o = big && (uintptr_t)c->out.data % (uintptr_t)es == 0;
    void (*run)(const cm_ctx *, int64_t, int, int64_t, int64_t) =
        dt == ROWOPS_F16    ? tile_f16
        : dt == ROWOPS_BF16 ? tile_bf16
                            : tile_f32;

    /* Tile rows: a column segment of SEGMENT_BYTES (h is read back from
     * memory, streamed). */
    int64_t fit = SEGMENT_BYTES / es;
    fit = fit / unit * unit;
    if (fit < unit)
        fit = unit;
    const int max_rows = (int)fit;

    int64_t b = row_begin;
    while (b < row_end) {
        const int64_t left = row_end - b;
        if (left >= unit) {
            const int rows =
                left >= max_rows ? max_rows : (int)(left / unit * unit);
            run(&k, b, rows, b, b + rows);
            b += rows;
        } else {
            /* Fewer rows than a unit: a unit inside the tensor covering
             * them, written only for [b, row_end). */
            const int64_t t0 = B < unit ? 0 : b < B - unit ? b : B - unit;
            run(&k, t0, unit, b, row_end);
            b = row_end;
        }
    }
    if (k.nt_h || k.nt_o)
        _mm_sfence(); /* streamed lines visible before the caller goes on */
}
