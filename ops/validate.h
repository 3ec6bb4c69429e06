// One validation for every implementation (CPU, CUDA, Meta, reference):
// written over symbolic sizes so real and fake execution raise the same
// errors. Each message names the op, the argument and the rule.
#pragma once

#include <ATen/core/Tensor.h>

#include <optional>

namespace rowops
{

void check_rms_norm_rows(const char *op, const at::Tensor &x, double eps);

void check_fused_add_rms_norm(const char *op, const at::Tensor &x,
                              const at::Tensor &residual,
                              const at::Tensor &weight, double eps);

// The in-place form also forbids x/residual overlap and internal overlap.
void check_fused_add_rms_norm_inplace(const char *op, const at::Tensor &x,
                                      const at::Tensor &residual,
                                      const at::Tensor &weight, double eps);

// Backward arguments: h (x, or residual_out) as the forward's x, every
// gradient h's (or rstd's) shape, dtype and device, rstd as returned.
void check_rms_norm_rows_backward(const char *op, const at::Tensor &grad_y,
                                  const std::optional<at::Tensor> &grad_rstd,
                                  const at::Tensor &x, const at::Tensor &rstd);

void check_fused_add_rms_norm_backward(
    const char *op, const at::Tensor &grad_out,
    const std::optional<at::Tensor> &grad_residual_out,
    const std::optional<at::Tensor> &grad_rstd, const at::Tensor &residual_out,
    const at::Tensor &weight, const at::Tensor &rstd);

// float32 for float32/float16/bfloat16, float64 for float64.
at::ScalarType accumulation_dtype(at::ScalarType x);

} // namespace rowops
