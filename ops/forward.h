// The forward ops for real tensors on any device: validate, allocate fresh
// contiguous outputs, ask the eligibility function, run its choice.
#pragma once

#include <ATen/core/Tensor.h>

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

} // namespace rowops
