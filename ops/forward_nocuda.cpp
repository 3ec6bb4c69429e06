// Built instead of forward_cuda.cpp when the library has no CUDA kernels.
#include "cuda_runners.h"

namespace rowops
{

int cuda_arch(const at::Tensor &)
{
    return 0;
}

void run_cuda(const rowops_call &, rowops_impl impl, const at::Tensor &)
{
    TORCH_CHECK(false, "rowops: ", rowops_impl_name(impl),
                " chosen but this build has no CUDA kernels");
}

void run_backward_cuda(const rowops_backward_call &, const at::Tensor &,
                       const at::Tensor &)
{
    TORCH_CHECK(false, "rowops: cuda_strided backward chosen but this build "
                       "has no CUDA kernels");
}

} // namespace rowops
