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

// grad_h of the contract's backward, in the accumulation dtype (see
// rowops_backward_call in kernels/rowops.h for the formula).
at::Tensor reference_grad_h(const at::Tensor &gw, const at::Tensor &n,
                            const at::Tensor &r,
                            const std::optional<at::Tensor> &grad_rstd,
                            at::ScalarType acc)
{
    at::Tensor k = r * (gw * n).mean(-1, /*keepdim=*/true);
    if (grad_rstd.has_value())
        k = k + (grad_rstd->to(acc).unsqueeze(-1) * r * r)
                    .div(c10::Scalar(n.sym_size(-1)));
    return r * gw - n * k;
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

at::Tensor
rms_norm_rows_backward_reference(const at::Tensor &grad_y,
                                 const std::optional<at::Tensor> &grad_rstd,
                                 const at::Tensor &x, const at::Tensor &rstd)
{
    check_rms_norm_rows_backward("rowops.rms_norm_rows_backward_reference",
                                 grad_y, grad_rstd, x, rstd);
    const at::ScalarType acc = accumulation_dtype(x.scalar_type());
    const at::Tensor r = rstd.to(acc).unsqueeze(-1);
    const at::Tensor n = x.to(acc) * r;
    const at::Tensor gx =
        reference_grad_h(grad_y.to(acc), n, r, grad_rstd, acc);
    return gx.to(x.scalar_type()).contiguous();
}

std::tuple<at::Tensor, at::Tensor> fused_add_rms_norm_backward_reference(
    const at::Tensor &grad_out,
    const std::optional<at::Tensor> &grad_residual_out,
    const std::optional<at::Tensor> &grad_rstd, const at::Tensor &residual_out,
    const at::Tensor &weight, const at::Tensor &rstd)
{
    check_fused_add_rms_norm_backward(
        "rowops.fused_add_rms_norm_backward_reference", grad_out,
        grad_residual_out, grad_rstd, residual_out, weight, rstd);
    const at::ScalarType acc = accumulation_dtype(residual_out.scalar_type());
    const at::Tensor r = rstd.to(acc).unsqueeze(-1);
    const at::Tensor n = residual_out.to(acc) * r;
    const at::Tensor g = grad_out.to(acc);
    at::Tensor gh = reference_grad_h(g * weight.to(acc), n, r, grad_rstd, acc);
    if (grad_residual_out.has_value())
        gh = gh + grad_residual_out->to(acc);
    // Sum over every leading dimension (rank 1: the single row).
    const c10::SymInt width = residual_out.sym_size(-1);
    const at::Tensor gw = (g * n).reshape_symint({-1, width}).sum(0);
    return {gh.to(residual_out.scalar_type()).contiguous(),
            gw.to(weight.scalar_type()).contiguous()};
}

TORCH_LIBRARY_IMPL(rowops, CompositeImplicitAutograd, m)
{
    m.impl("rms_norm_rows_backward_reference",
           &rms_norm_rows_backward_reference);
    m.impl("fused_add_rms_norm_backward_reference",
           &fused_add_rms_norm_backward_reference);
    m.impl("rms_norm_rows_reference", &rms_norm_rows_reference);
    m.impl("fused_add_rms_norm_reference", &fused_add_rms_norm_reference);
}

} // namespace rowops
