/* `peer-zentorch`: AMD zentorch's zentorch_add_rms_norm_ from the wheel
 * that python/peers.lock pins, as the functional op
 * (bench/paths/peer_route.h). */
#include "peer_route.h"

OPCOST_PEER_PATH(opcost_path_peer_zentorch, "peer-zentorch",
                 "AMD zentorch's zentorch_add_rms_norm_ (imported by path) as "
                 "the functional op: contiguous copies of x and residual, "
                 "then the kernel in place on them");
