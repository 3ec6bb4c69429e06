/* The fast CUDA forward kernel's device code (instantiated and launched by
 * fast.cu; tests/c/test_cuda_emulated.cpp runs it on the CPU), for calls
 * the eligibility function admits (float32/float16/bfloat16, unit last
 * stride, rows that do not overlap, 1 <= N <= the one-pass limit, sm_80+).
 *
 * One kernel, parametrized by dtype, weight dtype, op and vector width
 * (v elements per access, FlashInfer's gcd rule: rowops_cuda_vector_elems).
 * A block of 512 threads handles 512 / g rows at a time, g threads per row
 * (a power of two: 8 for N = 128 in bfloat16, so 64 rows per block); each
 * thread owns the vectors lane, lane + g, ... of its row, ITEMS vectors
 * (32 bytes, at most 4 vectors) of each tensor per slab. With one slab
 * (N <= 8192 in 16-bit, 4096 in float32, at 16-byte vectors) the row stays
 * in registers, in the input dtype; beyond that (one row per block, up to
 * the one-pass limit of 128 KiB) each slab of h is also staged in shared
 * memory, so either way memory is read once and written once. Every load
 * of a slab (x and residual) is issued before the first add, and every
 * slab of a row before the reduction; the weight is loaded once per block
 * (one slab) as vectors of its own dtype. Rows are a grid-stride loop over
 * persistent blocks (rowops_cuda_fast_launch), with leading dimensions
 * collapsed on the host (usually one multiply).
 *
 * Accuracy: each thread sums at most 16 squares (8 in float32) per slab in
 * float32, the contract's dtype for h^2; the slabs, the group reduction
 * and rstd are float64, rounded once to float32. */
#pragma once

#include "common.cuh"

namespace rowops_cuda
{

constexpr int FAST_THREADS = ROWOPS_CUDA_FAST_THREADS;

struct fast_params {
    long long rows, n;
    int group, slabs;
    double eps;
    const void *x, *residual, *weight;
    void *out, *residual_out;
    float *rstd;
    row_index ix, ir, io, iro, irstd;
};

template <typename T, typename W, bool FUSED, int V>
__device__ __forceinline__ void fast_rows(const fast_params &p)
{
    constexpr int ITEMS = ROWOPS_CUDA_ITEMS((int)sizeof(T), V);
    ROWOPS_DYNAMIC_SMEM(stage_bytes);
    __shared__ double sums[FAST_THREADS / 32];
    T *stage = reinterpret_cast<T *>(stage_bytes);
    const int g = p.group;
    const int lane = threadIdx.x & (g - 1);
    const int slot = threadIdx.x >> (__ffs(g) - 1);
    const long long per_block = FAST_THREADS / g;
    /* 32-bit vector indices: N <= the one-pass limit (65536) */
    const int nvec = (int)(p.n / V);
    const int slab = g * ITEMS; /* vectors per slab */
    const bool staged = p.slabs > 1;

    W w[ITEMS][V];
#pragma unroll
    for (int k = 0; k < ITEMS; ++k) {
        const int v = lane + k * g;
        if (FUSED && !staged && v < nvec)
            load_vec<W, V>((const W *)p.weight + v * V, w[k]);
        else
#pragma unroll
            for (int j = 0; j < V; ++j)
                w[k][j] = from_f<W>(0.f);
    }

    for (long long base = (long long)blockIdx.x * per_block; base < p.rows;
         base += (long long)gridDim.x * per_block) {
        const long long row = base + slot;
        const bool active = row < p.rows;
        const long long rr = active ? row : 0;
        const T *x = (const T *)p.x + row_offset(p.ix, rr);
        const T *r =
            FUSED ? (const T *)p.residual + row_offset(p.ir, rr) : nullptr;
        T *h = FUSED ? (T *)p.residual_out + row_offset(p.iro, rr) : nullptr;
        T *out = (T *)p.out + row_offset(p.io, rr);

        T a[ITEMS][V]; /* x, then h */
        double acc = 0.0;
        for (int s = 0; s < p.slabs; ++s) {
            T b[ITEMS][V];
            const int v0 = s * slab + lane;
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int v = v0 + k * g;
                if (active && v < nvec) {
                    load_vec<T, V>(x + v * V, a[k]);
                    if (FUSED)
                        load_vec<T, V>(r + v * V, b[k]);
                } else {
#pragma unroll
                    for (int j = 0; j < V; ++j)
                        a[k][j] = b[k][j] = from_f<T>(0.f);
                }
            }
            float part = 0.f;
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int v = v0 + k * g;
                if (FUSED) {
#pragma unroll
                    for (int j = 0; j < V; ++j)
                        a[k][j] = from_f<T>(to_f(a[k][j]) + to_f(b[k][j]));
                    if (active && v < nvec)
                        store_vec<T, V>(h + v * V, a[k]);
                }
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    const float f = to_f(a[k][j]);
                    part += f * f;
                }
                if (staged && active && v < nvec)
                    store_vec<T, V>(stage + v * V, a[k]);
            }
            acc += (double)part;
        }
        const double total = group_sum(acc, g, sums);
        const float rstd = (float)rstd_of(total, p.n, p.eps);

        for (int s = 0; s < p.slabs; ++s) {
            const int v0 = s * slab + lane;
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int v = v0 + k * g;
                if (!active || v >= nvec)
                    continue;
                W wk[V];
                if (staged) {
                    load_vec<T, V>(stage + v * V, a[k]);
                    if (FUSED)
                        load_vec<W, V>((const W *)p.weight + v * V, wk);
                } else {
#pragma unroll
                    for (int j = 0; j < V; ++j)
                        wk[j] = w[k][j];
                }
                T y[V];
#pragma unroll
                for (int j = 0; j < V; ++j) {
                    float f = to_f(a[k][j]) * rstd;
                    if (FUSED)
                        f *= to_f(wk[j]);
                    y[j] = from_f<T>(f);
                }
                store_vec<T, V>(out + v * V, y);
            }
        }
        if (active && lane == 0)
            p.rstd[row_offset(p.irstd, row)] = rstd;
    }
}

/* The kernel's parameters for a call and its launch (host side). */
inline fast_params fast_params_of(const rowops_call *c,
                                  const rowops_cuda_launch &l)
{
    const int lead = c->x.rank - 1;
    fast_params p = {};
    p.rows = rowops_tensor_rows(&c->x);
    p.n = c->x.sizes[lead];
    p.group = l.group;
    p.slabs = l.slabs;
    p.eps = c->eps;
    p.x = c->x.data;
    p.out = c->out.data;
    p.rstd = (float *)c->rstd.data;
    p.ix = make_index(&c->x, lead);
    p.io = make_index(&c->out, lead);
    p.irstd = make_index(&c->rstd, lead);
    if (c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        p.residual = c->residual.data;
        p.weight = c->weight.data;
        p.residual_out = c->residual_out.data;
        p.ir = make_index(&c->residual, lead);
        p.iro = make_index(&c->residual_out, lead);
    }
    return p;
}

} // namespace rowops_cuda
