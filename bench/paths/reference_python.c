/* `reference-python`: the Python reference (rowops.reference), called the same
 * way. */
#include "python_route.h"

const opcost_path opcost_path_reference_python = {
    .name = "reference-python",
    .description =
        "the Python reference (rowops.reference), called the same way",
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
