/* `eager-cpp`: the rowops op through the PyTorch dispatcher from C, as a C++
 * caller reaches it. */
#include "torch_route.h"

static int prepare(opcost_path_run *r, char *why, size_t len)
{
    return opcost_torch_prepare(r, ROWOPS_BRIDGE_ROWOPS, why, len);
}

const opcost_path opcost_path_eager_cpp = {
    .name = "eager-cpp",
    .description =
        "the rowops op through the PyTorch dispatcher from C, as a C++ caller "
        "reaches it",
    .takes_variants = 0,
    .needs_torch = 1,
    .prepare = prepare,
    .run = opcost_torch_run,
    .verify = opcost_torch_verify,
    .convert = NULL,
    .release = opcost_torch_release,
};
