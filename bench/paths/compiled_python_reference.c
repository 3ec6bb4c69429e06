/* `compiled-python-reference`: the reference composite under torch.compile:
 * Inductor's own fusion of add + RMSNorm. */
#include "python_route.h"

OPCOST_PYTHON_PATH(opcost_path_compiled_python_reference,
                   "compiled-python-reference",
                   "the reference composite under torch.compile: Inductor's "
                   "own fusion of add + RMSNorm");
