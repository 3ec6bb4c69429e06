// The fresh outputs every implementation returns, defined once so real and
// fake (Meta) execution give the same metadata: contiguous, on x's device,
// over symbolic sizes.
#pragma once

#include <ATen/core/Tensor.h>

namespace rowops
{

// x's shape and dtype (out, y, residual_out).
at::Tensor empty_output(const at::Tensor &x);

// The same for a real tensor a kernel writes (never fake or meta): large
// CPU outputs come from the block cache (block_cache.h).
at::Tensor kernel_output(const at::Tensor &x);

// The same for a real tensor a kernel writes (empty_cpu_cached on the
// CPU).
at::Tensor kernel_rstd(const at::Tensor &x);

// x's leading shape in the accumulation dtype (rstd).
at::Tensor empty_rstd(const at::Tensor &x);

} // namespace rowops
