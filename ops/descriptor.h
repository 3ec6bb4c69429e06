// at::Tensor -> rowops_tensor, and the call record for each op.
#pragma once

#include <ATen/core/Tensor.h>

extern "C" {
#include "rowops.h"
}

namespace rowops
{

rowops_tensor describe(const at::Tensor &t);

rowops_call make_rms_norm_rows_call(const at::Tensor &x, double eps,
                                    const at::Tensor &out,
                                    const at::Tensor &rstd);

rowops_call make_fused_call(const at::Tensor &x, const at::Tensor &residual,
                            const at::Tensor &weight, double eps,
                            const at::Tensor &out,
                            const at::Tensor &residual_out,
                            const at::Tensor &rstd);

} // namespace rowops
