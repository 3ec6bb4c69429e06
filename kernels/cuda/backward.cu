/* The CUDA backward kernels: their instantiations and launchers. The
 * device code and what it does are in backward_kernel.cuh. */
#include "backward_kernel.cuh"

using rowops_cuda::backward_params;

/* X(name, T, W, Acc, fused, dtype, weight dtype) */
#define ROWOPS_BACKWARD_ALL(X)                                                 \
    X(rowops_backward_rms_f32, float, float, float, false, ROWOPS_F32,         \
      ROWOPS_F32)                                                              \
    X(rowops_backward_rms_f16, __half, __half, float, false, ROWOPS_F16,       \
      ROWOPS_F16)                                                              \
    X(rowops_backward_rms_bf16, __nv_bfloat16, __nv_bfloat16, float, false,    \
      ROWOPS_BF16, ROWOPS_BF16)                                                \
    X(rowops_backward_rms_f64, double, double, double, false, ROWOPS_F64,      \
      ROWOPS_F64)                                                              \
    X(rowops_backward_fused_f32_wf32, float, float, float, true, ROWOPS_F32,   \
      ROWOPS_F32)                                                              \
    X(rowops_backward_fused_f16_wf16, __half, __half, float, true, ROWOPS_F16, \
      ROWOPS_F16)                                                              \
    X(rowops_backward_fused_f16_wf32, __half, float, float, true, ROWOPS_F16,  \
      ROWOPS_F32)                                                              \
    X(rowops_backward_fused_bf16_wbf16, __nv_bfloat16, __nv_bfloat16, float,   \
      true, ROWOPS_BF16, ROWOPS_BF16)                                          \
    X(rowops_backward_fused_bf16_wf32, __nv_bfloat16, float, float, true,      \
      ROWOPS_BF16, ROWOPS_F32)                                                 \
    X(rowops_backward_fused_f64_wf64, double, double, double, true,            \
      ROWOPS_F64, ROWOPS_F64)                                                  \
    X(rowops_backward_fused_f64_wf32, double, float, double, true, ROWOPS_F64, \
      ROWOPS_F32)

#define ROWOPS_BACKWARD_DEFINE(NAME, T, W, ACC, F, DT, WDT)                    \
    extern "C" __global__ void __launch_bounds__(ROWOPS_CUDA_TILE_THREADS, 4)  \
        NAME(backward_params p)                                                \
    {                                                                          \
        rowops_cuda::backward_rows<T, W, ACC, F>(p);                           \
    }
ROWOPS_BACKWARD_ALL(ROWOPS_BACKWARD_DEFINE)

/* X(name, Acc, W, acc dtype, weight dtype) */
#define ROWOPS_DWEIGHT_ALL(X)                                                  \
    X(rowops_dweight_f32_wf32, float, float, ROWOPS_F32, ROWOPS_F32)           \
    X(rowops_dweight_f32_wf16, float, __half, ROWOPS_F32, ROWOPS_F16)          \
    X(rowops_dweight_f32_wbf16, float, __nv_bfloat16, ROWOPS_F32, ROWOPS_BF16) \
    X(rowops_dweight_f64_wf64, double, double, ROWOPS_F64, ROWOPS_F64)         \
    X(rowops_dweight_f64_wf32, double, float, ROWOPS_F64, ROWOPS_F32)

#define ROWOPS_DWEIGHT_DEFINE(NAME, ACC, W, ADT, WDT)                          \
    extern "C" __global__ void __launch_bounds__(ROWOPS_CUDA_FINISH_THREADS)   \
        NAME(const ACC *partial, int parts, long long n, W *out,               \
             long long out_stride)                                             \
    {                                                                          \
        rowops_cuda::dweight_columns<ACC, W>(partial, parts, n, out,           \
                                             out_stride);                      \
    }
ROWOPS_DWEIGHT_ALL(ROWOPS_DWEIGHT_DEFINE)

