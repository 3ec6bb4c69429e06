#include "validate.h"

#include <ATen/MemoryOverlap.h>
#include <c10/core/SymBool.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

namespace rowops
{
namespace
{

bool is_supported_dtype(at::ScalarType t)
{
    return t == at::kFloat || t == at::kHalf || t == at::kBFloat16 ||
           t == at::kDouble;
}

// Every tensor argument: a tensor (Python's None arrives undefined) with
// strides and storage; sparse (COO, CSR, ...) and mkldnn tensors have
// neither, and the kernels read memory through strides.
void check_dense(const char *op, const char *name, const at::Tensor &t)
{
    TORCH_CHECK(t.defined(), op, ": ", name,
                " must be a tensor (got None or an undefined tensor)");
    TORCH_CHECK(t.layout() == at::kStrided, op, ": ", name,
                " must be a dense (strided) tensor (got layout ", t.layout(),
                "; call .to_dense() first)");
}

// The tensor rows are normalized over (x, or h in the backward).
void check_rows_tensor(const char *op, const char *name, const at::Tensor &x)
{
    check_dense(op, name, x);
    TORCH_CHECK(x.dim() >= 1, op, ": ", name,
                " must have rank >= 1 and is normalized over its last "
                "dimension (got a 0-dim tensor)");
    TORCH_CHECK(is_supported_dtype(x.scalar_type()), op, ": ", name,
                " must be float32, float16, bfloat16 or float64 (got ",
                x.scalar_type(), ")");
}

void check_x_and_eps(const char *op, const at::Tensor &x, double eps)
{
    check_rows_tensor(op, "x", x);
    TORCH_CHECK(std::isfinite(eps) && eps >= 0.0, op,
                ": eps must be finite and >= 0 (got ", eps, ")");
}

void check_weight(const char *op, const at::Tensor &weight, const char *x_name,
                  const at::Tensor &x)
{
    check_dense(op, "weight", weight);
    TORCH_CHECK(weight.dim() == 1, op,
                ": weight must have shape [N] where N is ", x_name,
                "'s last dimension (", x.sym_size(-1), "); got shape ",
                weight.sym_sizes());
    TORCH_SYM_CHECK(weight.sym_size(0).sym_eq(x.sym_size(-1)), op,
                    ": weight must have shape [N] where N is ", x_name,
                    "'s last dimension (", x.sym_size(-1), "); got shape ",
                    weight.sym_sizes());
    TORCH_CHECK(weight.scalar_type() == x.scalar_type() ||
                    weight.scalar_type() == at::kFloat,
                op, ": weight must have ", x_name, "'s dtype ", x.scalar_type(),
                " or float32 (got ", weight.scalar_type(), ")");
    TORCH_CHECK(weight.device() == x.device(), op, ": weight must be on ",
                x_name, "'s device ", x.device(), " (got ", weight.device(),
                ")");
}

// Byte range [begin, end) a tensor can touch in its storage, symbolically.
void byte_range(const at::Tensor &t, c10::SymInt &begin, c10::SymInt &end)
{
    const int64_t item = static_cast<int64_t>(t.element_size());
    c10::SymInt last = 0;
    for (int64_t d = 0; d < t.dim(); ++d)
        last = last + (t.sym_size(d) - 1) * t.sym_stride(d);
    begin = t.sym_storage_offset() * item;
    end = begin + (last + 1) * item;
}

// No two elements of t share memory. ATen answers "yes" (a zero stride)
// and "no" (dense) but "too hard" for the rest (row-sliced, as_strided);
// there, the dimensions ordered by stride must each step past the extent
// of the smaller ones (stride >= sum of (size - 1) * stride below it + 1):
// a sufficient rule, so interleaved layouts that happen not to collide
// (e.g. sizes (2, 3), strides (3, 2)) are refused too.
bool internally_disjoint(const at::Tensor &t)
{
    const at::MemOverlap known = at::has_internal_overlap(t);
    if (known != at::MemOverlap::TooHard)
        return known == at::MemOverlap::No;
    if (t.sym_numel().sym_eq(0).guard_bool(__FILE__, __LINE__))
        return true;
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < t.dim(); ++d)
        if (t.sym_size(d).sym_gt(1).guard_bool(__FILE__, __LINE__))
            dims.push_back(d);
    std::sort(dims.begin(), dims.end(), [&](int64_t a, int64_t b) {
        return t.sym_stride(a)
            .sym_lt(t.sym_stride(b))
            .guard_bool(__FILE__, __LINE__);
    });
    c10::SymInt extent = 0; // the largest offset the smaller dims reach
    for (const int64_t d : dims) {
        if (t.sym_stride(d).sym_le(extent).guard_bool(__FILE__, __LINE__))
            return false;
        extent = extent + (t.sym_size(d) - 1) * t.sym_stride(d);
    }
    return true;
}

void check_no_internal_overlap(const char *op, const char *name,
                               const at::Tensor &t)
{
    TORCH_CHECK(internally_disjoint(t), op, ": ", name,
                " is written in place and must not have internal overlap "
                "(several elements sharing memory, e.g. from expand or "
                "as_strided; sizes ",
                t.sym_sizes(), ", strides ", t.sym_strides(), ")");
}

// a and b share bytes of one storage (their byte ranges intersect).
bool ranges_intersect(const at::Tensor &a, const at::Tensor &b)
{
    if (!a.is_alias_of(b))
        return false; // different storages cannot overlap
    if (a.sym_numel().sym_eq(0).guard_bool(__FILE__, __LINE__) ||
        b.sym_numel().sym_eq(0).guard_bool(__FILE__, __LINE__))
        return false;
    c10::SymInt ab, ae, bb, be;
    byte_range(a, ab, ae);
    byte_range(b, bb, be);
    return ab.sym_lt(be).sym_and(bb.sym_lt(ae)).guard_bool(__FILE__, __LINE__);
}

// Same shape, dtype and device as a reference tensor.
void check_like(const char *op, const char *name, const at::Tensor &t,
                const char *ref_name, const at::Tensor &ref)
{
    check_dense(op, name, t);
    bool same = t.dim() == ref.dim();
    for (int64_t d = 0; same && d < t.dim(); ++d)
        same = t.sym_size(d)
                   .sym_eq(ref.sym_size(d))
                   .guard_bool(__FILE__, __LINE__);
    TORCH_CHECK(same, op, ": ", name, " must have the shape of ", ref_name, " ",
                ref.sym_sizes(), " (got ", t.sym_sizes(), ")");
    TORCH_CHECK(t.scalar_type() == ref.scalar_type(), op, ": ", name,
                " must have the dtype of ", ref_name, " ", ref.scalar_type(),
                " (got ", t.scalar_type(), ")");
    TORCH_CHECK(t.device() == ref.device(), op, ": ", name,
                " must be on the device of ", ref_name, " ", ref.device(),
                " (got ", t.device(), ")");
}

// rstd as the forward returns it for h: h's leading shape, accumulation
// dtype, h's device.
void check_rstd(const char *op, const char *name, const at::Tensor &rstd,
                const char *h_name, const at::Tensor &h)
{
    check_dense(op, name, rstd);
    bool same = rstd.dim() == h.dim() - 1;
    for (int64_t d = 0; same && d < rstd.dim(); ++d)
        same = rstd.sym_size(d)
                   .sym_eq(h.sym_size(d))
                   .guard_bool(__FILE__, __LINE__);
    TORCH_CHECK(same, op, ": ", name, " must have shape ", h_name,
                ".shape[:-1] = ", h.sym_sizes().slice(0, h.dim() - 1), " (got ",
                rstd.sym_sizes(), ")");
    const at::ScalarType acc = accumulation_dtype(h.scalar_type());
    TORCH_CHECK(rstd.scalar_type() == acc, op, ": ", name, " must be ", acc,
                " for ", h_name, " of dtype ", h.scalar_type(), " (got ",
                rstd.scalar_type(), ")");
    TORCH_CHECK(rstd.device() == h.device(), op, ": ", name,
                " must be on the device of ", h_name, " ", h.device(), " (got ",
                rstd.device(), ")");
}

} // namespace

