/* `model-rowops-aoti`: the rowops stack as an AOTInductor package (the ops
 * called through the proxy executor, as a deployment runs them), paired
 * with model-shipped-aoti; run only when named */
#include "model_route.h"

OPCOST_MODEL_PATH_NAMED(opcost_path_model_rowops_aoti, "model-rowops-aoti",
                        "model-shipped-aoti",
                        "the rowops stack as an AOTInductor package (the ops "
                        "through its proxy executor), paired with "
                        "model-shipped-aoti");
