/* The CUDA kernels' entries from the kernel table (kernel_table.def):
 * every dispatcher (the op, the bench's bridge) launches through
 * rowops_cuda_launcher, so a CUDA kernel is added by its table line and
 * its .cu file. Built with the CUDA kernels only. */
#include "rowops.h"

#include <stddef.h>

static const rowops_cuda_kernel_fn launchers[ROWOPS_IMPL_COUNT] = {
#define ROWOPS_CPU_KERNEL(id, name, fn, layout, features, what)
#define ROWOPS_CUDA_KERNEL(id, name, fn, layout, what) [ROWOPS_IMPL_##id] = fn,
#define ROWOPS_NO_KERNEL(id, name, what)
#include "kernel_table.def"
};

rowops_cuda_kernel_fn rowops_cuda_launcher(rowops_impl impl)
{
    return (unsigned)impl < ROWOPS_IMPL_COUNT ? launchers[impl] : NULL;
}
