// Autograd for the rowops ops, registered on the Autograd key so eager,
// C++ callers, torch.compile and torch.export all differentiate through the
// registered backward ops.
//
// Saved for backward: h (x for rms_norm_rows, residual_out for the fused
// op), rstd and weight; the normalized row h * rstd is recomputed. h is an
// output the model keeps anyway as its residual stream; rstd costs 4 bytes
// per row (docs/training-and-compile.md: "Training").
//
// Forward-mode AD (torch.func.jvp/jacfwd, torch.autograd.forward_ad): the
// kernels have no tangent formula, so a call whose inputs carry a tangent
// runs the aten reference composite instead (ops/reference.cpp: the same
// contract), whose aten ops propagate tangents and, when asked, record
// the reverse graph too.
#include "op_handle.h"
#include "reference.h"

#include <ATen/core/dispatch/Dispatcher.h>
#include <ATen/core/grad_mode.h>
#include <torch/autograd.h>
#include <torch/library.h>

namespace rowops
{
namespace
{

using at::Tensor;
using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

std::optional<Tensor> given(const Tensor &t)
{
    return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

// The forward ops' handles, called below autograd by each Function's
// forward and by the no-graph fast path.
using RowsForward = std::tuple<Tensor, Tensor>(const Tensor &, double);
using FusedForward = std::tuple<Tensor, Tensor, Tensor>(const Tensor &,
                                                        const Tensor &,
                                                        const Tensor &, double);
using InplaceForward = void(const Tensor &, const Tensor &, const Tensor &,
                            double);

const c10::TypedOperatorHandle<RowsForward> &rows_forward()
{
    static const auto h =
        rowops::op_handle<RowsForward>("rowops::rms_norm_rows");
    return h;
}

const c10::TypedOperatorHandle<FusedForward> &fused_forward()
{
    static const auto h =
        rowops::op_handle<FusedForward>("rowops::fused_add_rms_norm");
    return h;
}

const c10::TypedOperatorHandle<InplaceForward> &inplace_forward()
{
    static const auto h =
        rowops::op_handle<InplaceForward>("rowops::fused_add_rms_norm_");
    return h;
}

class RmsNormRows : public torch::autograd::Function<RmsNormRows>
{
  public:
    static variable_list forward(AutogradContext *ctx, const Tensor &x,
                                 double eps)
    {
        const auto &fwd = rows_forward();
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        auto [y, rstd] = fwd.call(x, eps);
        ctx->save_for_backward({x, rstd});
        ctx->set_materialize_grads(false);
        return {y, rstd};
    }

    static variable_list backward(AutogradContext *ctx, variable_list grads)
    {
        static const auto bwd = rowops::op_handle<Tensor(
            const Tensor &, const std::optional<Tensor> &, const Tensor &,
            const Tensor &)>("rowops::rms_norm_rows_backward");
        const auto saved = ctx->get_saved_variables();
        const Tensor &x = saved[0], &rstd = saved[1];
        const Tensor grad_y = grads[0].defined() ? grads[0] : at::zeros_like(x);
        return {bwd.call(grad_y, given(grads[1]), x, rstd), Tensor()};
    }
};

class FusedAddRmsNorm : public torch::autograd::Function<FusedAddRmsNorm>
{
  public:
    static variable_list forward(AutogradContext *ctx, const Tensor &x,
                                 const Tensor &residual, const Tensor &weight,
                                 double eps)
    {
        const auto &fwd = fused_forward();
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        auto [out, h, rstd] = fwd.call(x, residual, weight, eps);
        ctx->save_for_backward({h, weight, rstd});
        ctx->set_materialize_grads(false);
        return {out, h, rstd};
    }

    static variable_list backward(AutogradContext *ctx, variable_list grads)
    {
        static const auto bwd = rowops::op_handle<std::tuple<Tensor, Tensor>(
            const Tensor &, const std::optional<Tensor> &,
            const std::optional<Tensor> &, const Tensor &, const Tensor &,
            const Tensor &)>("rowops::fused_add_rms_norm_backward");
        const auto saved = ctx->get_saved_variables();
        const Tensor &h = saved[0], &weight = saved[1], &rstd = saved[2];
        const Tensor grad_out =
            grads[0].defined() ? grads[0] : at::zeros_like(h);
        auto [grad_h, grad_weight] = bwd.call(grad_out, given(grads[1]),
                                              given(grads[2]), h, weight, rstd);
        // h = x + residual: both receive grad_h (as aten's add does).
        return {grad_h, grad_h, grad_weight, Tensor()};
    }
};

// The in-place form has no backward: a tensor it wrote carries a node that
// raises if a gradient is ever asked for through it.
class FusedAddRmsNormInplace
    : public torch::autograd::Function<FusedAddRmsNormInplace>
{
  public:
    static variable_list forward(AutogradContext *ctx, const Tensor &x,
                                 const Tensor &residual, const Tensor &weight,
                                 double eps)
    {
        const auto &fwd = inplace_forward();
        {
            at::AutoDispatchBelowADInplaceOrView below_autograd;
            fwd.call(x, residual, weight, eps);
        }
        torch::autograd::impl::bump_version(x);
        torch::autograd::impl::bump_version(residual);
        ctx->mark_dirty({x, residual});
        return {x, residual};
    }

    static variable_list backward(AutogradContext *, variable_list)
    {
        TORCH_CHECK(false,
                    "rowops.fused_add_rms_norm_: the in-place form is not "
                    "differentiable; use rowops.fused_add_rms_norm (returns "
                    "out, residual_out, rstd) where gradients are needed");
    }
};

[[noreturn]] void no_double_backward(const char *op)
{
    TORCH_CHECK(false, op,
                ": double backward (the gradient of a gradient) is not "
                "implemented");
}

// The backward ops are differentiable once: their outputs carry a node that
// raises if a gradient of the gradient is ever asked for.
class RmsNormRowsBackward
    : public torch::autograd::Function<RmsNormRowsBackward>
{
  public:
    static variable_list forward(AutogradContext *, const Tensor &grad_y,
                                 const std::optional<Tensor> &grad_rstd,
                                 const Tensor &x, const Tensor &rstd)
    {
        static const auto bwd = rowops::op_handle<Tensor(
            const Tensor &, const std::optional<Tensor> &, const Tensor &,
            const Tensor &)>("rowops::rms_norm_rows_backward");
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        return {bwd.call(grad_y, grad_rstd, x, rstd)};
    }

    static variable_list backward(AutogradContext *, variable_list)
    {
        no_double_backward("rowops.rms_norm_rows_backward");
    }
};

class FusedAddRmsNormBackward
    : public torch::autograd::Function<FusedAddRmsNormBackward>
{
  public:
    static variable_list forward(AutogradContext *, const Tensor &grad_out,
                                 const std::optional<Tensor> &grad_residual_out,
                                 const std::optional<Tensor> &grad_rstd,
                                 const Tensor &residual_out,
                                 const Tensor &weight, const Tensor &rstd)
    {
        static const auto bwd = rowops::op_handle<std::tuple<Tensor, Tensor>(
            const Tensor &, const std::optional<Tensor> &,
            const std::optional<Tensor> &, const Tensor &, const Tensor &,
            const Tensor &)>("rowops::fused_add_rms_norm_backward");
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        auto [grad_h, grad_weight] = bwd.call(
            grad_out, grad_residual_out, grad_rstd, residual_out, weight, rstd);
        return {grad_h, grad_weight};
    }

    static variable_list backward(AutogradContext *, variable_list)
    {
        no_double_backward("rowops.fused_add_rms_norm_backward");
    }
};

// Any input with a forward-mode tangent (dual level 0, the one level
// forward AD and functorch's jvp use).
bool has_tangent(std::initializer_list<const Tensor *> inputs)
{
    for (const Tensor *t : inputs)
        if (t->defined() && t->_fw_grad(0).defined())
            return true;
    return false;
}

bool has_tangent(const std::optional<Tensor> &t)
{
    return t.has_value() && has_tangent({&*t});
}

// Without a tensor that requires grad (or with grad mode off) no graph is
// recorded: the call goes straight below autograd, skipping
// Function::apply's bookkeeping (about 1 us per call, measured at B = 1).
bool records_graph(std::initializer_list<const Tensor *> inputs)
{
    if (!at::GradMode::is_enabled())
        return false;
    for (const Tensor *t : inputs)
        if (t->requires_grad())
            return true;
    return false;
}

std::tuple<Tensor, Tensor> rms_norm_rows_autograd(const Tensor &x, double eps)
{
    if (has_tangent({&x}))
        return rms_norm_rows_reference(x, eps);
    if (!records_graph({&x})) {
        const auto &fwd = rows_forward();
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        return fwd.call(x, eps);
    }
    auto out = RmsNormRows::apply(x, eps);
    return {out[0], out[1]};
}

std::tuple<Tensor, Tensor, Tensor>
fused_add_rms_norm_autograd(const Tensor &x, const Tensor &residual,
                            const Tensor &weight, double eps)
{
    if (has_tangent({&x, &residual, &weight}))
        return fused_add_rms_norm_reference(x, residual, weight, eps);
    if (!records_graph({&x, &residual, &weight})) {
        const auto &fwd = fused_forward();
        at::AutoDispatchBelowADInplaceOrView below_autograd;
        return fwd.call(x, residual, weight, eps);
    }
    auto out = FusedAddRmsNorm::apply(x, residual, weight, eps);
    return {out[0], out[1], out[2]};
}

void fused_add_rms_norm_inplace_autograd(const Tensor &x,
                                         const Tensor &residual,
                                         const Tensor &weight, double eps)
{
    if (has_tangent({&x, &residual, &weight})) {
        // The reference's results copied in: copy_ carries the tangents
        // into x and residual. The reverse graph it would record too
        // would make the in-place form differentiable in this mode only.
        TORCH_CHECK(!records_graph({&x, &residual, &weight}),
                    "rowops.fused_add_rms_norm_: forward-mode AD (a tangent on "
                    "x, residual or weight) together with reverse mode (an "
                    "input that requires grad) is not supported by the "
                    "in-place form; use rowops.fused_add_rms_norm");
        auto [out, h, rstd] =
            fused_add_rms_norm_reference(x, residual, weight, eps);
        residual.copy_(h);
        x.copy_(out);
        return;
    }
    // Writes to tensors that require grad, or to views of ones that do,
    // go through the Function so the graph sees them (and refuses them).
    if (!records_graph({&x, &residual, &weight}) && !x.is_view() &&
        !residual.is_view()) {
        const auto &fwd = inplace_forward();
        {
            at::AutoDispatchBelowADInplaceOrView below_autograd;
            fwd.call(x, residual, weight, eps);
        }
        torch::autograd::impl::bump_version(x);
        torch::autograd::impl::bump_version(residual);
        return;
    }
    FusedAddRmsNormInplace::apply(x, residual, weight, eps);
}

Tensor rms_norm_rows_backward_autograd(const Tensor &grad_y,
                                       const std::optional<Tensor> &grad_rstd,
                                       const Tensor &x, const Tensor &rstd)
{
    if (has_tangent({&grad_y, &x, &rstd}) || has_tangent(grad_rstd))
        return rms_norm_rows_backward_reference(grad_y, grad_rstd, x, rstd);
    return RmsNormRowsBackward::apply(grad_y, grad_rstd, x, rstd)[0];
}

std::tuple<Tensor, Tensor> fused_add_rms_norm_backward_autograd(
    const Tensor &grad_out, const std::optional<Tensor> &grad_residual_out,
    const std::optional<Tensor> &grad_rstd, const Tensor &residual_out,
    const Tensor &weight, const Tensor &rstd)
{
    if (has_tangent({&grad_out, &residual_out, &weight, &rstd}) ||
        has_tangent(grad_residual_out) || has_tangent(grad_rstd))
        return fused_add_rms_norm_backward_reference(
            grad_out, grad_residual_out, grad_rstd, residual_out, weight, rstd);
    auto out = FusedAddRmsNormBackward::apply(
        grad_out, grad_residual_out, grad_rstd, residual_out, weight, rstd);
    return {out[0], out[1]};
}

} // namespace

TORCH_LIBRARY_IMPL(rowops, Autograd, m)
{
    m.impl("rms_norm_rows", &rms_norm_rows_autograd);
    m.impl("fused_add_rms_norm", &fused_add_rms_norm_autograd);
    m.impl("fused_add_rms_norm_", &fused_add_rms_norm_inplace_autograd);
    m.impl("rms_norm_rows_backward", &rms_norm_rows_backward_autograd);
    m.impl("fused_add_rms_norm_backward",
           &fused_add_rms_norm_backward_autograd);
}

} // namespace rowops
