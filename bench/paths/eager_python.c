/* `eager-python`: the rowops op called from Python (torch.ops.rowops...) in the
 * interpreter embedded in the driver, as a Python user calls it. */
#include "python_route.h"

OPCOST_PYTHON_PATH(
    opcost_path_eager_python, "eager-python",
    "the rowops op called from Python (torch.ops.rowops...) in the "
    "interpreter embedded in the driver, as a Python user calls it");
