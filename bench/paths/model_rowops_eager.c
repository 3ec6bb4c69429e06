/* `model-rowops-eager`: the same stack with every residual add + norm through
 * rowops.fused_add_rms_norm (the first input norm through
 * rowops.rms_norm_rows), eager, paired with model-shipped-eager */
#include "model_route.h"

OPCOST_MODEL_PATH(
    opcost_path_model_rowops_eager, "model-rowops-eager", "model-shipped-eager",
    "the same stack with every residual add + norm through "
    "rowops.fused_add_rms_norm (the first input norm through "
    "rowops.rms_norm_rows), eager, paired with model-shipped-eager");
