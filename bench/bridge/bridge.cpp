// The C bridge (rowops_bridge.h): thin, no policy. Exceptions become
// return codes with the message; op handles are looked up once.
#include "bridge_tensor.h"
#include "rowops_bridge.h"

#include "op_handle.h"
#include <ATen/ATen.h>
#include <ATen/Parallel.h>

#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/version.h>

#include <cstdio>
#include <cstring>
#include <string>

namespace
{

using at::Tensor;

thread_local std::string last_dispatch_text;

int fail(char *err, size_t len, const char *what)
{
    return rowops::bridge_fail(err, len, what);
}

at::ScalarType scalar_type(rowops_dtype d)
{
    switch (d) {
    case ROWOPS_F16: return at::kHalf;
    case ROWOPS_BF16: return at::kBFloat16;
    case ROWOPS_F64: return at::kDouble;
    default: return at::kFloat;
    }
}

rowops_bridge_tensor *own(Tensor t)
{
    return new rowops_bridge_tensor{std::move(t)};
}

void set_output(rowops_bridge_result *res, int i, Tensor t)
{
    rowops::bridge_set_output(res, i, std::move(t));
}

using Rows = std::tuple<Tensor, Tensor>(const Tensor &, double);
using Fused = std::tuple<Tensor, Tensor, Tensor>(const Tensor &, const Tensor &,
                                                 const Tensor &, double);

void call_rowops(bool reference, rowops_op o, const Tensor &x,
                 const Tensor *residual, const Tensor *weight, double eps,
                 rowops_bridge_result *res)
{
    static const auto rows = rowops::op_handle<Rows>("rowops::rms_norm_rows");
    static const auto rows_ref =
        rowops::op_handle<Rows>("rowops::rms_norm_rows_reference");
    static const auto fused =
        rowops::op_handle<Fused>("rowops::fused_add_rms_norm");
    static const auto fused_ref =
        rowops::op_handle<Fused>("rowops::fused_add_rms_norm_reference");
    if (o == ROWOPS_OP_RMS_NORM_ROWS) {
        auto [y, rstd] = (reference ? rows_ref : rows).call(x, eps);
        set_output(res, 0, std::move(y));
        set_output(res, 1, std::move(rstd));
        res->count = 2;
        return;
    }
    auto [out, h, rstd] =
        (reference ? fused_ref : fused).call(x, *residual, *weight, eps);
    set_output(res, 0, std::move(out));
    set_output(res, 1, std::move(h));
    set_output(res, 2, std::move(rstd));
    res->count = 3;
}

// PyTorch's own ops, as an unfused model writes them; the output the next
// layer needs is contiguous, so a non-contiguous result is converted.
void call_native(rowops_op o, const Tensor &x, const Tensor *residual,
                 const Tensor *weight, double eps, rowops_bridge_result *res)
{
    const int64_t n = x.size(-1);
    if (o == ROWOPS_OP_RMS_NORM_ROWS) {
        set_output(res, 0,
                   at::rms_norm(x, {n}, std::nullopt, eps).contiguous());
        res->count = 1;
        return;
    }
    Tensor h = at::add(x, *residual);
    Tensor out = at::rms_norm(h, {n}, *weight, eps).contiguous();
    set_output(res, 0, std::move(out));
    set_output(res, 1, std::move(h));
    res->count = 2;
}

// torch.add, the calibration of per-call cost: h = x + residual, as at::add
// rounds it (exactly the op's residual_out).
void call_torch_add(rowops_op o, const Tensor &x, const Tensor *residual,
                    rowops_bridge_result *res)
{
    TORCH_CHECK(o == ROWOPS_OP_FUSED_ADD_RMS_NORM && residual,
                "rowops_bridge_call: the add route needs the fused op's "
                "residual");
    set_output(res, 0, at::add(x, *residual));
    res->count = 1;
}

} // namespace

