// Meta (fake) kernels: output metadata from shapes, dtypes and devices only,
// over symbolic sizes; never reads data. Same validation as the real ones.
#include "outputs.h"
#include "validate.h"

#include <ATen/ATen.h>
#include <torch/library.h>

namespace rowops
{
namespace
{

std::tuple<at::Tensor, at::Tensor> rms_norm_rows_meta(const at::Tensor &x,
                                                      double eps)
{
    check_rms_norm_rows("rowops.rms_norm_rows", x, eps);
    return {empty_output(x), empty_rstd(x)};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
fused_add_rms_norm_meta(const at::Tensor &x, const at::Tensor &residual,
                        const at::Tensor &weight, double eps)
{
    check_fused_add_rms_norm("rowops.fused_add_rms_norm", x, residual, weight,
                             eps);
    return {empty_output(x), empty_output(x), empty_rstd(x)};
}

void fused_add_rms_norm_inplace_meta(const at::Tensor &x,
                                     const at::Tensor &residual,
                                     const at::Tensor &weight, double eps)
{
    check_fused_add_rms_norm_inplace("rowops.fused_add_rms_norm_", x, residual,
                                     weight, eps);
}

at::Tensor
rms_norm_rows_backward_meta(const at::Tensor &grad_y,
                            const std::optional<at::Tensor> &grad_rstd,
                            const at::Tensor &x, const at::Tensor &rstd)
{
    check_rms_norm_rows_backward("rowops.rms_norm_rows_backward", grad_y,
                                 grad_rstd, x, rstd);
    return empty_output(x);
}

std::tuple<at::Tensor, at::Tensor> fused_add_rms_norm_backward_meta(
    const at::Tensor &grad_out,
    const std::optional<at::Tensor> &grad_residual_out,
    const std::optional<at::Tensor> &grad_rstd, const at::Tensor &residual_out,
    const at::Tensor &weight, const at::Tensor &rstd)
{
    check_fused_add_rms_norm_backward("rowops.fused_add_rms_norm_backward",
                                      grad_out, grad_residual_out, grad_rstd,
                                      residual_out, weight, rstd);
    return {empty_output(residual_out), empty_output(weight)};
}

} // namespace

TORCH_LIBRARY_IMPL(rowops, Meta, m)
{
    m.impl("rms_norm_rows_backward", &rms_norm_rows_backward_meta);
    m.impl("fused_add_rms_norm_backward", &fused_add_rms_norm_backward_meta);
    m.impl("rms_norm_rows", &rms_norm_rows_meta);
    m.impl("fused_add_rms_norm", &fused_add_rms_norm_meta);
    m.impl("fused_add_rms_norm_", &fused_add_rms_norm_inplace_meta);
}

} // namespace rowops
