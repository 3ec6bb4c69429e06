/* `reference`: the rowops::*_reference aten composite through the dispatcher
 * (the contract). */
#include "torch_route.h"

static int prepare(opcost_path_run *r, char *why, size_t len)
{
    return opcost_torch_prepare(r, ROWOPS_BRIDGE_REFERENCE, why, len);
}

const opcost_path opcost_path_reference = {
    .name = "reference",
    .description =
        "the rowops::*_reference aten composite through the dispatcher (the "
        "contract)",
    .takes_variants = 0,
    .needs_torch = 1,
    .prepare = prepare,
    .run = opcost_torch_run,
    .verify = opcost_torch_verify,
    .convert = NULL,
    .release = opcost_torch_release,
};
