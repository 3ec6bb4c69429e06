/* `native`: PyTorch's own at::add + at::rms_norm through the dispatcher, output
 * made contiguous; its conversion (attribution) is the copy that makes a
 * transposed h (or x) contiguous inside rms_norm. */
#include "torch_route.h"

OPCOST_TORCH_PATH(opcost_path_native, "native", ROWOPS_BRIDGE_NATIVE,
                  opcost_torch_convert_x,
                  "PyTorch's own at::add + at::rms_norm through the "
                  "dispatcher, output made contiguous");
