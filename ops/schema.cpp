// Every rowops operator schema, in this one file: the stable interface.
// Names, argument types, defaults and the mutation/aliasing annotations
// below are public; change them only by adding. Other files register
// implementations only (TORCH_LIBRARY_IMPL); the private underscore ops,
// which have one implementation for every backend, are defined with it
// here.
#include "block_cache.h"
#include "introspection.h"
#include "outputs.h"

#include <torch/library.h>

TORCH_LIBRARY(rowops, m)
{
    m.def("rms_norm_rows(Tensor x, float eps=1e-6) -> (Tensor y, Tensor rstd)");
    m.def("fused_add_rms_norm(Tensor x, Tensor residual, Tensor weight, "
          "float eps=1e-6) -> (Tensor out, Tensor residual_out, Tensor rstd)");
    m.def("fused_add_rms_norm_(Tensor(a!) x, Tensor(b!) residual, "
          "Tensor weight, float eps=1e-6) -> ()");
    m.def("rms_norm_rows_reference(Tensor x, float eps=1e-6) "
          "-> (Tensor y, Tensor rstd)");
    m.def("fused_add_rms_norm_reference(Tensor x, Tensor residual, "
          "Tensor weight, float eps=1e-6) "
          "-> (Tensor out, Tensor residual_out, Tensor rstd)");
    // Backward, each a registered op of its own (so compile, export and
    // other callers see it). grad_h is the gradient of x and of residual.
    m.def("rms_norm_rows_backward(Tensor grad_y, Tensor? grad_rstd, "
          "Tensor x, Tensor rstd) -> Tensor grad_x");
    m.def("fused_add_rms_norm_backward(Tensor grad_out, "
          "Tensor? grad_residual_out, Tensor? grad_rstd, Tensor residual_out, "
          "Tensor weight, Tensor rstd) -> (Tensor grad_h, Tensor grad_weight)");
    m.def("rms_norm_rows_backward_reference(Tensor grad_y, Tensor? grad_rstd, "
          "Tensor x, Tensor rstd) -> Tensor grad_x");
    m.def("fused_add_rms_norm_backward_reference(Tensor grad_out, "
          "Tensor? grad_residual_out, Tensor? grad_rstd, Tensor residual_out, "
          "Tensor weight, Tensor rstd) -> (Tensor grad_h, Tensor grad_weight)");
    // Introspection: which implementation a call would use, and why.
    m.def("_explain_dispatch(str op, Tensor x, Tensor? residual=None, "
          "Tensor? weight=None, float eps=1e-6) -> str");
    // Private: introspection for the tests, the block cache, test hooks.
    m.def("_last_dispatch() -> str", &rowops::last_dispatch);
    m.def("_last_backward_dispatch() -> str", &rowops::last_backward_dispatch);
    m.def("_force_cpu_features(int mask) -> int", &rowops::force_cpu_features);
    m.def("_cpu_features() -> int", &rowops::cpu_features);
    // The large-output block cache (block_cache.h): release it, read it.
    m.def("_empty_cpu_cache() -> int", &rowops::block_cache_release);
    m.def("_cpu_cache_held() -> int", &rowops::block_cache_held);
    m.def("_parse_cpu_cache_mb(str value) -> int",
          &rowops::parse_cache_mb_checked);
    m.def("_kernel_output(Tensor like) -> Tensor", &rowops::kernel_output);
#ifdef ROWOPS_HAVE_CUDA
    m.def("_cuda_leave_pending_error() -> ()",
          &rowops::cuda_leave_pending_error);
#endif
}
