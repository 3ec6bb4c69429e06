/* The CUDA backward kernels' device code (instantiated and launched by
 * backward.cu; tests/c/test_cuda_emulated.cpp runs it on the CPU): any strides,
 * every dtype.
 *
 * With h = x (rms_norm_rows) or residual_out (fused), r = rstd, n = h * r
 * recomputed and g = grad_out * weight (or grad_out):
 *   grad_h = r * g - n * (r * sum(g * n) + grad_rstd * r^2) / N
 *            + grad_residual_out
 * (the gradient of x and of residual alike), and the weight gradient
 * sum over rows of grad_out * n.
 *
 * The row kernel walks tiles of rows as the strided forward kernel does
 * (common.cuh: each tensor read along its unit-stride dimension):
 *   pass 1: grad_out, h -> sum(g * n) per row; for the fused op the tile's
 *           grad_out * n summed down its rows (in float32, tr <= 32 terms)
 *           and added into this block's own partial row of N float32
 *           (float64 for float64) accumulators: stage 1, no atomics;
 *   pass 2: grad_out, h (, grad_residual_out) -> grad_h.
 * Stage 2 (rowops_dweight_*) adds the partial rows in float64, one thread
 * per column in a fixed order, and rounds once to the weight's dtype: the
 * weight gradient is bitwise repeatable for a given device (the grid is a
 * function of the SM count).
 *
 * Accuracy: as the forward's tile kernel, per tile 4 products per thread
 * in the accumulation dtype, everything after that float64 until the one
 * rounding of the coefficient. */
#pragma once

#include "common.cuh"

