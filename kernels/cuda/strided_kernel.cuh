/* The strided CUDA forward kernel's device code (instantiated and launched
 * by strided.cu; tests/c/test_cuda_emulated.cpp runs it on the CPU): correct
 * for any strides, every dtype and any N (the fast kernel's conditions failed,
 * or N is past its one-pass limit).
 *
 * A block of 256 threads takes tr consecutive rows at a time (32 when some
 * tensor is a transposed view, else 1024 / N rounded, at least 1) and walks
 * them in tiles of tr x (1024 / tr) elements through shared memory. Each
 * tensor's tile is read or written along whichever of its dimensions has
 * unit stride, so a transposed x is read coalesced (32 consecutive rows of
 * a column per warp) while the row-major outputs are written coalesced
 * along their rows. Two passes over the tiles:
 *   pass 1: x (+ residual) -> h (rounded to x's dtype, stored into
 *           residual_out), sum of h^2 per row;
 *   pass 2: h read back from residual_out (x for rms_norm_rows) -> out.
 * Each thread reads back exactly the elements it wrote, and every tile of a
 * row is read before any of that row's out is written, so the in-place op
 * (out = x, residual_out = residual) is safe.
 *
 * Accuracy: per tile a thread adds 4 squares in the accumulation dtype
 * (float32; float64 for float64 x) and folds them into a float64 sum; the
 * group reduction and rstd are float64, rounded once to rstd's dtype. */
#pragma once

#include "common.cuh"

namespace rowops_cuda
{

struct strided_params {
    long long rows, n;
    int ltr; /* log2 of the rows per tile */
    double eps;
    tile_tensor x, r, out, h;
    const void *weight;
    long long weight_stride;
    void *rstd;
    row_index irstd;
};

__device__ __forceinline__ tile_geom make_geom(long long rows, long long n,
                                               int ltr)
{
    tile_geom g;
    g.rows = rows;
    g.n = n;
    g.ltr = ltr;
    g.tr = 1 << ltr;
    g.ltc = ilog2(TILE) - ltr;
    g.tc = TILE >> ltr;
    g.row0 = g.col0 = 0;
    return g;
}

/* v rounded to T and back (the add's one rounding; exact for float64). */
template <typename T, typename Acc>
__device__ __forceinline__ Acc round_to(Acc v)
{
    return to_acc<Acc>(from_acc<T>(v));
}

template <typename T, typename W, typename Acc, bool FUSED>
__device__ __forceinline__ void strided_rows(const strided_params &p)
{
    __shared__ Acc ta[TILE_SMEM], tb[TILE_SMEM];
    __shared__ long long off[4][ROWOPS_CUDA_TILE_MAX_ROWS];
    __shared__ double sums[TILE_THREADS / 32];
    tile_geom g = make_geom(p.rows, p.n, p.ltr);
    const int mine = tile_row_of_thread(g);
    const int per = TILE_THREADS >> g.ltr;
    const W *weight = (const W *)p.weight;

    for (long long row0 = (long long)blockIdx.x * g.tr; row0 < p.rows;
         row0 += (long long)gridDim.x * g.tr) {
        g.row0 = row0;
        __syncthreads(); /* the previous rows' off[] are no longer read */
        if ((int)threadIdx.x < g.tr) {
            long long row = row0 + threadIdx.x;
            row = row < p.rows ? row : p.rows - 1;
            off[0][threadIdx.x] = row_offset(p.x.rows, row);
            off[2][threadIdx.x] = row_offset(p.out.rows, row);
            if (FUSED) {
                off[1][threadIdx.x] = row_offset(p.r.rows, row);
                off[3][threadIdx.x] = row_offset(p.h.rows, row);
            }
        }
        __syncthreads();

        double acc = 0.0;
        for (long long c0 = 0; c0 < p.n; c0 += g.tc) {
            g.col0 = c0;
            tile_load<T, Acc>(p.x, off[0], g, ta);
            if (FUSED)
                tile_load<T, Acc>(p.r, off[1], g, tb);
            __syncthreads();
            Acc part = 0;
#pragma unroll
            for (int m = 0; m < TILE_PER_THREAD; ++m) {
                const int at = mine * (g.tc + 1) + tile_col_of_thread(g, m);
                Acc v = ta[at];
                if (FUSED) {
                    v = round_to<T>(v + tb[at]);
                    ta[at] = v;
                }
                part += v * v;
            }
            acc += (double)part;
            if (FUSED) {
                __syncthreads();
                tile_store<T, Acc>(p.h, off[3], g, ta);
            }
            __syncthreads();
        }
        const double total = group_sum(acc, per, sums);
        const Acc rstd = (Acc)rstd_of(total, p.n, p.eps);
        const long long row = row0 + mine;
        if ((threadIdx.x & (per - 1)) == 0 && row < p.rows)
            ((Acc *)p.rstd)[row_offset(p.irstd, row)] = rstd;

        for (long long c0 = 0; c0 < p.n; c0 += g.tc) {
            g.col0 = c0;
            if (FUSED)
                tile_load<T, Acc>(p.h, off[3], g, ta);
            else
                tile_load<T, Acc>(p.x, off[0], g, ta);
            __syncthreads();
#pragma unroll
            for (int m = 0; m < TILE_PER_THREAD; ++m) {
                const int j = tile_col_of_thread(g, m);
                const int at = mine * (g.tc + 1) + j;
                Acc y = ta[at] * rstd;
                if (FUSED && c0 + j < p.n)
                    y *= to_acc<Acc>(weight[(c0 + j) * p.weight_stride]);
                ta[at] = y;
            }
            __syncthreads();
            tile_store<T, Acc>(p.out, off[2], g, ta);
            __syncthreads();
        }
    }
}

/* The kernel's parameters for a call (host side); ltr is set from the
 * launch (rowops_cuda_tile_launch with strided_rows_fast). */
inline strided_params strided_params_of(const rowops_call *c)
{
    const int lead = c->x.rank - 1;
    strided_params p = {};
    p.rows = rowops_tensor_rows(&c->x);
    p.n = c->x.sizes[lead];
    p.eps = c->eps;
    p.x = make_tile_tensor(&c->x, lead);
    p.out = make_tile_tensor(&c->out, lead);
    p.rstd = c->rstd.data;
    p.irstd = make_index(&c->rstd, lead);
    if (c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        p.r = make_tile_tensor(&c->residual, lead);
        p.h = make_tile_tensor(&c->residual_out, lead);
        p.weight = c->weight.data;
        p.weight_stride = c->weight.strides[0];
    }
    return p;
}

/* Whether an input is read along its rows (a transposed view). */
inline int strided_rows_fast(const strided_params &p)
{
    return p.x.rows_fast || (p.r.data && p.r.rows_fast);
}

} // namespace rowops_cuda
