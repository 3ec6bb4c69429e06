// at::Tensor -> rowops_tensor, and the call record for each op.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <initializer_list>
#include <optional>

extern "C" {
#include "rowops.h"
}

namespace rowops
{

rowops_tensor describe(const at::Tensor &t);

// The descriptors of the fresh contiguous outputs a call would allocate,
// without allocating them (explain_dispatch): on the inputs' device, laid
// out one after another past every input's bytes (so they overlap none,
// as fresh outputs never do), each 4096-byte aligned (the allocators
// align to 64 bytes on the CPU, more on CUDA).
class FreshOutputs
{
  public:
    explicit FreshOutputs(std::initializer_list<const at::Tensor *> inputs);
    rowops_tensor take(at::IntArrayRef sizes, at::ScalarType dtype);

  private:
    rowops_device device_;
    uintptr_t next_ = 0;
};

rowops_call make_rms_norm_rows_call(const at::Tensor &x, double eps,
                                    const at::Tensor &out,
                                    const at::Tensor &rstd);

rowops_call make_fused_call(const at::Tensor &x, const at::Tensor &residual,
                            const at::Tensor &weight, double eps,
                            const at::Tensor &out,
                            const at::Tensor &residual_out,
                            const at::Tensor &rstd);

// The backward call; absent optional tensors (and weight for
// rms_norm_rows, passed as an undefined tensor) get an empty descriptor.
rowops_backward_call
make_backward_call(rowops_op op, const at::Tensor &grad_out,
                   const std::optional<at::Tensor> &grad_residual_out,
                   const std::optional<at::Tensor> &grad_rstd,
                   const at::Tensor &h, const at::Tensor &weight,
                   const at::Tensor &rstd, const at::Tensor &grad_h);

} // namespace rowops
