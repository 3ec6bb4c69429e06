/* `kernel-e2e`: a C caller's whole call: the inputs in their original
 * layout, the eligibility function on every call, then the kernel it
 * picks, writing the final contiguous outputs. */
#include "path.h"
#include "rowops_bridge.h"
#include "variants.h"

#include <stdio.h>

static int e2e_prepare(opcost_path_run *r, char *why, size_t len)
{
    const rowops_call c = opcost_workload_call(r->w, 0);
    const rowops_choice choice = rowops_choose(&c);
    if (!opcost_cpu_kernel_of(choice.impl) &&
        !rowops_impl_is_cuda(choice.impl)) {
        snprintf(why, len, "no C kernel for this call: %s", choice.reason);
        return 1;
    }
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s",
             rowops_impl_name(choice.impl));
    return 0;
}

static int e2e_run(opcost_path_run *r, int set, char *err, size_t len)
{
    const rowops_call c = opcost_workload_call(r->w, set);
    const rowops_impl impl = rowops_choose_impl(&c);
    if (rowops_impl_is_cuda(impl))
        return rowops_bridge_cuda_kernel(impl, &c, err, len);
    const opcost_cpu_kernel k = opcost_cpu_kernel_of(impl);
    if (!k) {
        snprintf(err, len, "no C kernel: %s", rowops_choose(&c).reason);
        return -1;
    }
    opcost_run_cpu_kernel(impl, k, &c);
    return 0;
}

static int e2e_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    const opcost_set *s = &r->w->sets[set];
    const opcost_outputs o = {s->out, s->residual_out, s->rstd};
    return opcost_verify_outputs(r->w, set, &o, why, len);
}

static void e2e_release(opcost_path_run *r)
{
    (void)r;
}

const opcost_path opcost_path_kernel_e2e = {
    .name = "kernel-e2e",
    .devices = OPCOST_ON_CPU | OPCOST_ON_CUDA,
    .description = "the C kernel from the original layout to the final output, "
                   "through the "
                   "eligibility function",
    .takes_variants = 0,
    .needs_torch = 1,
    .prepare = e2e_prepare,
    .run = e2e_run,
    .verify = e2e_verify,
    .convert = NULL,
    .release = e2e_release,
};
