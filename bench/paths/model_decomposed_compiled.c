/* `model-decomposed-compiled`: the rowops stack under torch.compile with the
 * rowops ops decomposed (rowops.boundary): Inductor fuses their aten
 * references; paired with model-shipped-compiled */
#include "model_route.h"

OPCOST_MODEL_PATH(opcost_path_model_decomposed_compiled,
                  "model-decomposed-compiled", "model-shipped-compiled",
                  "the rowops stack under torch.compile with the rowops ops "
                  "decomposed (rowops.boundary): Inductor fuses their aten "
                  "references; paired with model-shipped-compiled");
