// The autocast policy of the rowops ops, registered on AutocastCPU and
// AutocastCUDA (docs/training-and-compile.md: "Autocast"). Inside
// torch.autocast(dtype=D):
//   x, residual: cast to D (any floating dtype but float64, as autocast
//                casts everywhere else);
//   weight:      float32 is kept (read directly by the kernel: no cast
//                pass, no rounding of the parameter); any other floating
//                dtype but float64 is cast to D;
//   reductions:  float32 inside the kernel, whatever D is;
//   outputs:     out/y and residual_out in D, rstd float32.
// The in-place form is not cast (a cast copy could not be written back);
// the backward ops run with the dtypes the forward saved.
// Running in D instead of float32 is the point of fusing: see
// docs/training-and-compile.md for the bytes per token of this policy and
// of the float32 alternative.
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/library.h>

namespace rowops
{
namespace
{

using at::Tensor;

template <c10::DeviceType Device> struct Autocast {
    static constexpr c10::DispatchKey key = Device == c10::DeviceType::CUDA
                                                ? c10::DispatchKey::AutocastCUDA
                                                : c10::DispatchKey::AutocastCPU;

    static Tensor to_low(const Tensor &t)
    {
        return at::autocast::cached_cast(
            at::autocast::get_autocast_dtype(Device), t, Device);
    }

    static Tensor weight(const Tensor &w)
    {
        return w.scalar_type() == at::kFloat ? w : to_low(w);
    }

    static std::tuple<Tensor, Tensor> rms_norm_rows(const Tensor &x, double eps)
    {
        static const auto op =
            c10::Dispatcher::singleton()
                .findSchemaOrThrow("rowops::rms_norm_rows", "")
                .typed<std::tuple<Tensor, Tensor>(const Tensor &, double)>();
        c10::impl::ExcludeDispatchKeyGuard no_autocast(key);
        return op.call(to_low(x), eps);
    }

    static std::tuple<Tensor, Tensor, Tensor>
    fused_add_rms_norm(const Tensor &x, const Tensor &residual, const Tensor &w,
                       double eps)
    {
        static const auto op =
            c10::Dispatcher::singleton()
                .findSchemaOrThrow("rowops::fused_add_rms_norm", "")
                .typed<std::tuple<Tensor, Tensor, Tensor>(
                    const Tensor &, const Tensor &, const Tensor &, double)>();
        c10::impl::ExcludeDispatchKeyGuard no_autocast(key);
        return op.call(to_low(x), to_low(residual), weight(w), eps);
    }
};

using AutocastCPU = Autocast<c10::DeviceType::CPU>;
using AutocastCUDA = Autocast<c10::DeviceType::CUDA>;

} // namespace

TORCH_LIBRARY_IMPL(rowops, AutocastCPU, m)
{
    m.impl("rms_norm_rows", &AutocastCPU::rms_norm_rows);
    m.impl("fused_add_rms_norm", &AutocastCPU::fused_add_rms_norm);
}

TORCH_LIBRARY_IMPL(rowops, AutocastCUDA, m)
{
    m.impl("rms_norm_rows", &AutocastCUDA::rms_norm_rows);
    m.impl("fused_add_rms_norm", &AutocastCUDA::fused_add_rms_norm);
}

} // namespace rowops
