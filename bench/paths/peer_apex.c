/* `peer-apex`: NVIDIA Apex's fused_rms_norm_affine after the residual
 * add (Apex has no fused add) on a GPU, as the functional op
 * (bench/paths/peer_route.h). */
#include "peer_route.h"

OPCOST_PEER_PATH_ON(
    opcost_path_peer_apex, "peer-apex",
    "NVIDIA Apex's fused_rms_norm_affine on a GPU after x + residual "
    "(Apex has no fused add) as the functional op",
    OPCOST_ON_CUDA);
