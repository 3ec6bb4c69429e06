/* `model-shipped-compiled`: the stack as shipped under torch.compile
 * (fullgraph, dynamic shapes), paired with model-shipped-eager (what compiling
 * saves) and the baseline of the compiled model paths */
#include "model_route.h"

OPCOST_MODEL_PATH(
    opcost_path_model_shipped_compiled, "model-shipped-compiled",
    "model-shipped-eager",
    "the stack as shipped under torch.compile (fullgraph, dynamic shapes), "
    "paired with model-shipped-eager (what compiling saves) and the baseline "
    "of the compiled model paths");
