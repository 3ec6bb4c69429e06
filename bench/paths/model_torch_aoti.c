/* `model-torch-aoti`: the F.rms_norm stack as an AOTInductor package,
 * paired with model-shipped-aoti; run only when named */
#include "model_route.h"

OPCOST_MODEL_PATH_NAMED(opcost_path_model_torch_aoti, "model-torch-aoti",
                        "model-shipped-aoti",
                        "the F.rms_norm stack as an AOTInductor package, "
                        "paired with model-shipped-aoti");
