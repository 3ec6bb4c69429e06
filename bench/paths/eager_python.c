/* `eager-python`: the rowops op called from Python (torch.ops.rowops...) in the
 * interpreter embedded in the driver, as a Python user calls it. */
#include "python_route.h"

const opcost_path opcost_path_eager_python = {
    .name = "eager-python",
    .description =
        "the rowops op called from Python (torch.ops.rowops...) in the "
        "interpreter embedded in the driver, as a Python user calls it",
    .takes_variants = 0,
    .needs_torch = 1,
    .prepare = opcost_python_prepare,
    .run = opcost_python_run,
    .verify = opcost_python_verify,
    .convert = NULL,
    .release = opcost_python_release,
    .compile_ms = opcost_python_compile_ms,
    .annotate = opcost_python_annotate,
};
