/* `compiled-python-decomposed`: the op under torch.compile with its
 * decomposition registered (rowops.boundary), so Inductor fuses it. */
#include "python_route.h"

const opcost_path opcost_path_compiled_python_decomposed = {
    .name = "compiled-python-decomposed",
    .description = "the op under torch.compile with its decomposition "
                   "registered (rowops.boundary), so Inductor fuses it",
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
