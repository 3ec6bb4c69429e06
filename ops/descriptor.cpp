#include "descriptor.h"

#include <algorithm>

namespace rowops
{
namespace
{

rowops_dtype to_rowops_dtype(at::ScalarType t)
{
    switch (t) {
    case at::kFloat: return ROWOPS_F32;
    case at::kHalf: return ROWOPS_F16;
    case at::kBFloat16: return ROWOPS_BF16;
    case at::kDouble: return ROWOPS_F64;
    default: TORCH_INTERNAL_ASSERT(false, "rowops: unvalidated dtype ", t);
    }
}

rowops_device to_rowops_device(const at::Device &d)
{
    if (d.is_cpu())
        return ROWOPS_DEVICE_CPU;
    if (d.is_cuda())
        return ROWOPS_DEVICE_CUDA;
    return ROWOPS_DEVICE_OTHER;
}

rowops_tensor describe_if(const at::Tensor &t)
{
    return t.defined() ? describe(t) : rowops_tensor{};
}

rowops_tensor describe_if(const std::optional<at::Tensor> &t)
{
    return t.has_value() ? describe(*t) : rowops_tensor{};
}

} // namespace

rowops_tensor describe(const at::Tensor &t)
{
    rowops_tensor d{};
    d.data = t.data_ptr();
    d.dtype = to_rowops_dtype(t.scalar_type());
    d.device = to_rowops_device(t.device());
    const at::IntArrayRef sizes = t.sizes(), strides = t.strides();
    d.rank = static_cast<int>(sizes.size());
    if (d.rank <= ROWOPS_MAX_RANK) {
        for (int i = 0; i < d.rank; ++i) {
            d.sizes[i] = sizes[i];
            d.strides[i] = strides[i];
        }
    }
    return d;
}

namespace
{

constexpr uintptr_t kFreshAlign = 4096;

uintptr_t align_up(uintptr_t v)
{
    return (v + kFreshAlign - 1) / kFreshAlign * kFreshAlign;
}

// One past the last byte t can touch.
uintptr_t end_of(const at::Tensor &t)
{
    int64_t last = 0;
    for (int64_t d = 0; d < t.dim(); ++d)
        last += (t.size(d) - 1) * t.stride(d);
    const uintptr_t begin = reinterpret_cast<uintptr_t>(t.data_ptr());
    return t.numel() == 0
               ? begin
               : begin + static_cast<uintptr_t>(last + 1) * t.element_size();
}

} // namespace

FreshOutputs::FreshOutputs(std::initializer_list<const at::Tensor *> inputs)
    : device_((*inputs.begin())->device().is_cpu()    ? ROWOPS_DEVICE_CPU
              : (*inputs.begin())->device().is_cuda() ? ROWOPS_DEVICE_CUDA
                                                      : ROWOPS_DEVICE_OTHER)
{
    for (const at::Tensor *t : inputs)
        next_ = std::max(next_, end_of(*t));
    next_ = align_up(next_ + 1);
}

rowops_tensor FreshOutputs::take(at::IntArrayRef sizes, at::ScalarType dtype)
{
    rowops_tensor d{};
    d.data = reinterpret_cast<void *>(next_);
    d.dtype = to_rowops_dtype(dtype);
    d.device = device_;
    d.rank = static_cast<int>(sizes.size());
    int64_t numel = 1;
    for (int i = d.rank - 1; i >= 0; --i) {
        if (i < ROWOPS_MAX_RANK) {
            d.sizes[i] = sizes[i];
            d.strides[i] = numel;
        }
        numel *= std::max<int64_t>(sizes[i], 1);
    }
    next_ = align_up(next_ + static_cast<uintptr_t>(numel) *
                                 rowops_dtype_size(d.dtype));
    return d;
}

rowops_call make_rms_norm_rows_call(const at::Tensor &x, double eps,
                                    const at::Tensor &out,
                                    const at::Tensor &rstd)
{
    rowops_call c{};
    c.op = ROWOPS_OP_RMS_NORM_ROWS;
    c.x = describe(x);
    c.out = describe(out);
    c.rstd = describe(rstd);
    c.eps = eps;
    return c;
}

rowops_call make_fused_call(const at::Tensor &x, const at::Tensor &residual,
                            const at::Tensor &weight, double eps,
                            const at::Tensor &out,
                            const at::Tensor &residual_out,
                            const at::Tensor &rstd)
{
    rowops_call c{};
    c.op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
    c.x = describe(x);
    c.residual = describe(residual);
    c.weight = describe(weight);
    c.out = describe(out);
    c.residual_out = describe(residual_out);
    c.rstd = describe(rstd);
    c.eps = eps;
    return c;
}

rowops_backward_call
make_backward_call(rowops_op op, const at::Tensor &grad_out,
                   const std::optional<at::Tensor> &grad_residual_out,
                   const std::optional<at::Tensor> &grad_rstd,
                   const at::Tensor &h, const at::Tensor &weight,
                   const at::Tensor &rstd, const at::Tensor &grad_h)
{
    rowops_backward_call c{};
    c.op = op;
    c.grad_out = describe(grad_out);
    c.grad_residual_out = describe_if(grad_residual_out);
    c.grad_rstd = describe_if(grad_rstd);
    c.h = describe(h);
    c.weight = describe_if(weight);
    c.rstd = describe(rstd);
    c.grad_h = describe(grad_h);
    return c;
}

} // namespace rowops
