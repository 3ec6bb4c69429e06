/* `eager-python`: the rowops op called from Python through the library's
 * API (rowops.fused_add_rms_norm: one CPython call into the dispatcher,
 * python/rowops/_ops.py) in the interpreter embedded in the driver, as a
 * Python user calls it. */
#include "python_route.h"

OPCOST_PYTHON_PATH(
    opcost_path_eager_python, "eager-python",
    "the rowops op called from Python (rowops.<op>, the library's API) in "
    "the interpreter embedded in the driver, as a Python user calls it");
