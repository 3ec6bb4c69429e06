/* Helpers shared by the CUDA kernels: row indexing over any leading strides,
 * dtype conversions and the block reduction. */
#pragma once

#include "../rowops.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace rowops_cuda
{

/* Leading sizes and strides of one tensor, passed by value. */
struct row_index {
    int ndim;
    long long sizes[ROWOPS_MAX_RANK];
    long long strides[ROWOPS_MAX_RANK];
    long long inner; /* last-dimension stride */
};

__device__ inline long long offset_of(const row_index &r, long long index)
{
    long long off = 0;
    for (int d = r.ndim - 1; d >= 0; --d) {
        off += (index % r.sizes[d]) * r.strides[d];
        index /= r.sizes[d];
    }
    return off;
}

inline row_index make_index(const rowops_tensor *t, int ndim)
{
    row_index r = {};
    r.ndim = ndim;
    for (int d = 0; d < ndim; ++d) {
        r.sizes[d] = t->sizes[d];
        r.strides[d] = t->strides[d];
    }
    r.inner = ndim < t->rank ? t->strides[t->rank - 1] : 0;
    return r;
}

template <typename T> __device__ float to_f(T v);
template <> __device__ inline float to_f<float>(float v)
{
    return v;
}
template <> __device__ inline float to_f<__half>(__half v)
{
    return __half2float(v);
}
template <> __device__ inline float to_f<__nv_bfloat16>(__nv_bfloat16 v)
{
    return __bfloat162float(v);
}

template <typename T> __device__ T from_f(float v);
template <> __device__ inline float from_f<float>(float v)
{
    return v;
}
template <> __device__ inline __half from_f<__half>(float v)
{
    return __float2half_rn(v);
}
template <> __device__ inline __nv_bfloat16 from_f<__nv_bfloat16>(float v)
{
    return __float2bfloat16_rn(v);
}

/* Blocks for a one-block-per-row kernel; the kernels loop over the rest. */
inline unsigned grid_for_rows(long long rows)
{
    const long long max_blocks = 65535LL * 16;
    return (unsigned)(rows < max_blocks ? rows : max_blocks);
}

/* Sum over the block; every thread gets the total. shared holds 32. */
template <typename Acc> __device__ Acc block_sum(Acc v, Acc *shared)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0)
        shared[warp] = v;
    __syncthreads();
    Acc total = 0;
    for (int w = 0; w < (int)(blockDim.x >> 5); ++w)
        total += shared[w];
    return total;
}

} // namespace rowops_cuda
