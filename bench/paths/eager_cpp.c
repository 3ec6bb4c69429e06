/* `eager-cpp`: the rowops op through the PyTorch dispatcher from C, as a C++
 * caller reaches it. */
#include "torch_route.h"

OPCOST_TORCH_PATH(
    opcost_path_eager_cpp, "eager-cpp", ROWOPS_BRIDGE_ROWOPS, NULL,
    "the rowops op through the PyTorch dispatcher from C, as a C++ caller "
    "reaches it");
