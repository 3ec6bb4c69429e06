// One validation for every implementation (CPU, CUDA, Meta, reference):
// written over symbolic sizes so real and fake execution raise the same
// errors. Each message names the op, the argument and the rule.
#pragma once

#include <ATen/core/Tensor.h>

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

// float32 for float32/float16/bfloat16, float64 for float64.
at::ScalarType accumulation_dtype(at::ScalarType x);

} // namespace rowops
