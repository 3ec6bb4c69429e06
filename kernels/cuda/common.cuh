/* Helpers shared by the CUDA kernels: row addressing over host-collapsed
 * leading dimensions, dtype conversions, vector loads, the group reduction,
 * the shared-memory tiles of the tile kernels, and the launch plumbing
 * (device limits, per-kernel attributes, error attribution). */
#pragma once

#include "launch_config.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <math.h>

/* The block's dynamic shared memory (the CPU emulation of the kernels
 * defines it otherwise). */
#ifndef ROWOPS_DYNAMIC_SMEM
#define ROWOPS_DYNAMIC_SMEM(name)                                              \
    extern __shared__ __align__(16) unsigned char name[]
#endif

namespace rowops_cuda
{

/* Leading dimensions of one tensor after rowops_collapse_rows; ndim is 1
 * for every row-major or row-sliced tensor, so the offset is a multiply. */
struct row_index {
    int ndim;
    long long sizes[ROWOPS_MAX_RANK];
    long long strides[ROWOPS_MAX_RANK];
};

/* Every index is a compile-time constant (the loop is unrolled), so the
 * parameter arrays stay in the constant bank, never in local memory. */
__device__ __forceinline__ long long row_offset(const row_index &r,
                                                long long row)
{
    if (r.ndim == 1)
        return row * r.strides[0];
    long long off = 0;
#pragma unroll
    for (int d = ROWOPS_MAX_RANK - 1; d >= 0; --d) {
        if (d < r.ndim) {
            off += (row % r.sizes[d]) * r.strides[d];
            row /= r.sizes[d];
        }
    }
    return off;
}

/* The leading `ndim` dims of t, collapsed. */
inline row_index make_index(const rowops_tensor *t, int ndim)
{
    int64_t sizes[ROWOPS_MAX_RANK], strides[ROWOPS_MAX_RANK];
    row_index r = {};
    r.ndim = rowops_collapse_rows(t->sizes, t->strides, ndim, sizes, strides);
    for (int d = 0; d < r.ndim; ++d) {
        r.sizes[d] = sizes[d];
        r.strides[d] = strides[d];
    }
    return r;
}

template <typename T> __device__ __forceinline__ float to_f(T v);
template <> __device__ __forceinline__ float to_f<float>(float v)
{
    return v;
}
template <> __device__ __forceinline__ float to_f<__half>(__half v)
{
    return __half2float(v);
}
template <>
__device__ __forceinline__ float to_f<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T from_f(float v);
template <> __device__ __forceinline__ float from_f<float>(float v)
{
    return v;
}
template <> __device__ __forceinline__ __half from_f<__half>(float v)
{
    return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

/* The accumulation type's view of an element (float, or double for
 * float64 tensors). */
template <typename Acc, typename T> __device__ __forceinline__ Acc to_acc(T v)
{
    return (Acc)to_f(v);
}
template <> __device__ __forceinline__ double to_acc<double, double>(double v)
{
    return v;
}
template <> __device__ __forceinline__ double to_acc<double, float>(float v)
{
    return (double)v;
}
template <typename T, typename Acc> __device__ __forceinline__ T from_acc(Acc v)
{
    return from_f<T>((float)v);
}
template <> __device__ __forceinline__ double from_acc<double, double>(double v)
{
    return v;
}

/* V elements of T, aligned as one access of V * sizeof(T) <= 16 bytes. */
template <typename T, int V> struct alignas(sizeof(T) * V) pack {
    T e[V];
};

/* Loads V elements as accesses of at most 16 bytes each (a float32
 * weight beside bfloat16 data is 32 bytes for 8 elements: two loads). */
template <typename T, int V>
__device__ __forceinline__ void load_vec(const T *p, T (&out)[V])
{
    constexpr int C = (int)(V * sizeof(T) > 16 ? 16 / sizeof(T) : V);
#pragma unroll
    for (int c = 0; c < V / C; ++c) {
        const pack<T, C> v = reinterpret_cast<const pack<T, C> *>(p)[c];
#pragma unroll
        for (int j = 0; j < C; ++j)
            out[c * C + j] = v.e[j];
    }
}

template <typename T, int V>
__device__ __forceinline__ void store_vec(T *p, const T (&in)[V])
{
    pack<T, V> v;
#pragma unroll
    for (int j = 0; j < V; ++j)
        v.e[j] = in[j];
    *reinterpret_cast<pack<T, V> *>(p) = v;
}

/* Sum over an aligned group of g threads (a power of two; the whole block
 * or part of a warp); every thread of the group gets the group's total.
 * Groups within a warp reduce by shuffles alone; larger groups add their
 * warps' sums through `shared` (one double per warp) in a fixed order,
 * with the barriers the block needs (g is uniform across the block). */
__device__ __forceinline__ double group_sum(double v, int g, double *shared)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        if (o < g)
            v += __shfl_xor_sync(0xffffffffu, v, o);
    if (g <= 32)
        return v;
    const int warp = threadIdx.x >> 5, per = g >> 5;
    if ((threadIdx.x & 31) == 0)
        shared[warp] = v;
    __syncthreads();
    const int first = warp & ~(per - 1);
    double total = 0.0;
    for (int w = 0; w < per; ++w)
        total += shared[first + w];
    __syncthreads(); /* shared[] is written again by the next call */
    return total;
}

/* 1 / sqrt(sum / n + eps) from a float64 sum (the contract's rstd). */
__device__ __forceinline__ double rstd_of(double sum, long long n, double eps)
{
    return 1.0 / sqrt(sum / (double)(n > 0 ? n : 1) + eps);
}

/* ---- tile kernels: one tile of TR rows by TC = TILE / TR columns in
 * shared memory, element (i, j) at i * (TC + 1) + j (the padding keeps the
 * column-wise accesses of transposed tensors free of bank conflicts). */
constexpr int TILE = ROWOPS_CUDA_TILE_ELEMS;
constexpr int TILE_SMEM = TILE + ROWOPS_CUDA_TILE_MAX_ROWS;
constexpr int TILE_THREADS = ROWOPS_CUDA_TILE_THREADS;
constexpr int TILE_PER_THREAD = TILE / TILE_THREADS;

/* A tensor the tile kernels read or write: collapsed leading dims, the
 * last-dimension stride, and whether tiles move along its rows (the
 * innermost leading dim has stride 1 and the last dim does not: a
 * transposed view) or along its columns. */
struct tile_tensor {
    void *data;
    row_index rows;
    long long col_stride;
    int rows_fast;
};

inline tile_tensor make_tile_tensor(const rowops_tensor *t, int lead)
{
    tile_tensor tt = {};
    tt.data = t->data;
    tt.rows = make_index(t, lead);
    tt.col_stride = lead < t->rank ? t->strides[t->rank - 1] : 0;
    const long long inner = tt.rows.strides[tt.rows.ndim - 1];
    tt.rows_fast =
        inner == 1 && tt.col_stride != 1 && tt.rows.sizes[tt.rows.ndim - 1] > 1;
    return tt;
}

/* Geometry of the current tile: rows [row0, row0 + tr), columns
 * [col0, col0 + tc); log2 of tr and tc. */
struct tile_geom {
    long long row0, rows, col0, n;
    int tr, tc, ltr, ltc;
};

__device__ __forceinline__ int ilog2(int v)
{
    return 31 - __clz(v);
}

/* Element e of the tile for a tensor's access order. */
__device__ __forceinline__ void tile_pos(const tile_geom &g, int rows_fast,
                                         int e, int &i, int &j)
{
    if (rows_fast) {
        i = e & (g.tr - 1);
        j = e >> g.ltr;
    } else {
        j = e & (g.tc - 1);
        i = e >> g.ltc;
    }
}

/* Reads a tile of t (elements of T) into tile (as Acc); elements outside
 * the tensor read as 0. off[i]: the element offset of tile row i. */
template <typename T, typename Acc>
__device__ __forceinline__ void tile_load(const tile_tensor &t,
                                          const long long *off,
                                          const tile_geom &g, Acc *tile)
{
    const T *base = (const T *)t.data;
#pragma unroll
    for (int k = 0; k < TILE_PER_THREAD; ++k) {
        int i, j;
        tile_pos(g, t.rows_fast, threadIdx.x + k * TILE_THREADS, i, j);
        Acc v = 0;
        if (g.row0 + i < g.rows && g.col0 + j < g.n)
            v = to_acc<Acc>(base[off[i] + (g.col0 + j) * t.col_stride]);
        tile[i * (g.tc + 1) + j] = v;
    }
}

template <typename T, typename Acc>
__device__ __forceinline__ void tile_store(const tile_tensor &t,
                                           const long long *off,
                                           const tile_geom &g, const Acc *tile)
{
    T *base = (T *)t.data;
#pragma unroll
    for (int k = 0; k < TILE_PER_THREAD; ++k) {
        int i, j;
        tile_pos(g, t.rows_fast, threadIdx.x + k * TILE_THREADS, i, j);
        if (g.row0 + i < g.rows && g.col0 + j < g.n)
            base[off[i] + (g.col0 + j) * t.col_stride] =
                from_acc<T>(tile[i * (g.tc + 1) + j]);
    }
}

/* The compute role of a thread in a tile: row i of the tile, columns
 * lane, lane + per, ... (per = TILE_THREADS / tr threads share a row, and
 * each takes TILE_PER_THREAD of its tc columns). */
__device__ __forceinline__ int tile_row_of_thread(const tile_geom &g)
{
    return threadIdx.x >> (ilog2(TILE_THREADS) - g.ltr);
}
__device__ __forceinline__ int tile_col_of_thread(const tile_geom &g, int m)
{
    const int per = TILE_THREADS >> g.ltr;
    return (threadIdx.x & (per - 1)) + m * per;
}

/* ---- host side ---- */

inline int ilog2_host(int v)
{
    int l = 0;
    while ((1 << (l + 1)) <= v)
        ++l;
    return l;
}

/* A device's limits (cached per device on first use). */
const rowops_cuda_device &device_limits(int device);

/* Sets a kernel's dynamic shared-memory limit to the device's opt-in
 * maximum and reads its registers (cached per device and kernel; the
 * first call on a device should not be inside a graph capture, as with
 * any CUDA library's lazy set-up). */
rowops_cuda_kernel_attr kernel_attr(int device, const void *kernel);

/* Launch protocol shared by every entry point: a CUDA error already
 * pending before the launch is returned as its negative (so it is not
 * blamed on rowops), the launch's own error as itself, 0 on success. */
int pending_error();
int launch_error();

/* Which instantiation of a kernel a call takes: the op, the dtypes and,
 * for the fast kernel, the vector's bytes (0 where a kernel has one
 * width). A call without a weight (rms_norm_rows) keys its own dtype as
 * the weight's, as its table's lines do. */
struct kernel_key {
    bool fused;
    rowops_dtype dt, wdt;
    int vector_bytes;
};

inline kernel_key key_of(bool fused, rowops_dtype dt, rowops_dtype wdt,
                         int vector_bytes)
{
    return {fused, dt, fused ? wdt : dt, vector_bytes};
}

/* One line of a launcher's table of instantiations. */
template <typename Fn> struct kernel_entry {
    kernel_key key;
    Fn fn;
};

/* The instantiation of the table whose key is key; nullptr: none. */
template <typename Fn, size_t N>
Fn find_kernel(const kernel_entry<Fn> (&table)[N], kernel_key key)
{
    for (const kernel_entry<Fn> &e : table)
        if (e.key.fused == key.fused && e.key.dt == key.dt &&
            e.key.wdt == key.wdt && e.key.vector_bytes == key.vector_bytes)
            return e.fn;
    return nullptr;
}

/* The start and end every forward launcher shares: a pending error is
 * returned as earlier work's, a call with no kernel (kernel null) is
 * cudaErrorInvalidValue, a call of no rows launches nothing; otherwise
 * launch(limits, attr) launches `kernel` on the current device and the
 * launch's own error is returned. */
template <typename Kernel, typename Launch>
int launch_rows(const rowops_call *c, Kernel kernel, Launch launch)
{
    const int pending = pending_error();
    if (pending)
        return pending;
    if (!kernel)
        return (int)cudaErrorInvalidValue;
    if (rowops_tensor_rows(&c->x) == 0)
        return 0;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess)
        return launch_error();
    launch(device_limits(device), kernel_attr(device, (const void *)kernel));
    return launch_error();
}

} // namespace rowops_cuda
