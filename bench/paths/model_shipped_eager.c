/* `model-shipped-eager`: a stack of transformers' LlamaDecoderLayer as shipped
 * (LlamaRMSNorm, the layer's residual adds), eager; the baseline of the eager
 * model paths (no ratio of its own) */
#include "model_route.h"

OPCOST_MODEL_PATH(opcost_path_model_shipped_eager, "model-shipped-eager",
                  "model-shipped-eager",
                  "a stack of transformers' LlamaDecoderLayer as shipped "
                  "(LlamaRMSNorm, the layer's residual adds), eager; the "
                  "baseline of the eager model paths (no ratio of its own)");
