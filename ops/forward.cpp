#include "forward.h"
#include "block_cache.h"
#include "cuda_runners.h"
#include "descriptor.h"
#include "introspection.h"
#include "outputs.h"
#include "reference.h"
#include "validate.h"

extern "C" {
#include "cpu_features.h"
}

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/library.h>

#include <ATen/record_function.h>

#include <array>
#include <cstdlib>
#include <string>

namespace rowops
{
namespace
{

using cpu_kernel = rowops_cpu_kernel_fn;

} // namespace

const char *kernel_scope_name(rowops_impl impl)
{
    static const std::array<std::string, ROWOPS_IMPL_COUNT + 1> names = [] {
        std::array<std::string, ROWOPS_IMPL_COUNT + 1> n;
        for (int i = 0; i <= ROWOPS_IMPL_COUNT; ++i)
            n[i] = std::string("rowops::kernel::") +
                   rowops_impl_name(static_cast<rowops_impl>(i));
        return n;
    }();
    const unsigned i = static_cast<unsigned>(impl);
    const unsigned count = static_cast<unsigned>(ROWOPS_IMPL_COUNT);
    return names[i < count ? i : count].c_str();
}

namespace
{

void run_cpu(const rowops_call &call, rowops_impl impl, cpu_kernel kernel)
{
    // A profiler scope around the kernel (and its parallel_for): what a
    // tracer (torch.profiler, the bench's attribution pass) sees as the
    // op's own compute; a thread-local check when none is registered.
    RECORD_USER_SCOPE(kernel_scope_name(impl));
    const int64_t rows = rowops_tensor_rows(&call.x);
    at::parallel_for(0, rows, rowops_cpu_grain(&call, impl),
                     [&](int64_t b, int64_t e) { kernel(&call, b, e); });
}

// The implementation the last call on this thread ran (for tests that
// assert which implementation ran, not just which would be chosen).
thread_local rowops_impl last_impl = ROWOPS_IMPL_COUNT;

// ROWOPS_CPU_CAPABILITY with a name the kernels do not apply: raised by
// every CPU call (as ROWOPS_CPU_BLOCK_CACHE_MB), rather than running with
// instruction sets it did not ask for.
void check_cpu_capability()
{
    static const std::string error = [] {
        const char *v = std::getenv(ROWOPS_CPU_CAPABILITY_ENV);
        unsigned keep = 0;
        if (rowops_cpu_capability_parse(v, &keep) == 0)
            return std::string();
        return std::string(ROWOPS_CPU_CAPABILITY_ENV) +
               " must be " ROWOPS_CPU_CAPABILITY_NAMES ", or unset (got '" + v +
               "')";
    }();
    TORCH_CHECK(error.empty(), error);
}

// Runs the chosen kernel. Returns false if the choice is the reference,
// which the caller runs (it has the op-specific arguments).
bool run_kernel(rowops_call &call, const at::Tensor &x)
{
    if (!x.is_cuda())
        check_cpu_capability();
    call.cuda_arch = x.is_cuda() ? cuda_arch(x) : 0;
    const rowops_impl impl = rowops_choose_impl(&call);
    last_impl = impl;
    if (impl == ROWOPS_IMPL_REFERENCE)
        return false;
    const rowops_kernel_info *k = rowops_kernel_info_of(impl);
    if (k->cpu)
        run_cpu(call, impl, k->cpu);
    else
        run_cuda(call, impl, x);
    return true;
}

} // namespace

std::tuple<at::Tensor, at::Tensor> rms_norm_rows(const at::Tensor &x,
                                                 double eps)
{
    check_rms_norm_rows("rowops.rms_norm_rows", x, eps);
    at::Tensor y = kernel_output(x);
    at::Tensor rstd = kernel_rstd(x);
    if (x.numel() == 0 && rstd.numel() == 0)
        return {y, rstd};
    rowops_call call = make_rms_norm_rows_call(x, eps, y, rstd);
    if (!run_kernel(call, x)) {
        auto [ry, rr] = rms_norm_rows_reference(x, eps);
        y.copy_(ry);
        rstd.copy_(rr);
    }
    return {y, rstd};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor>
fused_add_rms_norm(const at::Tensor &x, const at::Tensor &residual,
                   const at::Tensor &weight, double eps)
{
    check_fused_add_rms_norm("rowops.fused_add_rms_norm", x, residual, weight,
                             eps);
    at::Tensor out = kernel_output(x);
    at::Tensor h = kernel_output(x);
    at::Tensor rstd = kernel_rstd(x);
    if (x.numel() == 0 && rstd.numel() == 0)
        return {out, h, rstd};
    rowops_call call = make_fused_call(x, residual, weight, eps, out, h, rstd);
    if (!run_kernel(call, x)) {
        auto [ro, rh, rr] =
            fused_add_rms_norm_reference(x, residual, weight, eps);
        out.copy_(ro);
        h.copy_(rh);
        rstd.copy_(rr);
    }
    return {out, h, rstd};
}

void fused_add_rms_norm_(const at::Tensor &x, const at::Tensor &residual,
                         const at::Tensor &weight, double eps)
{
    check_fused_add_rms_norm_inplace("rowops.fused_add_rms_norm_", x, residual,
                                     weight, eps);
    if (x.numel() == 0)
        return;
    // rstd is not returned by the in-place form; it is scratch.
    at::Tensor rstd = kernel_rstd(x);
    rowops_call call =
        make_fused_call(x, residual, weight, eps, x, residual, rstd);
    if (!run_kernel(call, x)) {
        auto [ro, rh, rr] =
            fused_add_rms_norm_reference(x, residual, weight, eps);
        residual.copy_(rh);
        x.copy_(ro);
    }
}

// The choice a call would make, from its descriptors only: the fresh
// outputs are described, not allocated (FreshOutputs), so explaining a
// call whose outputs would not fit in memory works.
std::string explain_dispatch(const std::string &op, const at::Tensor &x,
                             const std::optional<at::Tensor> &residual,
                             const std::optional<at::Tensor> &weight,
                             double eps)
{
    rowops_call call{};
    if (op == "rms_norm_rows_backward" || op == "fused_add_rms_norm_backward") {
        // The backward's choice depends on h's descriptor only (x stands
        // for h here: residual_out has x's shape, dtype and device).
        check_rms_norm_rows("rowops.explain_dispatch", x, eps);
        return explain_backward_dispatch(x);
    }
    const at::IntArrayRef rows =
        x.dim() ? x.sizes().slice(0, x.dim() - 1) : at::IntArrayRef();
    const at::ScalarType acc = accumulation_dtype(x.scalar_type());
    if (op == "rms_norm_rows") {
        check_rms_norm_rows("rowops.explain_dispatch", x, eps);
        FreshOutputs fresh({&x});
        call.op = ROWOPS_OP_RMS_NORM_ROWS;
        call.x = describe(x);
        call.out = fresh.take(x.sizes(), x.scalar_type());
        call.rstd = fresh.take(rows, acc);
    } else if (op == "fused_add_rms_norm" || op == "fused_add_rms_norm_") {
        TORCH_CHECK(residual.has_value() && weight.has_value(),
                    "rowops.explain_dispatch: op '", op,
                    "' needs residual and weight");
        const bool inplace = op == "fused_add_rms_norm_";
        if (inplace)
            check_fused_add_rms_norm_inplace("rowops.explain_dispatch", x,
                                             *residual, *weight, eps);
        else
            check_fused_add_rms_norm("rowops.explain_dispatch", x, *residual,
                                     *weight, eps);
        FreshOutputs fresh({&x, &*residual, &*weight});
        call.op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
        call.x = describe(x);
        call.residual = describe(*residual);
        call.weight = describe(*weight);
        call.out = inplace ? call.x : fresh.take(x.sizes(), x.scalar_type());
        call.residual_out =
            inplace ? call.residual : fresh.take(x.sizes(), x.scalar_type());
        call.rstd = fresh.take(rows, acc);
    } else {
        TORCH_CHECK(false,
                    "rowops.explain_dispatch: op must be one of "
                    "rms_norm_rows, fused_add_rms_norm, "
                    "fused_add_rms_norm_, rms_norm_rows_backward, "
                    "fused_add_rms_norm_backward (got '",
                    op, "')");
    }
    call.eps = eps;
    call.cuda_arch = x.is_cuda() ? cuda_arch(x) : 0;
    const rowops_choice choice = rowops_choose(&call);
    return std::string(rowops_impl_name(choice.impl)) + ": " + choice.reason;
}

// Test hooks: which implementation the last call on this thread ran, and
// pretending the CPU lacks features (mask of ROWOPS_CPU_*; -1 restores).
std::string last_dispatch()
{
    return last_impl == ROWOPS_IMPL_COUNT ? "" : rowops_impl_name(last_impl);
}

int64_t force_cpu_features(int64_t mask)
{
    return rowops_cpu_features_override(static_cast<int>(mask));
}

int64_t cpu_features()
{
    return static_cast<int64_t>(rowops_cpu_features());
}

TORCH_LIBRARY_IMPL(rowops, CPU, m)
{
    m.impl("rms_norm_rows", &rms_norm_rows);
    m.impl("fused_add_rms_norm", &fused_add_rms_norm);
    m.impl("fused_add_rms_norm_", &fused_add_rms_norm_);
}

// Every other backend: the same entry points, where the eligibility
// function picks a kernel or the reference.
TORCH_LIBRARY_IMPL(rowops, CompositeExplicitAutograd, m)
{
    m.impl("rms_norm_rows", &rms_norm_rows);
    m.impl("fused_add_rms_norm", &fused_add_rms_norm);
    m.impl("fused_add_rms_norm_", &fused_add_rms_norm_);
    m.impl("_explain_dispatch", &explain_dispatch);
}

} // namespace rowops
