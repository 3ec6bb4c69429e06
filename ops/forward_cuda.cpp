// CUDA registration: the same forward entry points on PyTorch's current
// stream and device, and the CUDA runners of the forward and backward
// kernels. A CUDA error already pending before a rowops launch is reported
// as an earlier operation's, not blamed on the kernel.
#include "cuda_runners.h"
#include "descriptor.h"
#include "forward.h"
#include "introspection.h"

#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

#include <string>

namespace rowops
{
namespace
{

void check_launch(int err, const char *what)
{
    TORCH_CHECK(err >= 0,
                "rowops: a CUDA error from an earlier operation was pending "
                "before the ",
                what,
                " launch (nothing was launched; the error is not rowops'): ",
                cudaGetErrorString(static_cast<cudaError_t>(-err)));
    TORCH_CHECK(err == 0, "rowops: CUDA kernel launch failed (", what,
                "): ", cudaGetErrorString(static_cast<cudaError_t>(err)));
}

} // namespace

int cuda_arch(const at::Tensor &x)
{
    const cudaDeviceProp *prop = at::cuda::getDeviceProperties(x.get_device());
    return prop->major * 10 + prop->minor;
}

void run_cuda(const rowops_call &call, rowops_impl impl, const at::Tensor &x)
{
    const rowops_cuda_kernel_fn launch = rowops_cuda_launcher(impl);
    TORCH_INTERNAL_ASSERT(launch, "rowops: no CUDA runner for ",
                          rowops_impl_name(impl));
    const c10::cuda::CUDAGuard guard(x.device());
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    check_launch(launch(&call, stream), rowops_impl_name(impl));
}

void run_backward_cuda(const rowops_backward_call &call, const at::Tensor &h,
                       const at::Tensor &grad_weight)
{
    const c10::cuda::CUDAGuard guard(h.device());
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    // Stage-1 partial rows of the weight gradient: from the caching
    // allocator on this stream (stream-ordered, so graph capture keeps it).
    at::Tensor partial;
    rowops_tensor gw{};
    if (call.op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        const int64_t parts = rowops_cuda_backward_parts(&call);
        partial = at::empty({parts, h.size(-1)},
                            h.options().dtype(h.scalar_type() == at::kDouble
                                                  ? at::kDouble
                                                  : at::kFloat));
        gw = describe(grad_weight);
    }
    const int err = rowops_cuda_backward(
        &call, partial.defined() ? partial.data_ptr() : nullptr,
        grad_weight.defined() ? &gw : nullptr, stream);
    check_launch(err, "cuda_strided backward");
}

// Test hook: leaves a (non-sticky) CUDA error pending, as a failed call of
// some other library would, so the tests can check that the next rowops
// launch reports it as not its own.
void cuda_leave_pending_error()
{
    (void)cudaSetDevice(-1);
}

TORCH_LIBRARY_IMPL(rowops, CUDA, m)
{
    m.impl("rms_norm_rows", &rms_norm_rows);
    m.impl("fused_add_rms_norm", &fused_add_rms_norm);
    m.impl("fused_add_rms_norm_", &fused_add_rms_norm_);
}

} // namespace rowops
