/* `peer-quack`: QuACK's quack.rmsnorm with residual= (CuTe DSL, sm_90
 * and later) on a GPU, as the functional op (bench/paths/peer_route.h). */
#include "peer_route.h"

OPCOST_PEER_PATH_ON(
    opcost_path_peer_quack, "peer-quack",
    "QuACK's quack.rmsnorm(x, weight, residual=...) on a GPU (sm_90 and "
    "later) as the functional op",
    OPCOST_ON_CUDA);
