#include "reference.h"
#include "validate.h"

#include <ATen/ATen.h>
#include <torch/library.h>

namespace rowops
{
namespace
{

// rstd = 1/sqrt(mean(h^2) + eps) over the last dim, in the accumulation
// dtype; an empty row has mean 0, so rstd = 1/sqrt(eps).
at::Tensor reference_rstd(const at::Tensor &h_acc)
{
    const bool empty_rows = h_acc.sym_size(-1) == 0;
    const at::Tensor sq = h_acc.square();
    return empty_rows ? sq.sum(-1) : sq.mean(-1);
}

} // namespace

std::tuple<at::Tensor, at::Tensor> rms_norm_rows_reference(const at::Tensor &x,
                                                           double eps)
{
    check_rms_norm_rows("rowops.rms_norm_rows_reference", x, eps);
    const at::Tensor xa = x.to(accumulation_dtype(x.scalar_type()));
    const at::Tensor rstd = at::rsqrt(reference_rstd(xa) + eps);
    const at::Tensor y = (xa * rstd.unsqueeze(-1)).to(x.scalar_type());
    return {y.contiguous(), rstd.contiguous()};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
fused_add_rms_norm_reference(const at::Tensor &x, const at::Tensor &residual,
                             const at::Tensor &weight, double eps)
{
    check_fused_add_rms_norm("rowops.fused_add_rms_norm_reference", x, residual,
                             weight, eps);
    const at::ScalarType acc = accumulation_dtype(x.scalar_type());
    const at::Tensor h = at::add(x, residual); // rounded to x's dtype
    const at::Tensor ha = h.to(acc);
    const at::Tensor rstd = at::rsqrt(reference_rstd(ha) + eps);
    const at::Tensor out =
        (ha * rstd.unsqueeze(-1) * weight.to(acc)).to(x.scalar_type());
    return {out.contiguous(), h.contiguous(), rstd.contiguous()};
}

TORCH_LIBRARY_IMPL(rowops, CompositeImplicitAutograd, m)
{
    m.impl("rms_norm_rows_reference", &rms_norm_rows_reference);
    m.impl("fused_add_rms_norm_reference", &fused_add_rms_norm_reference);
}

} // namespace rowops
