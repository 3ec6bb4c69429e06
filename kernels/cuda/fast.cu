/* The fast CUDA kernel, for calls the eligibility function admits
 * (float32/float16/bfloat16, unit stride, 16-byte aligned rows, N a multiple
 * of the 16-byte vector, N <= the one-pass limit, sm_80+).
 * One block per row; each thread loads up to ROWS_VECS 16-byte vectors,
 * keeps them in registers as float between the reduction and the scaling
 * (one pass over memory), and stores 16-byte vectors. Tuning (warp per row
 * for small N, launch shapes) belongs to the CUDA issue. */
#include "common.cuh"

namespace
{

using namespace rowops_cuda;

constexpr int VECS_PER_THREAD = 8;

struct fast_params {
    int op, weight_f32;
    long long rows, nvec;
    float eps;
    const void *x, *residual, *weight;
    void *out, *residual_out;
    float *rstd;
    row_index ix, ir, io, iro, irstd;
};

template <typename T> union pack16 {
    uint4 raw;
    T e[16 / sizeof(T)];
};

template <typename T> __global__ void fast_kernel(fast_params p)
{
    constexpr int V = 16 / sizeof(T);
    __shared__ float partial[32];
    const bool fused = p.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    for (long long row = blockIdx.x; row < p.rows; row += gridDim.x) {
        const uint4 *x = (const uint4 *)((const T *)p.x + offset_of(p.ix, row));
        const uint4 *r =
            fused
                ? (const uint4 *)((const T *)p.residual + offset_of(p.ir, row))
                : nullptr;
        uint4 *h = fused
                       ? (uint4 *)((T *)p.residual_out + offset_of(p.iro, row))
                       : nullptr;
        uint4 *out = (uint4 *)((T *)p.out + offset_of(p.io, row));
        float cache[VECS_PER_THREAD][V];
        float acc = 0.f;
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; ++k) {
            const long long v = threadIdx.x + (long long)k * blockDim.x;
            if (v >= p.nvec)
                break;
            pack16<T> a;
            a.raw = x[v];
            if (fused) {
                pack16<T> b;
                b.raw = r[v];
#pragma unroll
                for (int j = 0; j < V; ++j)
                    a.e[j] = from_f<T>(to_f(a.e[j]) + to_f(b.e[j]));
                h[v] = a.raw;
            }
#pragma unroll
            for (int j = 0; j < V; ++j) {
                cache[k][j] = to_f(a.e[j]);
                acc += cache[k][j] * cache[k][j];
            }
        }
        const float total = block_sum(acc, partial);
        const float rstd = 1.0f / sqrtf(total / (float)(p.nvec * V) + p.eps);
#pragma unroll
        for (int k = 0; k < VECS_PER_THREAD; ++k) {
            const long long v = threadIdx.x + (long long)k * blockDim.x;
            if (v >= p.nvec)
                break;
            pack16<T> y;
#pragma unroll
            for (int j = 0; j < V; ++j) {
                float w = 1.f;
                if (fused)
                    w = p.weight_f32 ? ((const float *)p.weight)[v * V + j]
                                     : to_f(((const T *)p.weight)[v * V + j]);
                y.e[j] = from_f<T>(cache[k][j] * rstd * w);
            }
            out[v] = y.raw;
        }
        if (threadIdx.x == 0)
            p.rstd[offset_of(p.irstd, row)] = rstd;
        __syncthreads(); /* partial[] is reused by the next row */
    }
}

int launch_fast(const fast_params &p, int dtype, cudaStream_t stream)
{
    if (p.rows == 0)
        return 0;
    long long threads = (p.nvec + VECS_PER_THREAD - 1) / VECS_PER_THREAD;
    threads = (threads + 31) / 32 * 32;
    threads = threads < 32 ? 32 : (threads > 1024 ? 1024 : threads);
    const unsigned blocks = grid_for_rows(p.rows);
    switch (dtype) {
    case ROWOPS_F32:
        fast_kernel<float><<<blocks, (unsigned)threads, 0, stream>>>(p);
        break;
    case ROWOPS_F16:
        fast_kernel<__half><<<blocks, (unsigned)threads, 0, stream>>>(p);
        break;
    case ROWOPS_BF16:
        fast_kernel<__nv_bfloat16><<<blocks, (unsigned)threads, 0, stream>>>(p);
        break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

} // namespace

extern "C" int rowops_cuda_fast(const rowops_call *c, void *stream)
{
    const int lead = c->x.rank - 1;
    const long long n = c->x.sizes[lead];
    const long long vec = 16 / (long long)rowops_dtype_size(c->x.dtype);
    if (n % vec || n / vec > 1024LL * VECS_PER_THREAD)
        return (int)cudaErrorInvalidValue; /* eligibility forbids this */
    fast_params p = {};
    p.op = c->op;
    p.rows = rowops_tensor_rows(&c->x);
    p.nvec = n / vec;
    p.eps = (float)c->eps;
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
        p.weight_f32 = c->weight.dtype == ROWOPS_F32;
        p.ir = make_index(&c->residual, lead);
        p.iro = make_index(&c->residual_out, lead);
    }
    return launch_fast(p, (int)c->x.dtype, (cudaStream_t)stream);
}
