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
    // Introspection: which implementation a call would use, and why.
    m.def("_explain_dispatch(str op, Tensor x, Tensor? residual=None, "
          "Tensor? weight=None, float eps=1e-6) -> str");
}
