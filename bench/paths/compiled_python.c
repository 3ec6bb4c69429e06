/* `compiled-python`: the op under torch.compile (Inductor, dynamic shapes),
 * called from Python; compile time in compile_ms. */
#include "python_route.h"

OPCOST_PYTHON_PATH(opcost_path_compiled_python, "compiled-python",
                   "the op under torch.compile (Inductor, dynamic shapes), "
                   "called from Python; compile time in compile_ms");
