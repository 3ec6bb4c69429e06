/* The fast CUDA forward kernel: its instantiations (one extern "C" kernel
 * each) and its launcher. The device code and what it does are in
 * fast_kernel.cuh. */
#include "fast_kernel.cuh"

using rowops_cuda::fast_params;

/* One extern "C" kernel per instantiation, named as launch_config.c spells
 * it (the resource test finds each by that name in ptxas's report). */
#define ROWOPS_FAST_KERNEL(NAME, T, W, FUSED, VB)                              \
    extern "C" __global__ void __launch_bounds__(ROWOPS_CUDA_FAST_THREADS, 2)  \
        NAME(fast_params p)                                                    \
    {                                                                          \
        rowops_cuda::fast_rows<T, W, FUSED, (int)(VB / sizeof(T))>(p);         \
    }

/* X(name, T, W, fused, vector bytes, dtype, weight dtype) */
#define ROWOPS_FAST_WIDTHS32(X, op, dt, T, w, W, F, DT, WDT)                   \
    X(rowops_fast_##op##_##dt##w##_v16, T, W, F, 16, DT, WDT)                  \
    X(rowops_fast_##op##_##dt##w##_v8, T, W, F, 8, DT, WDT)                    \
    X(rowops_fast_##op##_##dt##w##_v4, T, W, F, 4, DT, WDT)
#define ROWOPS_FAST_WIDTHS16(X, op, dt, T, w, W, F, DT, WDT)                   \
    ROWOPS_FAST_WIDTHS32(X, op, dt, T, w, W, F, DT, WDT)                       \
    X(rowops_fast_##op##_##dt##w##_v2, T, W, F, 2, DT, WDT)
#define ROWOPS_FAST_ALL(X)                                                     \
    ROWOPS_FAST_WIDTHS32(X, rms, f32, float, , float, false, ROWOPS_F32,       \
                         ROWOPS_F32)                                           \
    ROWOPS_FAST_WIDTHS16(X, rms, f16, __half, , __half, false, ROWOPS_F16,     \
                         ROWOPS_F16)                                           \
    ROWOPS_FAST_WIDTHS16(X, rms, bf16, __nv_bfloat16, , __nv_bfloat16, false,  \
                         ROWOPS_BF16, ROWOPS_BF16)                             \
    ROWOPS_FAST_WIDTHS32(X, fused, f32, float, _wf32, float, true, ROWOPS_F32, \
                         ROWOPS_F32)                                           \
    ROWOPS_FAST_WIDTHS16(X, fused, f16, __half, _wf16, __half, true,           \
                         ROWOPS_F16, ROWOPS_F16)                               \
    ROWOPS_FAST_WIDTHS16(X, fused, f16, __half, _wf32, float, true,            \
                         ROWOPS_F16, ROWOPS_F32)                               \
    ROWOPS_FAST_WIDTHS16(X, fused, bf16, __nv_bfloat16, _wbf16, __nv_bfloat16, \
                         true, ROWOPS_BF16, ROWOPS_BF16)                       \
    ROWOPS_FAST_WIDTHS16(X, fused, bf16, __nv_bfloat16, _wf32, float, true,    \
                         ROWOPS_BF16, ROWOPS_F32)

#define ROWOPS_FAST_DEFINE(NAME, T, W, F, VB, DT, WDT)                         \
    ROWOPS_FAST_KERNEL(NAME, T, W, F, VB)
ROWOPS_FAST_ALL(ROWOPS_FAST_DEFINE)

namespace
{

using fast_fn = void (*)(fast_params);

const rowops_cuda::kernel_entry<fast_fn> fast_kernels[] = {
#define ROWOPS_FAST_ENTRY(NAME, T, W, F, VB, DT, WDT) {{F, DT, WDT, VB}, NAME},
    ROWOPS_FAST_ALL(ROWOPS_FAST_ENTRY)
#undef ROWOPS_FAST_ENTRY
};

} // namespace

extern "C" int rowops_cuda_fast(const rowops_call *c, void *stream)
{
    using namespace rowops_cuda;
    const long long n = c->x.sizes[c->x.rank - 1];
    const bool fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const int vec = rowops_cuda_vector_elems(c);
    const int es = (int)rowops_dtype_size(c->x.dtype);
    fast_fn kernel = find_kernel(
        fast_kernels, key_of(fused, c->x.dtype, c->weight.dtype, vec * es));
    if (n < 1 || n > rowops_one_pass_limit(c->x.dtype))
        kernel = nullptr; /* eligibility forbids this */
    return launch_rows(
        c, kernel,
        [&](const rowops_cuda_device &dev, rowops_cuda_kernel_attr attr) {
            const rowops_cuda_launch l = rowops_cuda_fast_launch(
                &dev, attr, c->x.dtype, n, vec, rowops_tensor_rows(&c->x));
            const fast_params p = fast_params_of(c, l);
            kernel<<<l.grid, l.threads, l.smem, (cudaStream_t)stream>>>(p);
        });
}
