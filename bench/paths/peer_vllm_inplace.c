/* `peer-vllm-inplace`: vLLM's CPU kernel in place on the caller's tensors
 * (each input set's own copies), as a model calls it; the fused op, on a
 * transposed input through contiguous copies copied back
 * (bench/paths/peer_route.h). */
#include "peer_route.h"

OPCOST_PEER_INPLACE_PATH(
    opcost_path_peer_vllm_inplace, "peer-vllm-inplace",
    "vLLM's CPU kernel in place on the caller's x and residual "
    "(each input set's own copies): the form a model calls (on a "
    "transposed input through contiguous copies, copied back)");