namespace rowops_cuda
{

struct backward_params {
    long long rows, n;
    int ltr;
    tile_tensor go, gro, h, gh; /* gro.data is null when absent */
    const void *weight;
    long long weight_stride;
    const void *rstd, *grstd; /* grstd null when absent */
    row_index irstd, igrstd;
    void *partial; /* fused: gridDim.x rows of n accumulators */
};

template <typename T, typename W, typename Acc, bool FUSED>
__device__ __forceinline__ void backward_rows(const backward_params &p)
{
    __shared__ Acc ta[TILE_SMEM], tb[TILE_SMEM], tg[TILE_SMEM];
    __shared__ long long off[4][ROWOPS_CUDA_TILE_MAX_ROWS];
    __shared__ Acc rs[ROWOPS_CUDA_TILE_MAX_ROWS], gs[ROWOPS_CUDA_TILE_MAX_ROWS];
    __shared__ double sums[TILE_THREADS / 32];
    tile_geom g;
    g.rows = p.rows;
    g.n = p.n;
    g.ltr = p.ltr;
    g.tr = 1 << p.ltr;
    g.ltc = ilog2(TILE) - p.ltr;
    g.tc = TILE >> p.ltr;
    g.row0 = g.col0 = 0;
    const int mine = tile_row_of_thread(g);
    const int per = TILE_THREADS >> g.ltr;
    const W *weight = (const W *)p.weight;
    const bool has_gro = FUSED && p.gro.data != nullptr;
    Acc *partial =
        FUSED ? (Acc *)p.partial + (long long)blockIdx.x * p.n : nullptr;
    bool first = true;

    for (long long row0 = (long long)blockIdx.x * g.tr; row0 < p.rows;
         row0 += (long long)gridDim.x * g.tr) {
        g.row0 = row0;
        __syncthreads(); /* off[], rs[], gs[] of the previous rows are done */
        if ((int)threadIdx.x < g.tr) {
            const long long row = row0 + threadIdx.x;
            const bool ok = row < p.rows;
            const long long rr = ok ? row : p.rows - 1;
            off[0][threadIdx.x] = row_offset(p.go.rows, rr);
            off[1][threadIdx.x] = has_gro ? row_offset(p.gro.rows, rr) : 0;
            off[2][threadIdx.x] = row_offset(p.h.rows, rr);
            off[3][threadIdx.x] = row_offset(p.gh.rows, rr);
            rs[threadIdx.x] =
                ok ? ((const Acc *)p.rstd)[row_offset(p.irstd, rr)] : (Acc)0;
            gs[threadIdx.x] =
                ok && p.grstd ? ((const Acc *)p.grstd)[row_offset(p.igrstd, rr)]
                              : (Acc)0;
        }
        __syncthreads();
        const Acc r = rs[mine];

        double acc = 0.0;
        for (long long c0 = 0; c0 < p.n; c0 += g.tc) {
            g.col0 = c0;
            tile_load<T, Acc>(p.go, off[0], g, ta);
            tile_load<T, Acc>(p.h, off[2], g, tb);
            __syncthreads();
            Acc part = 0;
#pragma unroll
            for (int m = 0; m < TILE_PER_THREAD; ++m) {
                const int j = tile_col_of_thread(g, m);
                const int at = mine * (g.tc + 1) + j;
                const Acc nv = tb[at] * r;
                Acc gw = ta[at];
                if (FUSED && c0 + j < p.n)
                    gw *= to_acc<Acc>(weight[(c0 + j) * p.weight_stride]);
                part += gw * nv;
                if (FUSED)
                    tb[at] = ta[at] * nv; /* grad_out * n */
            }
            acc += (double)part;
            if (FUSED) {
                __syncthreads();
                for (int j = threadIdx.x; j < g.tc; j += TILE_THREADS) {
                    if (c0 + j >= p.n)
                        break;
                    Acc s = 0;
                    for (int i = 0; i < g.tr; ++i)
                        s += tb[i * (g.tc + 1) + j];
                    partial[c0 + j] = first ? s : partial[c0 + j] + s;
                }
            }
            __syncthreads();
        }
        const double dot = group_sum(acc, per, sums);
        const Acc k = (Acc)(((double)r * dot + (double)gs[mine] * r * r) /
                            (double)(p.n > 0 ? p.n : 1));

        for (long long c0 = 0; c0 < p.n; c0 += g.tc) {
            g.col0 = c0;
            tile_load<T, Acc>(p.go, off[0], g, ta);
            tile_load<T, Acc>(p.h, off[2], g, tb);
            if (has_gro)
                tile_load<T, Acc>(p.gro, off[1], g, tg);
            __syncthreads();
#pragma unroll
            for (int m = 0; m < TILE_PER_THREAD; ++m) {
                const int j = tile_col_of_thread(g, m);
                const int at = mine * (g.tc + 1) + j;
                Acc gw = ta[at];
                if (FUSED && c0 + j < p.n)
                    gw *= to_acc<Acc>(weight[(c0 + j) * p.weight_stride]);
                Acc v = r * gw - tb[at] * r * k;
                if (has_gro)
                    v += tg[at];
                ta[at] = v;
            }
            __syncthreads();
            tile_store<T, Acc>(p.gh, off[3], g, ta);
            __syncthreads();
        }
        first = false;
    }
}

/* Stage 2: out[j] = sum over parts of partial[part][j], in float64. */
template <typename W> __device__ __forceinline__ W from_double(double v);
template <> __device__ __forceinline__ float from_double<float>(double v)
{
    return (float)v;
}
template <> __device__ __forceinline__ double from_double<double>(double v)
{
    return v;
}
template <> __device__ __forceinline__ __half from_double<__half>(double v)
{
    return __double2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_double<__nv_bfloat16>(double v)
{
    return __double2bfloat16(v);
}

template <typename Acc, typename W>
__device__ __forceinline__ void dweight_columns(const Acc *partial, int parts,
                                                long long n, W *out,
                                                long long out_stride)
{
    for (long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x; j < n;
         j += (long long)gridDim.x * blockDim.x) {
        double s = 0.0;
        for (int q = 0; q < parts; ++q)
            s += (double)partial[(long long)q * n + j];
        out[j * out_stride] = from_double<W>(s);
    }
}

/* The row kernel's parameters for a call (host side); ltr is set from
 * the launch (rowops_cuda_tile_launch with backward_rows_fast), partial by
 * the caller. */
inline backward_params backward_params_of(const rowops_backward_call *c)
{
    const int lead = c->h.rank - 1;
    backward_params p = {};
    p.rows = rowops_tensor_rows(&c->h);
    p.n = c->h.sizes[lead];
    p.go = make_tile_tensor(&c->grad_out, lead);
    p.h = make_tile_tensor(&c->h, lead);
    p.gh = make_tile_tensor(&c->grad_h, lead);
    p.rstd = c->rstd.data;
    p.irstd = make_index(&c->rstd, lead);
    if (c->grad_rstd.data) {
        p.grstd = c->grad_rstd.data;
        p.igrstd = make_index(&c->grad_rstd, lead);
    }
    if (c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        p.weight = c->weight.data;
        p.weight_stride = c->weight.strides[0];
        if (c->grad_residual_out.data)
            p.gro = make_tile_tensor(&c->grad_residual_out, lead);
    }
    return p;
}

inline int backward_rows_fast(const backward_params &p)
{
    return p.go.rows_fast || p.h.rows_fast || (p.gro.data && p.gro.rows_fast);
}

} // namespace rowops_cuda
