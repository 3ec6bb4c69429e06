/* `reference`: the rowops::*_reference aten composite through the dispatcher
 * (the contract). */
#include "torch_route.h"

static int prepare(opcost_path_run *r, char *why, size_t len)
{
    return opcost_torch_prepare(r, ROWOPS_BRIDGE_REFERENCE, why, len);
}

const opcost_path opcost_path_reference = {
    "reference",
    "the rowops::*_reference aten composite through the dispatcher (the "
    "contract)",
    0,
    1,
    prepare,
    opcost_torch_run,
    opcost_torch_verify,
    NULL,
    opcost_torch_release,
};
