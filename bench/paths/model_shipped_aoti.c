/* `model-shipped-aoti`: the stack as shipped as an AOTInductor package
 * (torch.export, the tokens dynamic; the weights the stack's own), paired
 * with model-shipped-compiled (what the package saves over torch.compile)
 * and the baseline of the aoti model paths; run only when named */
#include "model_route.h"

OPCOST_MODEL_PATH_NAMED(
    opcost_path_model_shipped_aoti, "model-shipped-aoti",
    "model-shipped-compiled",
    "the stack as shipped as an AOTInductor package (torch.export, the tokens "
    "dynamic), paired with model-shipped-compiled and the baseline of the "
    "aoti model paths");