at::ScalarType accumulation_dtype(at::ScalarType x)
{
    return x == at::kDouble ? at::kDouble : at::kFloat;
}

void check_rms_norm_rows(const char *op, const at::Tensor &x, double eps)
{
    check_x_and_eps(op, x, eps);
}

void check_fused_add_rms_norm(const char *op, const at::Tensor &x,
                              const at::Tensor &residual,
                              const at::Tensor &weight, double eps)
{
    check_x_and_eps(op, x, eps);
    check_dense(op, "residual", residual);
    TORCH_CHECK(residual.dim() == x.dim(), op,
                ": residual must have the same shape as x (got ",
                residual.sym_sizes(), " and ", x.sym_sizes(), ")");
    for (int64_t d = 0; d < x.dim(); ++d)
        TORCH_SYM_CHECK(residual.sym_size(d).sym_eq(x.sym_size(d)), op,
                        ": residual must have the same shape as x (got ",
                        residual.sym_sizes(), " and ", x.sym_sizes(), ")");
    TORCH_CHECK(residual.scalar_type() == x.scalar_type(), op,
                ": residual must have x's dtype ", x.scalar_type(), " (got ",
                residual.scalar_type(), ")");
    TORCH_CHECK(residual.device() == x.device(), op,
                ": residual must be on x's device ", x.device(), " (got ",
                residual.device(), ")");
    check_weight(op, weight, "x", x);
}

