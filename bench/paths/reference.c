/* `reference`: the rowops::*_reference aten composite through the dispatcher
 * (the contract). */
#include "torch_route.h"

OPCOST_TORCH_PATH(
    opcost_path_reference, "reference", ROWOPS_BRIDGE_REFERENCE, NULL,
    "the rowops::*_reference aten composite through the dispatcher (the "
    "contract)");
