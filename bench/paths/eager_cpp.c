/* `eager-cpp`: the rowops op through the PyTorch dispatcher from C, as a C++
 * caller reaches it. */
#include "torch_route.h"

static int prepare(opcost_path_run *r, char *why, size_t len)
{
    return opcost_torch_prepare(r, ROWOPS_BRIDGE_ROWOPS, why, len);
}

const opcost_path opcost_path_eager_cpp = {
    "eager-cpp",
    "the rowops op through the PyTorch dispatcher from C, as a C++ caller "
    "reaches it",
    0,
    1,
    prepare,
    opcost_torch_run,
    opcost_torch_verify,
    NULL,
    opcost_torch_release,
};
