/* `model-torch-eager`: the same stack with torch.nn.functional.rms_norm and the
 * adds, eager, paired with model-shipped-eager */
#include "model_route.h"

OPCOST_MODEL_PATH(opcost_path_model_torch_eager, "model-torch-eager",
                  "model-shipped-eager",
                  "the same stack with torch.nn.functional.rms_norm and the "
                  "adds, eager, paired with model-shipped-eager");
