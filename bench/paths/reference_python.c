/* `reference-python`: the Python reference (rowops.reference), called the same
 * way. */
#include "python_route.h"

OPCOST_PYTHON_PATH(
    opcost_path_reference_python, "reference-python",
    "the Python reference (rowops.reference), called the same way");
