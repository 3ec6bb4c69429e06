#include "variants.h"
#include "cpu_features.h"
#include "record_function_tracer.h"
#include "rowops_bridge.h"

#include <stdio.h>
#include <string.h>

/* Every kernel of the table (kernels/kernel_table.def) but the reference,
 * then the kernels called from Python. */
static const opcost_variant table[] = {
#define ROWOPS_KERNEL(id, name, cpu_fn, device, layout, features, what)        \
    {name,   ROWOPS_IMPL_##id,                                                 \
     cpu_fn, layout,                                                           \
     what,   (device) == ROWOPS_DEVICE_CUDA,                                   \
     NULL},
#include "kernel_table.def"
#undef ROWOPS_KERNEL
    {"triton", ROWOPS_IMPL_COUNT, NULL, OPCOST_VARIANT_FUSED_ANY,
     "Triton: rowops.triton's kernel, the fused op (--device cuda)", 1,
     "triton"},
};

/* The reference is the reference path's, not a variant of the kernel's. */
static int listed(const opcost_variant *v)
{
    return v->impl != ROWOPS_IMPL_REFERENCE;
}

size_t opcost_variant_count(void)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof table / sizeof table[0]; ++i)
        n += (size_t)listed(&table[i]);
    return n;
}

const opcost_variant *opcost_variant_at(size_t i)
{
    for (size_t t = 0; t < sizeof table / sizeof table[0]; ++t)
        if (listed(&table[t]) && i-- == 0)
            return &table[t];
    return NULL;
}

const opcost_variant *opcost_variant_find(const char *name)
{
    if (strcmp(name, "auto") == 0)
        return &opcost_variant_auto;
    for (size_t i = 0; i < opcost_variant_count(); ++i)
        if (strcmp(opcost_variant_at(i)->name, name) == 0)
            return opcost_variant_at(i);
    return NULL;
}

opcost_cpu_kernel opcost_cpu_kernel_of(rowops_impl impl)
{
    const rowops_kernel_info *k = rowops_kernel_info_of(impl);
    return k ? k->cpu : NULL;
}

typedef struct rows_task {
    opcost_cpu_kernel kernel;
    const rowops_call *call;
} rows_task;

static void run_rows(void *ctx, int64_t begin, int64_t end)
{
    const rows_task *t = ctx;
    t->kernel(t->call, begin, end);
}

void opcost_run_cpu_kernel(rowops_impl impl, opcost_cpu_kernel kernel,
                           const rowops_call *call)
{
    rows_task t = {kernel, call};
    const int64_t rows = rowops_tensor_rows(&call->x);
    const int64_t t0 = opcost_own_scope_begin();
    rowops_bridge_parallel_for(rows, rowops_cpu_grain(call, impl), run_rows,
                               &t);
    opcost_own_scope_end(OPCOST_EVENT_KERNEL_OURS, "rowops kernel (C caller)",
                         t0);
}

int opcost_variant_admits(const opcost_variant *v, const rowops_call *call,
                          char *why, size_t len)
{
    if (v == &opcost_variant_auto)
        return 1;
    const int on_gpu = call->x.device == ROWOPS_DEVICE_CUDA;
    if (v->cuda != on_gpu) {
        snprintf(why, len, "%s is a %s kernel; this run is on the %s", v->name,
                 v->cuda ? "CUDA" : "CPU", on_gpu ? "GPU" : "CPU");
        return 0;
    }
    if (!v->fast)
        return 1;
    if (v->fast == OPCOST_VARIANT_FUSED_ANY) { /* contiguous copies */
        if (call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM)
            return 1;
        snprintf(why, len, "%s: the fused op only", v->name);
        return 0;
    }
    if (rowops_kernel_can_run(v->impl, call))
        return 1;
    /* why not: the call goes to a kernel of another layout, or this CPU
     * lacks the variant's features */
    const rowops_choice c = rowops_choose(call);
    const rowops_kernel_info *k = rowops_kernel_info_of(v->impl),
                             *picked = rowops_kernel_info_of(c.impl);
    if (!picked || picked->layout != k->layout || picked->device != k->device)
        snprintf(why, len, "%s not eligible: %s", v->name, c.reason);
    else if (v->impl == ROWOPS_IMPL_CPU_COLMAJOR_NARROW &&
             !rowops_colmajor_narrow_ok(call))
        snprintf(why, len,
                 "%s not eligible: columns %lld apart, beyond its %d "
                 "elements",
                 v->name, (long long)call->x.strides[1],
                 ROWOPS_COLMAJOR_NARROW_MAX);
    else
        snprintf(why, len, "%s needs %s: %s", v->name,
                 (k->features & ROWOPS_CPU_FAST512_FEATURES) ==
                         ROWOPS_CPU_FAST512_FEATURES
                     ? "AVX-512 F+BW"
                     : "AVX2+FMA+F16C",
                 c.reason);
    return 0;
}
