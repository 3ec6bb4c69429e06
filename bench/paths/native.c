/* `native`: PyTorch's own at::add + at::rms_norm through the dispatcher, output
 * made contiguous; its conversion (attribution) is the copy that makes a
 * transposed h (or x) contiguous inside rms_norm. */
#include "torch_route.h"

static int prepare(opcost_path_run *r, char *why, size_t len)
{
    return opcost_torch_prepare(r, ROWOPS_BRIDGE_NATIVE, why, len);
}

const opcost_path opcost_path_native = {
    "native",
    "PyTorch's own at::add + at::rms_norm through the dispatcher, output made "
    "contiguous",
    0,
    1,
    prepare,
    opcost_torch_run,
    opcost_torch_verify,
    opcost_torch_convert_x,
    opcost_torch_release,
};
