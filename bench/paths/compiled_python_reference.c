/* `compiled-python-reference`: the reference composite under torch.compile:
 * Inductor's own fusion of add + RMSNorm. */
#include "python_route.h"

const opcost_path opcost_path_compiled_python_reference = {
    .name = "compiled-python-reference",
    .description = "the reference composite under torch.compile: Inductor's "
                   "own fusion of add + RMSNorm",
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