namespace
{

using backward_fn = void (*)(backward_params);

const rowops_cuda::kernel_entry<backward_fn> backward_kernels[] = {
#define ROWOPS_BACKWARD_ENTRY(NAME, T, W, ACC, F, DT, WDT)                     \
    {{F, DT, WDT, 0}, NAME},
    ROWOPS_BACKWARD_ALL(ROWOPS_BACKWARD_ENTRY)
#undef ROWOPS_BACKWARD_ENTRY
};

/* Launches stage 2 for the (acc, weight) dtypes; false if none matches. */
bool launch_dweight(rowops_dtype acc, rowops_dtype wdt, const void *partial,
                    int parts, long long n, void *out, long long out_stride,
                    cudaStream_t stream)
{
    const rowops_cuda_launch l = rowops_cuda_dweight_launch(n);
#define ROWOPS_DWEIGHT_LAUNCH(NAME, ACC, W, ADT, WDT)                          \
    if (acc == ADT && wdt == WDT) {                                            \
        NAME<<<l.grid, l.threads, 0, stream>>>((const ACC *)partial, parts, n, \
                                               (W *)out, out_stride);          \
        return true;                                                           \
    }
    ROWOPS_DWEIGHT_ALL(ROWOPS_DWEIGHT_LAUNCH)
#undef ROWOPS_DWEIGHT_LAUNCH
    return false;
}

struct prepared {
    backward_fn kernel;
    backward_params p;
    rowops_cuda_launch l;
};

/* The kernel, its parameters and its launch for a call (kernel null: no
 * kernel for these dtypes). */
prepared prepare(const rowops_backward_call *c)
{
    using namespace rowops_cuda;
    prepared out = {};
    const bool fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    out.kernel = find_kernel(backward_kernels,
                             key_of(fused, c->h.dtype, c->weight.dtype, 0));
    backward_params &p = out.p;
    p = backward_params_of(c);
    if (!out.kernel)
        return out;
    int device = 0;
    if (cudaGetDevice(&device) != cudaSuccess) {
        out.kernel = nullptr;
        return out;
    }
    out.l = rowops_cuda_tile_launch(
        &device_limits(device), kernel_attr(device, (const void *)out.kernel),
        ROWOPS_CUDA_BACKWARD_KERNEL, p.n, p.rows, backward_rows_fast(p));
    p.ltr = ilog2_host(out.l.group);
    return out;
}

} // namespace

extern "C" int64_t rowops_cuda_backward_parts(const rowops_backward_call *c)
{
    if (c->op != ROWOPS_OP_FUSED_ADD_RMS_NORM || rowops_tensor_rows(&c->h) == 0)
        return 0;
    const prepared pr = prepare(c);
    return pr.kernel ? (int64_t)pr.l.grid : 0;
}

extern "C" int rowops_cuda_backward(const rowops_backward_call *c,
                                    void *partial,
                                    const rowops_tensor *grad_weight,
                                    void *stream)
{
    using namespace rowops_cuda;
    const int pending = pending_error();
    if (pending)
        return pending;
    if (rowops_tensor_rows(&c->h) == 0)
        return 0;
    prepared pr = prepare(c);
    if (!pr.kernel)
        return (int)cudaErrorInvalidValue;
    const bool fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    if (fused && (!partial || !grad_weight))
        return (int)cudaErrorInvalidValue;
    pr.p.partial = partial;
    const cudaStream_t s = (cudaStream_t)stream;
    pr.kernel<<<pr.l.grid, pr.l.threads, 0, s>>>(pr.p);
    const int err = launch_error();
    if (err || !fused)
        return err;
    if (!launch_dweight(rowops_acc_dtype(c->h.dtype), grad_weight->dtype,
                        partial, (int)pr.l.grid, pr.p.n, grad_weight->data,
                        grad_weight->strides[0], s))
        return (int)cudaErrorInvalidValue;
    return launch_error();
}
