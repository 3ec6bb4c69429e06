/* `torch-add-cpp`: calibration, not the op. at::add(x, residual) through
 * the dispatcher from C++ (h alone): the per-call cost PyTorch's own
 * smallest op pays from this caller, which `eager-cpp`'s overhead is
 * judged against (overhead = median - `add-kernel`'s median). */
#include "torch_route.h"

OPCOST_TORCH_PATH(opcost_path_torch_add_cpp, "torch-add-cpp",
                  ROWOPS_BRIDGE_TORCH_ADD, NULL,
                  "calibration: at::add(x, residual) through the dispatcher "
                  "from C++ (h only); fused op only");
