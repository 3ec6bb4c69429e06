// CUDA registration: the same forward entry points on PyTorch's current
// stream and device.
#include "forward.h"

#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAGuard.h>
#include <torch/library.h>

namespace rowops
{

int cuda_arch(const at::Tensor &x)
{
    const cudaDeviceProp *prop = at::cuda::getDeviceProperties(x.get_device());
    return prop->major * 10 + prop->minor;
}

void run_cuda(const rowops_call &call, rowops_impl impl, const at::Tensor &x)
{
    TORCH_INTERNAL_ASSERT(
        impl == ROWOPS_IMPL_CUDA_STRIDED || impl == ROWOPS_IMPL_CUDA_FAST,
        "rowops: no CUDA runner for ", rowops_impl_name(impl));
    const c10::cuda::CUDAGuard guard(x.device());
    const cudaStream_t stream = at::cuda::getCurrentCUDAStream().stream();
    const int err = impl == ROWOPS_IMPL_CUDA_FAST
                        ? rowops_cuda_fast(&call, stream)
                        : rowops_cuda_strided(&call, stream);
    TORCH_CHECK(err == 0, "rowops: CUDA kernel launch failed: ",
                cudaGetErrorString(static_cast<cudaError_t>(err)));
}

TORCH_LIBRARY_IMPL(rowops, CUDA, m)
{
    m.impl("rms_norm_rows", &rms_norm_rows);
    m.impl("fused_add_rms_norm", &fused_add_rms_norm);
    m.impl("fused_add_rms_norm_", &fused_add_rms_norm_);
}

} // namespace rowops
