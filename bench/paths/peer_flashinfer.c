/* `peer-flashinfer`: FlashInfer's flashinfer.norm.fused_add_rmsnorm (in
 * place, float16 and bfloat16; rmsnorm for the row normalization) on a
 * GPU, as the functional op (bench/paths/peer_route.h). */
#include "peer_route.h"

OPCOST_PEER_PATH_ON(
    opcost_path_peer_flashinfer, "peer-flashinfer",
    "FlashInfer's flashinfer.norm.fused_add_rmsnorm on a GPU as the "
    "functional op: contiguous copies of x and residual, then the kernel "
    "in place on them",
    OPCOST_ON_CUDA);
