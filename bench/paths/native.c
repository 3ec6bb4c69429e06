/* `native`: PyTorch's own at::add + at::rms_norm through the dispatcher, output
 * made contiguous; its conversion (attribution) is the copy that makes a
 * transposed h (or x) contiguous inside rms_norm. */
#include "torch_route.h"

static int prepare(opcost_path_run *r, char *why, size_t len)
{
    return opcost_torch_prepare(r, ROWOPS_BRIDGE_NATIVE, why, len);
}

const opcost_path opcost_path_native = {
    .name = "native",
    .description = "PyTorch's own at::add + at::rms_norm through the "
                   "dispatcher, output made contiguous",
    .takes_variants = 0,
    .needs_torch = 1,
    .prepare = prepare,
    .run = opcost_torch_run,
    .verify = opcost_torch_verify,
    .convert = opcost_torch_convert_x,
    .release = opcost_torch_release,
};
