/* The column-major CPU kernel in 512-bit vectors (AVX-512 F + BW): rows of
 * x with unit stride, element (b, j) at x + b + j * S (x = t.T of a
 * contiguous t). See cpu_colmajor.h for the preconditions.
 *
 * Why another form of the wide-tile kernel (cpu_colmajor_avx2.c): that one
 * reads a tile of rows (32 bfloat16 rows at N = 4096) down all N columns,
 * 64 bytes every S elements, and such reads ran at about 10 GB/s on one
 * core whatever the prefetch (docs/history.md). Here a tile is every row of
 * the caller's range (up to MAX_TILE_ROWS, and h's tile within TILE_H_BYTES),
 * so each column's segment is the whole range and a block of columns is one run
 * of memory when S = B: pass 1 reads x and the residual along memory, block
 * after block. Per block (one 64-byte line of output per row: 32 16-bit or 16
 * float32 columns) and unit (32 16-bit or 16 float32 rows, a masked load
 * per column, so a range of any size reads nothing outside it):
 *   h = x + residual, rounded to the dtype (x itself for rms_norm_rows);
 *   its squares summed in float lanes (lane = row);
 *   the block transposed in registers (8 x 8 within each 128-bit lane,
 *   then 4 x 4 of the lanes) and each row's line stored to h's
 *   destination (residual_out, or out for rms_norm_rows), streamed where
 *   it is a whole aligned line.
 * Pass 2 is the wide-tile kernel's row pass (cpu_colmajor_rows.h): out =
 * h * rstd (* w) along each row, h read back.
 *
 * Why h is streamed: each block stores one line to each of the tile's
 * rows, N * size bytes apart, and no prefetcher follows such stores, so
 * with h's destination out of the cache (as in a model, where the weights
 * between two norms stream through the LLC) every ordinary store waited
 * for its line to be read first; streamed, the fused op ran 1.0-2.2x as
 * fast at B = 18-8192 (cold, docs/history.md; one thread float32 B =
 * 1215 0.87x), though 0.46-0.81x as fast at B = 18-405 where h's
 * destination is already in the cache (a loop over the same buffers).
 * rms_norm_rows stages h in out, which pass 2 then scales in place: streamed,
 * that leaves no dirty line for out's own streaming stores to write twice.
 *
 * Prefetch: pass 1's loads are asked for ahead of time, in one of two ways.
 * Far: the next block's same load, into L1; a block ahead is a whole sweep
 * over the tile's units ahead, and the stream prefetchers, which cannot
 * follow 64 runs at once (32 columns of x and of the residual), leave the
 * rest to it (without it the kernel ran at half the speed). Near, in 16
 * bits where the column stride is a multiple of 1 KiB
 * (colmajor_stride_aliases): a block's 32 columns then fall in at most 4 of
 * L1's 64 sets (one at a multiple of 4 KiB, as at B = 2048, 4096, 8192), so
 * the far prefetch's lines left their set before their loads came
 * (bfloat16 at B = 2048 ran at 0.37-0.61 of the contiguous call where B =
 * 2000 ran at 0.52-0.77). There each load asks for the same column
 * PREFETCH_NEAR_UNITS units on in the order the loads run (on into the next
 * block past the tile's last unit: other sets than those in use), into L2:
 * x0.71-0.95 the time at strides of 1-16 KiB (cold, paired; in the cache,
 * level). float32 keeps the far form: near, the fused op took x0.93-0.97
 * but rms_norm_rows at 8 KiB x1.07-1.26 (docs/history.md).
 *
 * Sums: a block's squares in a float partial per lane, CHUNK_BLOCKS blocks
 * into a chunk, chunks into the total in double, as the wide-tile kernel
 * adds them (the same order, so the two give the same bits). */
#define ROWOPS_VEC16_BITS 512
#define ROWOPS_TRANSPOSE_BITS 512
#include "cpu_colmajor.h"
#include "cpu_colmajor_rows.h"
#include "cpu_colmajor_transpose.h"
#include "cpu_vec16.h"

/* Rows of one tile at most: the units' sums live on the stack. */
#define MAX_TILE_ROWS 1024
#define MAX_UNITS (MAX_TILE_ROWS / 16)
/* h of one tile at most this many bytes: the longer the tile, the longer
 * the runs of each column pass 1 reads (8 MiB against 4: B = 925-8192 up
 * to 1.2x faster on one thread, level on two). */
