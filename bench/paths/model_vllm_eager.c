/* `model-vllm-eager`: the same stack with every residual add + norm through
 * vLLM's fused_add_rms_norm in place (the first input norm through its
 * rms_norm), as vLLM's own layers call them, eager, paired with
 * model-shipped-eager: what a model gains from vLLM's op, beside
 * model-rowops-eager. Where peer-vllm finds vLLM's kernels
 * (bench/python/opcost_peers.py), else skipped with the reason. */
#include "model_route.h"

OPCOST_MODEL_PATH(
    opcost_path_model_vllm_eager, "model-vllm-eager", "model-shipped-eager",
    "the same stack with every residual add + norm through vLLM's "
    "fused_add_rms_norm in place (the first input norm through its "
    "rms_norm), eager, paired with model-shipped-eager");
