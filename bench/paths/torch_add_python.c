/* `torch-add-python`: calibration, not the op. torch.add(x, residual)
 * from Python in the embedded interpreter (h alone): what PyTorch's own
 * smallest op costs a Python caller, which `eager-python`'s overhead is
 * judged against. */
#include "python_route.h"

OPCOST_PYTHON_PATH_OF(
    opcost_path_torch_add_python, "torch-add-python",
    "calibration: torch.add(x, residual) from Python (h only); "
    "fused op only",
    1);