#ifndef TILE_H_BYTES
#define TILE_H_BYTES (8 << 20)
#endif
/* Calls with at least this many bytes per tensor stream out's lines (as
 * the wide-tile kernel). */
#ifndef STREAM_MIN_BYTES
#define STREAM_MIN_BYTES (8 << 20)
#endif
#define CHUNK_BLOCKS 16
/* The near prefetch's distance in units (measured: 2 and 4 alike). */
#define PREFETCH_NEAR_UNITS 2

/* Whether the columns of a block share few L1 sets: a column stride that
 * is a multiple of 1 KiB puts 32 columns' lines in at most 4 of the 64
 * sets of a 32-48 KiB L1 (4 KiB apart per way, on AMD and Intel cores
 * alike). */
static int colmajor_stride_aliases(int64_t stride_bytes)
{
    return stride_bytes % 1024 == 0;
}

typedef struct tile_ctx {
    const char *x, *r; /* element (0, 0); r is NULL unless fused */
    int64_t cs;        /* column stride of x and residual, bytes */
    int64_t n;
    const rowops_tensor *ht; /* h's destination */
} tile_ctx;

/* One row's line of a block to h: streamed (no read of the line first)
 * where it is whole and 64-byte aligned, masked otherwise. */
ALWAYS_INLINE void store_line(char *p, __m512i v, __mmask32 cols16,
                              __mmask16 cols32, int whole, int is16)
{
    if (whole && ((uintptr_t)p & 63) == 0)
        _mm512_stream_si512((__m512i *)p, v);
    else if (is16)
        _mm512_mask_storeu_epi16(p, cols16, v);
    else
        _mm512_mask_storeu_epi32(p, cols32, v);
}

/* ---- 16-bit elements ---------------------------------------------------- */

/* 32 16-bit elements as floats: float16 in order (lo = 0..15, hi =
 * 16..31); bfloat16 interleaved with zeros per 128-bit lane (cpu_vec16.h:
 * lo = {8k..8k+3}, hi = {8k+4..8k+7} of each lane k), one instruction a
 * half, which packing (packus) undoes. */
ALWAYS_INLINE void unpack32(__m512i v, vec16 *lo, vec16 *hi, int bf)
{
    if (bf) {
        v16_load32_bf16(&v, lo, hi);
    } else {
        *lo = v16_from_f16(_mm512_castsi512_si256(v));
        *hi = v16_from_f16(_mm512_extracti64x4_epi64(v, 1));
    }
}

/* h of one column of a 32-row unit (m: the unit's rows in range), packed
 * in row order, with its floats (the rounded values) in lo/hi in
 * unpack32's order. */
ALWAYS_INLINE __m512i col16(const char *x, const char *r, __mmask32 m,
                            vec16 *lo, vec16 *hi, int bf)
{
    const __m512i xv = _mm512_maskz_loadu_epi16(m, x);
    unpack32(xv, lo, hi, bf);
    if (!r)
        return xv;
    vec16 rlo, rhi;
    unpack32(_mm512_maskz_loadu_epi16(m, r), &rlo, &rhi, bf);
    if (bf) {
        *lo = v16_round_bf16(v16_add(*lo, rlo));
        *hi = v16_round_bf16(v16_add(*hi, rhi));
        return _mm512_packus_epi32(
            _mm512_srli_epi32(_mm512_castps_si512(*lo), 16),
            _mm512_srli_epi32(_mm512_castps_si512(*hi), 16));
    }
    const half16 a = v16_to_f16(v16_add(*lo, rlo));
    const half16 b = v16_to_f16(v16_add(*hi, rhi));
    *lo = v16_from_f16(a);
    *hi = v16_from_f16(b);
    return _mm512_inserti64x4(_mm512_castsi256_si512(a), b, 1);
}

/* 4 x 4 float32 transpose in each 128-bit lane: on return lane L of w[k]
 * is row 4 L + k of the 4 columns. */
ALWAYS_INLINE void transpose4_ps_x4(__m512 *w)
{
    const __m512 t0 = _mm512_unpacklo_ps(w[0], w[1]);
    const __m512 t1 = _mm512_unpackhi_ps(w[0], w[1]);
    const __m512 t2 = _mm512_unpacklo_ps(w[2], w[3]);
    const __m512 t3 = _mm512_unpackhi_ps(w[2], w[3]);
    w[0] = _mm512_shuffle_ps(t0, t2, 0x44);
    w[1] = _mm512_shuffle_ps(t0, t2, 0xee);
    w[2] = _mm512_shuffle_ps(t1, t3, 0x44);
    w[3] = _mm512_shuffle_ps(t1, t3, 0xee);
}

