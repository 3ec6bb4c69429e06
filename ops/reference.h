// The reference: the contract written once as an aten composite. Registered
// as rowops::*_reference (CompositeImplicitAutograd, so it runs on every
// device, differentiates and decomposes under compile); the fallback, the
// Python `rowops.reference` and the bench's reference path all call it.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>
#include <tuple>

namespace rowops
{

std::tuple<at::Tensor, at::Tensor> rms_norm_rows_reference(const at::Tensor &x,
                                                           double eps);

std::tuple<at::Tensor, at::Tensor, at::Tensor>
fused_add_rms_norm_reference(const at::Tensor &x, const at::Tensor &residual,
                             const at::Tensor &weight, double eps);

at::Tensor
rms_norm_rows_backward_reference(const at::Tensor &grad_y,
                                 const std::optional<at::Tensor> &grad_rstd,
                                 const at::Tensor &x, const at::Tensor &rstd);

std::tuple<at::Tensor, at::Tensor> fused_add_rms_norm_backward_reference(
    const at::Tensor &grad_out,
    const std::optional<at::Tensor> &grad_residual_out,
    const std::optional<at::Tensor> &grad_rstd, const at::Tensor &residual_out,
    const at::Tensor &weight, const at::Tensor &rstd);

} // namespace rowops
