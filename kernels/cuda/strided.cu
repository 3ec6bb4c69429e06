/* The strided CUDA kernel: correct for any strides and every dtype.
 * One block per row; each thread owns columns tid, tid+blockDim, ... in both
 * passes, so h written to residual_out in pass 1 is read back by the same
 * thread in pass 2 (in-place safe) and only the reduction needs a barrier.
 * Three layers as in ggml: __global__ kernel (pointers, strides, scalars),
 * static launcher (grid, block, stream), public entry (descriptor). */
#include "common.cuh"

namespace
{

using namespace rowops_cuda;

struct strided_params {
    int op;
    int dtype, weight_dtype, rstd_dtype;
    long long rows, n;
    double eps;
    const void *x, *residual, *weight;
    void *out, *residual_out, *rstd;
    row_index ix, ir, io, iro, irstd;
    long long weight_stride;
};

__device__ float load_weight(const strided_params &p, long long i)
{
    const long long k = i * p.weight_stride;
    switch (p.weight_dtype) {
    case ROWOPS_F16: return __half2float(((const __half *)p.weight)[k]);
    case ROWOPS_BF16:
        return __bfloat162float(((const __nv_bfloat16 *)p.weight)[k]);
    default: return ((const float *)p.weight)[k];
    }
}

/* float32, float16 and bfloat16: float32 accumulation. */
template <typename T> __global__ void strided_kernel(strided_params p)
{
    __shared__ float partial[32];
    const bool fused = p.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const T *x = (const T *)p.x + offset_of(p.ix, row);
        T *out = (T *)p.out + offset_of(p.io, row);
        const T *src = x;
        long long ss = p.ix.inner;
        float acc = 0.f;
        if (fused) {
            const T *r = (const T *)p.residual + offset_of(p.ir, row);
            T *h = (T *)p.residual_out + offset_of(p.iro, row);
            for (long long i = threadIdx.x; i < p.n; i += blockDim.x) {
                const T hv = from_f<T>(to_f(x[i * p.ix.inner]) +
                                       to_f(r[i * p.ir.inner]));
                h[i * p.iro.inner] = hv;
                const float f = to_f(hv);
                acc += f * f;
            }
            src = h;
            ss = p.iro.inner;
        } else {
            for (long long i = threadIdx.x; i < p.n; i += blockDim.x) {
                const float f = to_f(x[i * ss]);
                acc += f * f;
            }
        }
        const float total = block_sum(acc, partial);
        const float mean = total / (float)(p.n > 0 ? p.n : 1);
        const float rstd = 1.0f / sqrtf(mean + (float)p.eps);
        for (long long i = threadIdx.x; i < p.n; i += blockDim.x) {
            float y = to_f(src[i * ss]) * rstd;
            if (fused)
                y *= load_weight(p, i);
            out[i * p.io.inner] = from_f<T>(y);
        }
        if (threadIdx.x == 0)
            ((float *)p.rstd)[offset_of(p.irstd, row)] = rstd;
        __syncthreads(); /* partial[] is reused by the next row */
    }
}

/* float64: double accumulation; weight is float64 or float32. */
__global__ void strided_kernel_f64(strided_params p)
{
    __shared__ double partial[32];
    const bool fused = p.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const double *x = (const double *)p.x + offset_of(p.ix, row);
        double *out = (double *)p.out + offset_of(p.io, row);
        const double *src = x;
        long long ss = p.ix.inner;
        double acc = 0.0;
        if (fused) {
            const double *r = (const double *)p.residual + offset_of(p.ir, row);
            double *h = (double *)p.residual_out + offset_of(p.iro, row);
            for (long long i = threadIdx.x; i < p.n; i += blockDim.x) {
                const double hv = x[i * p.ix.inner] + r[i * p.ir.inner];
                h[i * p.iro.inner] = hv;
                acc += hv * hv;
            }
            src = h;
            ss = p.iro.inner;
        } else {
            for (long long i = threadIdx.x; i < p.n; i += blockDim.x)
                acc += x[i * ss] * x[i * ss];
        }
        const double total = block_sum(acc, partial);
        const double rstd =
            1.0 / sqrt(total / (double)(p.n > 0 ? p.n : 1) + p.eps);
        for (long long i = threadIdx.x; i < p.n; i += blockDim.x) {
            double y = src[i * ss] * rstd;
            if (fused) {
                const long long k = i * p.weight_stride;
                y *= p.weight_dtype == ROWOPS_F64
                         ? ((const double *)p.weight)[k]
                         : (double)((const float *)p.weight)[k];
            }
            out[i * p.io.inner] = y;
        }
        if (threadIdx.x == 0)
            ((double *)p.rstd)[offset_of(p.irstd, row)] = rstd;
        __syncthreads();
    }
}

int launch_strided(const strided_params &p, cudaStream_t stream)
{
    if (p.rows == 0)
        return 0;
    const int threads = p.n >= 2048 ? 512 : (p.n >= 256 ? 256 : 128);
    const unsigned blocks = grid_for_rows(p.rows);
    switch (p.dtype) {
    case ROWOPS_F32:
        strided_kernel<float><<<blocks, threads, 0, stream>>>(p);
        break;
    case ROWOPS_F16:
        strided_kernel<__half><<<blocks, threads, 0, stream>>>(p);
        break;
    case ROWOPS_BF16:
        strided_kernel<__nv_bfloat16><<<blocks, threads, 0, stream>>>(p);
        break;
    case ROWOPS_F64:
        strided_kernel_f64<<<blocks, threads, 0, stream>>>(p);
        break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int rowops_cuda_strided(const rowops_call *c, void *stream)
{
    const int lead = c->x.rank - 1;
    strided_params p = {};
    p.op = c->op;
    p.dtype = c->x.dtype;
    p.rstd_dtype = c->rstd.dtype;
    p.rows = rowops_tensor_rows(&c->x);
    p.n = c->x.sizes[lead];
    p.eps = c->eps;
    p.x = c->x.data;
    p.out = c->out.data;
    p.rstd = c->rstd.data;
    p.ix = make_index(&c->x, lead);
    p.io = make_index(&c->out, lead);
    p.irstd = make_index(&c->rstd, lead);
    if (c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        p.residual = c->residual.data;
        p.weight = c->weight.data;
        p.residual_out = c->residual_out.data;
        p.weight_dtype = c->weight.dtype;
        p.weight_stride = c->weight.strides[0];
        p.ir = make_index(&c->residual, lead);
        p.iro = make_index(&c->residual_out, lead);
    }
    return launch_strided(p, (cudaStream_t)stream);
}