/* The lanes' 4 x 4: a, b, c, d hold column groups 0..3 (lane L: one row);
 * o[L] = lane L of a, b, c, d in order, the whole line of that row. */
ALWAYS_INLINE void transpose_lanes(__m512i a, __m512i b, __m512i c, __m512i d,
                                   __m512i o[4])
{
    const __m512i ab0 = _mm512_shuffle_i64x2(a, b, 0x44);
    const __m512i ab1 = _mm512_shuffle_i64x2(a, b, 0xee);
    const __m512i cd0 = _mm512_shuffle_i64x2(c, d, 0x44);
    const __m512i cd1 = _mm512_shuffle_i64x2(c, d, 0xee);
    o[0] = _mm512_shuffle_i64x2(ab0, cd0, 0x88);
    o[1] = _mm512_shuffle_i64x2(ab0, cd0, 0xdd);
    o[2] = _mm512_shuffle_i64x2(ab1, cd1, 0x88);
    o[3] = _mm512_shuffle_i64x2(ab1, cd1, 0xdd);
}

/* ---- pass 1 ------------------------------------------------------------- */

/* The lanes' totals: tot[2a], tot[2a + 1] += chunk[a] in double. */
ALWAYS_INLINE void add_chunks(__m512 *chunk, __m512d *tot, int nacc)
{
    for (int a = 0; a < nacc; ++a) {
        tot[2 * a] = _mm512_add_pd(
            tot[2 * a], _mm512_cvtps_pd(_mm512_castps512_ps256(chunk[a])));
        tot[2 * a + 1] = _mm512_add_pd(
            tot[2 * a + 1],
            _mm512_cvtps_pd(_mm256_castpd_ps(
                _mm512_extractf64x4_pd(_mm512_castps_pd(chunk[a]), 1))));
        chunk[a] = _mm512_setzero_ps();
    }
}

/* Pass 1 over rows t0 .. t0 + rows - 1: h to their destination rows,
 * sums[i] = the sum of h^2 of row t0 + i. */
