/* `compiled-python`: the op under torch.compile (Inductor, dynamic shapes),
 * called from Python; compile time in compile_ms. */
#include "python_route.h"

const opcost_path opcost_path_compiled_python = {
    .name = "compiled-python",
    .description = "the op under torch.compile (Inductor, dynamic shapes), "
                   "called from Python; compile time in compile_ms",
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