void check_rms_norm_rows_backward(const char *op, const at::Tensor &grad_y,
                                  const std::optional<at::Tensor> &grad_rstd,
                                  const at::Tensor &x, const at::Tensor &rstd)
{
    check_rows_tensor(op, "x", x);
    check_like(op, "grad_y", grad_y, "x", x);
    check_rstd(op, "rstd", rstd, "x", x);
    if (grad_rstd.has_value())
        check_like(op, "grad_rstd", *grad_rstd, "rstd", rstd);
}

void check_fused_add_rms_norm_backward(
    const char *op, const at::Tensor &grad_out,
    const std::optional<at::Tensor> &grad_residual_out,
    const std::optional<at::Tensor> &grad_rstd, const at::Tensor &residual_out,
    const at::Tensor &weight, const at::Tensor &rstd)
{
    check_rows_tensor(op, "residual_out", residual_out);
    check_weight(op, weight, "residual_out", residual_out);
    check_like(op, "grad_out", grad_out, "residual_out", residual_out);
    if (grad_residual_out.has_value())
        check_like(op, "grad_residual_out", *grad_residual_out, "residual_out",
                   residual_out);
    check_rstd(op, "rstd", rstd, "residual_out", residual_out);
    if (grad_rstd.has_value())
        check_like(op, "grad_rstd", *grad_rstd, "rstd", rstd);
}

void check_fused_add_rms_norm_inplace(const char *op, const at::Tensor &x,
                                      const at::Tensor &residual,
                                      const at::Tensor &weight, double eps)
{
    check_fused_add_rms_norm(op, x, residual, weight, eps);
    check_no_internal_overlap(op, "x", x);
    check_no_internal_overlap(op, "residual", residual);
    TORCH_CHECK(!ranges_intersect(x, residual), op,
                ": x and residual are both written in place and must not "
                "overlap in memory (their byte ranges in one storage "
                "intersect)");
    // weight is read while both are written (as x.mul_(x[0]) is refused)
    for (const auto &[name, t] :
         {std::pair<const char *, const at::Tensor *>{"x", &x},
          {"residual", &residual}})
        TORCH_CHECK(!ranges_intersect(weight, *t), op, ": ", name,
                    " is written in place and weight, which is read, must "
                    "not overlap it in memory (their byte ranges in one "
                    "storage intersect)");
}

} // namespace rowops
