/* `model-torch-compiled`: the torch.nn.functional.rms_norm stack under
 * torch.compile, paired with model-shipped-compiled */
#include "model_route.h"

OPCOST_MODEL_PATH(opcost_path_model_torch_compiled, "model-torch-compiled",
                  "model-shipped-compiled",
                  "the torch.nn.functional.rms_norm stack under torch.compile, "
                  "paired with model-shipped-compiled");
