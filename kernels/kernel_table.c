/* The kernel table (kernel_table.def) as data: names, CPU entries,
 * devices, layouts and the CPU features each kernel needs. */
#include "cpu_features.h"
#include "rowops.h"

#include <stddef.h>

static const rowops_kernel_info kernels[ROWOPS_IMPL_COUNT] = {
#define ROWOPS_KERNEL(id, name, cpu_fn, device, layout, features, what)        \
    [ROWOPS_IMPL_##id] = {name, cpu_fn, device, layout, features, what},
#include "kernel_table.def"
#undef ROWOPS_KERNEL
};

const rowops_kernel_info *rowops_kernel_info_of(rowops_impl impl)
{
    return (unsigned)impl < ROWOPS_IMPL_COUNT ? &kernels[impl] : NULL;
}

int rowops_impl_is_cuda(rowops_impl impl)
{
    const rowops_kernel_info *k = rowops_kernel_info_of(impl);
    return k && k->device == ROWOPS_DEVICE_CUDA;
}

const char *rowops_impl_name(rowops_impl impl)
{
    const rowops_kernel_info *k = rowops_kernel_info_of(impl);
    return k ? k->name : "unknown";
}

int rowops_kernel_can_run(rowops_impl impl, const rowops_call *call)
{
    const rowops_kernel_info *k = rowops_kernel_info_of(impl);
    if (!k || k->device < 0 || k->device != (int)call->x.device)
        return 0;
    if ((rowops_cpu_features() & k->features) != k->features)
        return 0;
    if (k->layout == ROWOPS_LAYOUT_ANY)
        return 1;
    if (impl == ROWOPS_IMPL_CPU_COLMAJOR_NARROW &&
        !rowops_colmajor_narrow_ok(call))
        return 0;
    if (impl == ROWOPS_IMPL_CPU_COLMAJOR_COPY && !rowops_colmajor_copy_ok(call))
        return 0;
    /* in place on column-major rows only its own kernel runs (the others
     * write row-major outputs), and it runs nowhere else */
    if (k->layout == ROWOPS_LAYOUT_COLUMNS &&
        (impl == ROWOPS_IMPL_CPU_COLMAJOR_INPLACE ||
         rowops_colmajor_inplace_ok(call)))
        return impl == ROWOPS_IMPL_CPU_COLMAJOR_INPLACE &&
               rowops_choose_impl(call) == impl;
    const rowops_kernel_info *p =
        rowops_kernel_info_of(rowops_choose_impl(call));
    return p && p->layout == k->layout && p->device == k->device;
}
