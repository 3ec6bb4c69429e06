// The ops' CUDA side, used by the forward and the backward ops alike:
// defined in forward_cuda.cpp when built with CUDA, in forward_nocuda.cpp
// otherwise (each then reports that CUDA is unavailable).
#pragma once

#include <ATen/core/Tensor.h>

extern "C" {
#include "rowops.h"
}

namespace rowops
{

// Compute capability (major * 10 + minor) of a CUDA tensor's device; 0
// when built without CUDA.
int cuda_arch(const at::Tensor &x);

// Runs a CUDA kernel choice on the current stream.
void run_cuda(const rowops_call &call, rowops_impl impl, const at::Tensor &x);

// Runs the CUDA backward kernels on the current stream: grad_h into
// call.grad_h and, for the fused op, the weight gradient into grad_weight.
void run_backward_cuda(const rowops_backward_call &call, const at::Tensor &h,
                       const at::Tensor &grad_weight);

} // namespace rowops