ALWAYS_INLINE void pass1(const tile_ctx *k, int64_t t0, int rows, float *sums,
                         int dt, int near)
{
    const int is16 = dt != ROWOPS_F32, bf = dt == ROWOPS_BF16;
    const int es = is16 ? 2 : 4, unit = is16 ? 32 : 16, cb = unit;
    const int nu = (rows + unit - 1) / unit, nacc = is16 ? 2 * nu : nu;
    const int64_t n = k->n, cs = k->cs;
    const char *x = k->x + t0 * es;
    const char *r = k->r ? k->r + t0 * es : NULL;
    /* far: the next block's same load, a sweep over the units ahead */
    const int64_t ahead = (int64_t)cb * cs;
#define PREFETCH(p)                                                            \
    do {                                                                       \
        if (near)                                                              \
            _mm_prefetch((p) + near_off, _MM_HINT_T1);                         \
        else                                                                   \
            _mm_prefetch((p) + ahead, _MM_HINT_T0);                            \
    } while (0)
    const int64_t hs = k->ht->strides[0] * es; /* h's row stride, bytes */
    __m512 chunk[MAX_UNITS];
    __m512d tot[2 * MAX_UNITS];
    for (int a = 0; a < nacc; ++a) {
        chunk[a] = _mm512_setzero_ps();
        tot[2 * a] = tot[2 * a + 1] = _mm512_setzero_pd();
    }
    for (int64_t j = 0, blk = 0; j < n; j += cb, ++blk) {
        const int nq = n - j < cb ? (int)(n - j) : cb;
        const __mmask32 cols = nq == 32 ? 0xffffffffu : (1u << nq) - 1u;
        for (int u = 0; u < nu; ++u) {
            const int left = rows - u * unit, mine = left < unit ? left : unit;
            const __mmask32 m = mine == 32 ? 0xffffffffu : (1u << mine) - 1u;
            char *dst =
                (char *)rowops_tensor_row_ptr(k->ht, t0 + u * unit) + j * es;
            const int64_t uoff = (int64_t)u * 64;
            /* near: the unit PREFETCH_NEAR_UNITS on, in the next block
             * past the tile's last unit */
            int64_t near_off = 0;
            if (near) {
                int64_t near_blk = 0, near_u = u + PREFETCH_NEAR_UNITS;
                while (near_u >= nu) {
                    near_u -= nu;
                    near_blk += cb;
                }
                near_off = near_blk * cs + (near_u - u) * 64;
            }
            if (is16) {
                __m512i v[32];
                __m512 slo = _mm512_setzero_ps(), shi = _mm512_setzero_ps();
                for (int q = 0; q < 32; ++q) {
                    if (q >= nq) {
                        v[q] = _mm512_setzero_si512();
                        continue;
                    }
                    const int64_t o = (j + q) * cs + uoff;
                    PREFETCH(x + o);
                    if (r)
                        PREFETCH(r + o);
                    vec16 lo, hi;
                    v[q] = col16(x + o, r ? r + o : NULL, m, &lo, &hi, bf);
                    slo = _mm512_fmadd_ps(lo, lo, slo);
                    shi = _mm512_fmadd_ps(hi, hi, shi);
                }
                chunk[2 * u] = _mm512_add_ps(chunk[2 * u], slo);
                chunk[2 * u + 1] = _mm512_add_ps(chunk[2 * u + 1], shi);
                for (int g = 0; g < 4; ++g)
                    transpose8_epi16_lanes(v + 8 * g);
                for (int q = 0; q < 8; ++q) {
                    __m512i line[4];
                    transpose_lanes(v[q], v[8 + q], v[16 + q], v[24 + q], line);
                    for (int l = 0; l < 4; ++l)
                        if (8 * l + q < mine)
                            store_line(dst + (8 * l + q) * hs, line[l], cols, 0,
                                       nq == 32, 1);
                }
            } else {
                __m512 v[16];
                __m512 s = _mm512_setzero_ps();
                const __mmask16 m16 = (__mmask16)m;
                for (int q = 0; q < 16; ++q) {
                    if (q >= nq) {
                        v[q] = _mm512_setzero_ps();
                        continue;
                    }
                    const int64_t o = (j + q) * cs + uoff;
                    PREFETCH(x + o);
                    __m512 xv = _mm512_maskz_loadu_ps(m16, x + o);
                    if (r) {
                        PREFETCH(r + o);
                        xv = _mm512_add_ps(xv,
                                           _mm512_maskz_loadu_ps(m16, r + o));
                    }
                    v[q] = xv;
                    s = _mm512_fmadd_ps(xv, xv, s);
                }
                chunk[u] = _mm512_add_ps(chunk[u], s);
                for (int g = 0; g < 4; ++g)
                    transpose4_ps_x4(v + 4 * g);
                for (int q = 0; q < 4; ++q) {
                    __m512i line[4];
                    transpose_lanes(_mm512_castps_si512(v[q]),
                                    _mm512_castps_si512(v[4 + q]),
                                    _mm512_castps_si512(v[8 + q]),
                                    _mm512_castps_si512(v[12 + q]), line);
                    for (int l = 0; l < 4; ++l)
                        if (4 * l + q < mine)
                            store_line(dst + (4 * l + q) * hs, line[l], 0,
                                       (__mmask16)cols, nq == 16, 0);
                }
            }
        }
        if ((blk + 1) % CHUNK_BLOCKS == 0 || j + cb >= n)
            add_chunks(chunk, tot, nacc);
    }
    /* the totals in float (a sum beyond its range: the contract's Inf),
     * bfloat16's lanes back in row order */
    for (int a = 0; a < nacc; ++a) {
        _Alignas(32) float t[16];
        _mm256_store_ps(t, _mm512_cvtpd_ps(tot[2 * a]));
        _mm256_store_ps(t + 8, _mm512_cvtpd_ps(tot[2 * a + 1]));
        for (int i = 0; i < 16; ++i) {
            /* bfloat16: chunk 2u holds rows 8k + (i % 4) of unit u, chunk
             * 2u + 1 rows 8k + 4 + (i % 4), k = i / 4 */
            const int row =
                bf ? (a / 2) * 32 + 8 * (i / 4) + 4 * (a % 2) + i % 4
                   : a * 16 + i;
            if (row < rows)
                sums[row] = t[i];
        }
    }
}