extern "C" {

const char *rowops_bridge_torch_version(void)
{
    return TORCH_VERSION;
}

int rowops_bridge_set_threads(int threads, char *err, size_t err_len)
{
    return rowops::bridge_guard(err, err_len, [&] {
        at::set_num_threads(threads);
        return 0;
    });
}

rowops_bridge_tensor *rowops_bridge_wrap(const rowops_tensor *t, char *err,
                                         size_t err_len)
{
    try {
        TORCH_CHECK(t->rank >= 0 && t->rank <= ROWOPS_MAX_RANK,
                    "rowops_bridge_wrap: rank must be in [0, ", ROWOPS_MAX_RANK,
                    "] (got ", t->rank, ")");
        TORCH_CHECK(t->device != ROWOPS_DEVICE_OTHER,
                    "rowops_bridge_wrap: device must be CPU or CUDA");
        const at::Device dev = t->device == ROWOPS_DEVICE_CUDA
                                   ? at::Device(at::kCUDA)
                                   : at::Device(at::kCPU);
        Tensor w = at::from_blob(
            t->data, at::IntArrayRef(t->sizes, t->rank),
            at::IntArrayRef(t->strides, t->rank),
            at::TensorOptions().dtype(scalar_type(t->dtype)).device(dev));
        return own(std::move(w));
    } catch (const std::exception &e) {
        fail(err, err_len, e.what());
        return nullptr;
    }
}

void rowops_bridge_release(rowops_bridge_tensor *t)
{
    delete t;
}

int rowops_bridge_call(rowops_bridge_route route, rowops_op o,
                       rowops_bridge_tensor *x, rowops_bridge_tensor *residual,
                       rowops_bridge_tensor *weight, double eps,
                       rowops_bridge_result *res, char *err, size_t err_len)
{
    return rowops::bridge_guard(err, err_len, [&] {
        TORCH_CHECK(x, "rowops_bridge_call: x must not be NULL");
        TORCH_CHECK(o == ROWOPS_OP_RMS_NORM_ROWS || (residual && weight),
                    "rowops_bridge_call: fused_add_rms_norm needs residual "
                    "and weight");
        const Tensor *r = residual ? &residual->t : nullptr;
        const Tensor *w = weight ? &weight->t : nullptr;
        switch (route) {
        case ROWOPS_BRIDGE_ROWOPS:
            call_rowops(false, o, x->t, r, w, eps, res);
            break;
        case ROWOPS_BRIDGE_REFERENCE:
            call_rowops(true, o, x->t, r, w, eps, res);
            break;
        case ROWOPS_BRIDGE_NATIVE: call_native(o, x->t, r, w, eps, res); break;
        case ROWOPS_BRIDGE_TORCH_ADD: call_torch_add(o, x->t, r, res); break;
        default:
            TORCH_CHECK(false, "rowops_bridge_call: unknown route ",
                        static_cast<int>(route));
        }
        return 0;
    });
}

int rowops_bridge_contiguous(rowops_bridge_tensor *t, rowops_bridge_result *res,
                             char *err, size_t err_len)
{
    return rowops::bridge_guard(err, err_len, [&] {
        // clone(): a fresh contiguous copy even when t already is one, so
        // the timing always includes the copy it stands for.
        set_output(res, 0, t->t.clone(at::MemoryFormat::Contiguous));
        res->count = 1;
        return 0;
    });
}

void rowops_bridge_result_clear(rowops_bridge_result *res)
{
    for (int i = 0; i < 3; ++i) {
        delete res->handle[i];
        res->handle[i] = nullptr;
    }
    res->count = 0;
}

const char *rowops_bridge_last_dispatch(void)
{
    try {
        static const auto last =
            rowops::op_handle<std::string()>("rowops::_last_dispatch");
        last_dispatch_text = last.call();
    } catch (const std::exception &) {
        last_dispatch_text.clear();
    }
    return last_dispatch_text.c_str();
}

void rowops_bridge_poison_outputs(int on)
{
    at::globalContext().setDeterministicAlgorithms(on != 0, false);
    at::globalContext().setDeterministicFillUninitializedMemory(on != 0);
}

void rowops_bridge_parallel_for(int64_t n, int64_t grain,
                                void (*fn)(void *ctx, int64_t begin,
                                           int64_t end),
                                void *ctx)
{
    at::parallel_for(0, n, grain, [&](int64_t b, int64_t e) { fn(ctx, b, e); });
}

} // extern "C"
