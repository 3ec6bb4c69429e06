// The forward ops for real tensors on any device: validate, allocate fresh
// contiguous outputs, ask the eligibility function, run its choice.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <tuple>

extern "C" {
#include "rowops.h"
}

namespace rowops
{

std::tuple<at::Tensor, at::Tensor> rms_norm_rows(const at::Tensor &x,
                                                 double eps);

std::tuple<at::Tensor, at::Tensor, at::Tensor>
fused_add_rms_norm(const at::Tensor &x, const at::Tensor &residual,
                   const at::Tensor &weight, double eps);

void fused_add_rms_norm_(const at::Tensor &x, const at::Tensor &residual,
                         const at::Tensor &weight, double eps);

// "rowops::kernel::<impl name>": the profiler scope around a kernel's run
// (RecordFunction, user scope), one static string per implementation.
const char *kernel_scope_name(rowops_impl impl);

// Compute capability (major * 10 + minor) of a CUDA tensor's device; 0
// when built without CUDA.
int cuda_arch(const at::Tensor &x);

// Runs a CUDA kernel choice; defined in forward_cuda.cpp when built with
// CUDA, otherwise reports that CUDA is unavailable.
void run_cuda(const rowops_call &call, rowops_impl impl, const at::Tensor &x);

} // namespace rowops
