// The backward ops (rowops::*_backward) for real tensors on any device.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <tuple>

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

} // namespace rowops
