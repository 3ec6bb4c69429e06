/* `peer-liger`: Liger's fused add + RMSNorm (Triton, out of place; it
 * copies non-contiguous inputs itself) on a GPU, as the functional op
 * (bench/paths/peer_route.h). */
#include "peer_route.h"

OPCOST_PEER_PATH_ON(
    opcost_path_peer_liger, "peer-liger",
    "Liger-Kernel's LigerFusedAddRMSNormFunction on a GPU as the "
    "functional op (out of place)",
    OPCOST_ON_CUDA);
