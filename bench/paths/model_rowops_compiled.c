/* `model-rowops-compiled`: the rowops stack under torch.compile (the ops
 * opaque), paired with model-shipped-compiled */
#include "model_route.h"

OPCOST_MODEL_PATH(opcost_path_model_rowops_compiled, "model-rowops-compiled",
                  "model-shipped-compiled",
                  "the rowops stack under torch.compile (the ops opaque), "
                  "paired with model-shipped-compiled");
