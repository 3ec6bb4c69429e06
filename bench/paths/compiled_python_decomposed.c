/* `compiled-python-decomposed`: the op under torch.compile with its
 * decomposition registered (rowops.boundary), so Inductor fuses it. */
#include "python_route.h"

OPCOST_PYTHON_PATH(opcost_path_compiled_python_decomposed,
                   "compiled-python-decomposed",
                   "the op under torch.compile with its decomposition "
                   "registered (rowops.boundary), so Inductor fuses it");
