// The backward ops for real tensors: validate, allocate, ask the backward
// eligibility function, run the strided CPU kernel (rows split across
// threads, the weight gradient summed in two stages) or the reference.
#include "backward.h"
#include "cuda_runners.h"
#include "descriptor.h"
#include "introspection.h"
#include "outputs.h"
#include "reference.h"
#include "validate.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <atomic>
#include <torch/library.h>

namespace rowops
{
namespace
{

// Stage 1: each of P contiguous row chunks (P = the thread count, so one
// per thread) sums its rows' grad_out * n into its own float64 partial
// row (blocked: rowops_cpu_backward_strided); stage 2 sums the P rows in
// float64. Deterministic for a given thread count. Returns the [P, N]
// partials (P = 0 without a weight gradient).
at::Tensor run_backward_cpu(const rowops_backward_call &call, int64_t rows,
                            int64_t n, bool weight_grad)
{
    const int64_t chunks =
        std::max<int64_t>(1, std::min<int64_t>(rows, at::get_num_threads()));
    const at::TensorOptions bytes = at::TensorOptions(at::kByte);
    at::Tensor partial = at::empty({weight_grad ? chunks : 0, n},
                                   at::TensorOptions(at::kDouble));
    const int64_t scratch_bytes =
        weight_grad ? static_cast<int64_t>(rowops_backward_scratch_bytes(&call))
                    : 0;
    at::Tensor scratch =
        at::empty({weight_grad ? chunks : 0, scratch_bytes}, bytes);
    const int64_t per = (rows + chunks - 1) / chunks;
    at::parallel_for(0, chunks, 1, [&](int64_t b, int64_t e) {
        for (int64_t c = b; c < e; ++c) {
            const int64_t lo = std::min(rows, c * per),
                          hi = std::min(rows, lo + per);
            double *part =
                weight_grad ? partial.data_ptr<double>() + c * n : nullptr;
            void *scr = weight_grad
                            ? scratch.data_ptr<uint8_t>() + c * scratch_bytes
                            : nullptr;
            rowops_cpu_backward_strided(&call, lo, hi, part, scr);
        }
    });
    return partial;
}

// The implementation the last backward in this process ran. Not
// thread-local as the forward's is: the autograd engine runs a CUDA
// tensor's backward on its own thread per device, never the caller's, so
// a thread-local record was empty where the caller looked (gpu-check on
// an H200, 2026-12-04).
std::atomic<rowops_impl> last_backward_impl{ROWOPS_IMPL_COUNT};

} // namespace

at::Tensor rms_norm_rows_backward(const at::Tensor &grad_y,
                                  const std::optional<at::Tensor> &grad_rstd,
                                  const at::Tensor &x, const at::Tensor &rstd)
{
    check_rms_norm_rows_backward("rowops.rms_norm_rows_backward", grad_y,
                                 grad_rstd, x, rstd);
    at::Tensor grad_x = kernel_output(x);
    if (x.numel() == 0)
        return grad_x;
    rowops_backward_call call =
        make_backward_call(ROWOPS_OP_RMS_NORM_ROWS, grad_y, std::nullopt,
                           grad_rstd, x, at::Tensor(), rstd, grad_x);
    call.cuda_arch = x.is_cuda() ? cuda_arch(x) : 0;
    const rowops_choice choice = rowops_choose_backward(&call);
    last_backward_impl = choice.impl;
    if (choice.impl == ROWOPS_IMPL_CUDA_STRIDED) {
        run_backward_cuda(call, x, at::Tensor());
        return grad_x;
    }
    if (choice.impl != ROWOPS_IMPL_CPU_STRIDED)
        return rms_norm_rows_backward_reference(grad_y, grad_rstd, x, rstd);
    run_backward_cpu(call, x.numel() / x.size(-1), x.size(-1), false);
    return grad_x;
}

std::tuple<at::Tensor, at::Tensor>
fused_add_rms_norm_backward(const at::Tensor &grad_out,
                            const std::optional<at::Tensor> &grad_residual_out,
                            const std::optional<at::Tensor> &grad_rstd,
                            const at::Tensor &residual_out,
                            const at::Tensor &weight, const at::Tensor &rstd)
{
    check_fused_add_rms_norm_backward("rowops.fused_add_rms_norm_backward",
                                      grad_out, grad_residual_out, grad_rstd,
                                      residual_out, weight, rstd);
    const at::Tensor &h = residual_out;
    at::Tensor grad_h = kernel_output(h);
    at::Tensor grad_weight = empty_output(weight);
    if (h.numel() == 0) {
        grad_weight.zero_(); // a sum over no rows
        return {grad_h, grad_weight};
    }
    rowops_backward_call call = make_backward_call(
        ROWOPS_OP_FUSED_ADD_RMS_NORM, grad_out, grad_residual_out, grad_rstd, h,
        weight, rstd, grad_h);
    call.cuda_arch = h.is_cuda() ? cuda_arch(h) : 0;
    const rowops_choice choice = rowops_choose_backward(&call);
    last_backward_impl = choice.impl;
    if (choice.impl == ROWOPS_IMPL_CUDA_STRIDED) {
        run_backward_cuda(call, h, grad_weight);
        return {grad_h, grad_weight};
    }
    if (choice.impl != ROWOPS_IMPL_CPU_STRIDED)
        return fused_add_rms_norm_backward_reference(
            grad_out, grad_residual_out, grad_rstd, residual_out, weight, rstd);
    const at::Tensor partial =
        run_backward_cpu(call, h.numel() / h.size(-1), h.size(-1), true);
    grad_weight.copy_(partial.sum(0));
    return {grad_h, grad_weight};
}

std::string last_backward_dispatch()
{
    const rowops_impl impl = last_backward_impl.load();
    return impl == ROWOPS_IMPL_COUNT ? "" : rowops_impl_name(impl);
}

std::string explain_backward_dispatch(const at::Tensor &h)
{
    rowops_backward_call call{};
    call.h = describe(h);
    call.grad_out = call.grad_h = call.h;
    call.cuda_arch = h.is_cuda() ? cuda_arch(h) : 0;
    const rowops_choice choice = rowops_choose_backward(&call);
    return std::string(rowops_impl_name(choice.impl)) + ": " + choice.reason;
}

TORCH_LIBRARY_IMPL(rowops, CompositeExplicitAutograd, m)
{
    m.impl("rms_norm_rows_backward", &rms_norm_rows_backward);
    m.impl("fused_add_rms_norm_backward", &fused_add_rms_norm_backward);
}

} // namespace rowops
