/* The strided CUDA forward kernel: its instantiations and its launcher.
 * The device code and what it does are in strided_kernel.cuh. */
#include "strided_kernel.cuh"

using rowops_cuda::strided_params;

/* X(name, T, W, Acc, fused, dtype, weight dtype) */
#define ROWOPS_STRIDED_ALL(X)                                                  \
    X(rowops_strided_rms_f32, float, float, float, false, ROWOPS_F32,          \
      ROWOPS_F32)                                                              \
    X(rowops_strided_rms_f16, __half, __half, float, false, ROWOPS_F16,        \
      ROWOPS_F16)                                                              \
    X(rowops_strided_rms_bf16, __nv_bfloat16, __nv_bfloat16, float, false,     \
      ROWOPS_BF16, ROWOPS_BF16)                                                \
    X(rowops_strided_rms_f64, double, double, double, false, ROWOPS_F64,       \
      ROWOPS_F64)                                                              \
    X(rowops_strided_fused_f32_wf32, float, float, float, true, ROWOPS_F32,    \
      ROWOPS_F32)                                                              \
    X(rowops_strided_fused_f16_wf16, __half, __half, float, true, ROWOPS_F16,  \
      ROWOPS_F16)                                                              \
    X(rowops_strided_fused_f16_wf32, __half, float, float, true, ROWOPS_F16,   \
      ROWOPS_F32)                                                              \
    X(rowops_strided_fused_bf16_wbf16, __nv_bfloat16, __nv_bfloat16, float,    \
      true, ROWOPS_BF16, ROWOPS_BF16)                                          \
    X(rowops_strided_fused_bf16_wf32, __nv_bfloat16, float, float, true,       \
      ROWOPS_BF16, ROWOPS_F32)                                                 \
    X(rowops_strided_fused_f64_wf64, double, double, double, true, ROWOPS_F64, \
      ROWOPS_F64)                                                              \
    X(rowops_strided_fused_f64_wf32, double, float, double, true, ROWOPS_F64,  \
      ROWOPS_F32)

#define ROWOPS_STRIDED_DEFINE(NAME, T, W, ACC, F, DT, WDT)                     \
    extern "C" __global__ void __launch_bounds__(ROWOPS_CUDA_TILE_THREADS, 4)  \
        NAME(strided_params p)                                                 \
    {                                                                          \
        rowops_cuda::strided_rows<T, W, ACC, F>(p);                            \
    }
ROWOPS_STRIDED_ALL(ROWOPS_STRIDED_DEFINE)

namespace
{

using strided_fn = void (*)(strided_params);

const rowops_cuda::kernel_entry<strided_fn> strided_kernels[] = {
#define ROWOPS_STRIDED_ENTRY(NAME, T, W, ACC, F, DT, WDT)                      \
    {{F, DT, WDT, 0}, NAME},
    ROWOPS_STRIDED_ALL(ROWOPS_STRIDED_ENTRY)
#undef ROWOPS_STRIDED_ENTRY
};

} // namespace

extern "C" int rowops_cuda_strided(const rowops_call *c, void *stream)
{
    using namespace rowops_cuda;
    const bool fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const strided_fn kernel = find_kernel(
        strided_kernels, key_of(fused, c->x.dtype, c->weight.dtype, 0));
    return launch_rows(
        c, kernel,
        [&](const rowops_cuda_device &dev, rowops_cuda_kernel_attr attr) {
            strided_params p = strided_params_of(c);
            const rowops_cuda_launch l = rowops_cuda_tile_launch(
                &dev, attr, ROWOPS_CUDA_STRIDED_KERNEL, p.n,
                rowops_tensor_rows(&c->x), strided_rows_fast(p));
            p.ltr = ilog2_host(l.group);
            kernel<<<l.grid, l.threads, 0, (cudaStream_t)stream>>>(p);
        });
}