#undef PREFETCH

/* One instance per dtype and prefetch form, each its own function (in one
 * function, the two forms of float32 left its column loop rolled: x1.05-1.3
 * the time). */
static void pass1_f32(const tile_ctx *k, int64_t t0, int rows, float *sums)
{
    pass1(k, t0, rows, sums, ROWOPS_F32, 0);
}

static void pass1_f16(const tile_ctx *k, int64_t t0, int rows, float *sums)
{
    pass1(k, t0, rows, sums, ROWOPS_F16, 0);
}

static void pass1_bf16(const tile_ctx *k, int64_t t0, int rows, float *sums)
{
    pass1(k, t0, rows, sums, ROWOPS_BF16, 0);
}

static void pass1_f16_near(const tile_ctx *k, int64_t t0, int rows, float *sums)
{
    pass1(k, t0, rows, sums, ROWOPS_F16, 1);
}

static void pass1_bf16_near(const tile_ctx *k, int64_t t0, int rows,
                            float *sums)
{
    pass1(k, t0, rows, sums, ROWOPS_BF16, 1);
}

void rowops_cpu_colmajor_avx512(const rowops_call *c, int64_t row_begin,
                                int64_t row_end)
{
    if (row_begin >= row_end)
        return;
    const rowops_dtype dt = c->x.dtype;
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const int64_t es = (int64_t)rowops_dtype_size(dt);
    const int64_t B = c->x.sizes[0];
    tile_ctx k;
    k.x = c->x.data;
    k.r = fused ? c->residual.data : NULL;
    k.cs = c->x.strides[1] * es;
    k.n = c->x.sizes[1];
    /* h goes to residual_out (fused) or is staged in out itself */
    k.ht = fused ? &c->residual_out : &c->out;
    const void *w = fused ? c->weight.data : NULL;
    const int w_f32 = fused && c->weight.dtype == ROWOPS_F32;
    const int w_nan = w_f32 && dt == ROWOPS_BF16 &&
                      colmajor_weight_nan((const float *)w, k.n);
    /* out streamed for large calls; for rms_norm_rows (h scaled in place)
     * only where pass 1 streamed h: streaming over lines it left dirty in
     * the cache would write each to memory twice (the dirty copy, then the
     * stream) */
    const int h_lines =
        (uintptr_t)k.ht->data % 64 == 0 && (k.ht->strides[0] * es) % 64 == 0;
    const int nt_o = (fused || h_lines) && B * k.n * es >= STREAM_MIN_BYTES &&
                     (uintptr_t)c->out.data % (uintptr_t)es == 0;
    /* the near prefetch in 16 bits only: float32 ran x1.0-1.3 slower with
     * it at strides of 1-16 KiB */
    const int near = colmajor_stride_aliases(k.cs);
    void (*pass1_dt)(const tile_ctx *, int64_t, int, float *) =
        dt == ROWOPS_F16    ? (near ? pass1_f16_near : pass1_f16)
        : dt == ROWOPS_BF16 ? (near ? pass1_bf16_near : pass1_bf16)
                            : pass1_f32;
    /* Tile rows: the whole range, within MAX_TILE_ROWS and h's tile within
     * TILE_H_BYTES, whole units where it is cut. */
    const int64_t unit = dt == ROWOPS_F32 ? 16 : 32;
    int64_t max_rows = TILE_H_BYTES / (k.n * es);
    if (max_rows > MAX_TILE_ROWS)
        max_rows = MAX_TILE_ROWS;
    max_rows = max_rows / unit * unit;
    if (max_rows < unit)
        max_rows = unit;
    float sums[MAX_TILE_ROWS];
    for (int64_t t0 = row_begin; t0 < row_end; t0 += max_rows) {
        const int rows =
            (int)(row_end - t0 < max_rows ? row_end - t0 : max_rows);
        pass1_dt(&k, t0, rows, sums);
        for (int i = 0; i < rows; ++i) {
            const int64_t row = t0 + i;
            colmajor_row_out(rowops_tensor_row_ptr(k.ht, row), w, w_f32,
                             rowops_tensor_row_ptr(&c->out, row), k.n, sums[i],
                             (float)c->eps,
                             rowops_tensor_index_ptr(&c->rstd, row), dt, nt_o,
                             w_nan);
        }
    }
    _mm_sfence(); /* streamed lines visible before the caller goes on */
}
