/* `eager-python-inplace`: rowops.fused_add_rms_norm_ from Python, the
 * in-place form a model calls (x and residual overwritten), on each input
 * set's own copies made before timing (opcost_bench.Runner), so that the
 * driver's inputs stay what the reference reads; beside the peers'
 * in-place forms (peer-*-inplace). */
#include "peer_route.h"
#include "rowops.h"

#include <stdio.h>

static int prepare_inplace(opcost_path_run *r, char *why, size_t len)
{
    if (r->w->c.op != ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        snprintf(why, len, "%s has no in-place form",
                 rowops_op_name(r->w->c.op));
        return 1;
    }
    return opcost_python_prepare(r, why, len);
}

const opcost_path opcost_path_eager_python_inplace = {
    .name = "eager-python-inplace",
    .description = "rowops.fused_add_rms_norm_ (in place) from Python, on "
                   "each input set's own copies made before timing: the form "
                   "a model calls, beside the peers' in-place forms",
    .devices = OPCOST_ON_CPU | OPCOST_ON_CUDA,
    .needs_torch = 1,
    .in_place = 1,
    .applies = opcost_fused_only,
    .prepare = prepare_inplace,
    .run = opcost_python_run,
    .verify = opcost_python_verify,
    .release = opcost_python_release,
    .compile_ms = opcost_python_compile_ms,
    .annotate = opcost_python_annotate,
};
