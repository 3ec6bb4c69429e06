// The rowops operator schemas: the stable interface. Names, argument types,
// defaults and the mutation/aliasing annotations below are public; change
// them only by adding.
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
}
