// The backward ops (rowops::*_backward) for real tensors on any device.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <string>
#include <tuple>

extern "C" {
#include "rowops.h"
}

namespace rowops
{

at::Tensor rms_norm_rows_backward(const at::Tensor &grad_y,
                                  const std::optional<at::Tensor> &grad_rstd,
                                  const at::Tensor &x, const at::Tensor &rstd);

std::tuple<at::Tensor, at::Tensor>
fused_add_rms_norm_backward(const at::Tensor &grad_out,
                            const std::optional<at::Tensor> &grad_residual_out,
                            const std::optional<at::Tensor> &grad_rstd,
                            const at::Tensor &residual_out,
                            const at::Tensor &weight, const at::Tensor &rstd);

// What the backward of an op on h would run, and why (for explain_dispatch).
std::string explain_backward_dispatch(const at::Tensor &h);

// Runs the CUDA backward kernels on the current stream: grad_h into
// call.grad_h and, for the fused op, the weight gradient into grad_weight
// (defined in forward_cuda.cpp; forward_nocuda.cpp's raises).
void run_backward_cuda(const rowops_backward_call &call, const at::Tensor &h,
                       const at::Tensor &grad_weight);

} // namespace rowops
