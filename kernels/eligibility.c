/* The eligibility function: the only place that picks an implementation.
 * It reads descriptors only, never data, so it gives the same answer for
 * real and fake (meta) tensors and can be unit-tested without memory. */
#include "rowops.h"

#include <stdio.h>

const char *rowops_op_name(rowops_op op)
{
    switch (op) {
    case ROWOPS_OP_RMS_NORM_ROWS: return "rms_norm_rows";
    case ROWOPS_OP_FUSED_ADD_RMS_NORM: return "fused_add_rms_norm";
    default: return "unknown";
    }
}

const char *rowops_impl_name(rowops_impl impl)
{
    switch (impl) {
    case ROWOPS_IMPL_CPU_STRIDED: return "cpu_strided";
    case ROWOPS_IMPL_CUDA_STRIDED: return "cuda_strided";
    case ROWOPS_IMPL_REFERENCE: return "reference";
    default: return "unknown";
    }
}

static rowops_choice choice(rowops_impl impl, const char *reason)
{
    rowops_choice c;
    c.impl = impl;
    snprintf(c.reason, sizeof c.reason, "%s", reason);
    return c;
}

/* Every tensor a call touches, for checks that apply to all of them. */
static int call_tensors(const rowops_call *call, const rowops_tensor **out)
{
    int n = 0;
    out[n++] = &call->x;
    out[n++] = &call->out;
    out[n++] = &call->rstd;
    if (call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        out[n++] = &call->residual;
        out[n++] = &call->weight;
        out[n++] = &call->residual_out;
    }
    return n;
}

rowops_choice rowops_choose(const rowops_call *call)
{
    const rowops_tensor *ts[6];
    const int nt = call_tensors(call, ts);
    for (int i = 0; i < nt; ++i) {
        if (ts[i]->rank > ROWOPS_MAX_RANK) {
            char reason[200];
            snprintf(reason, sizeof reason,
                     "rank %d exceeds the descriptor's %d dimensions",
                     ts[i]->rank, ROWOPS_MAX_RANK);
            return choice(ROWOPS_IMPL_REFERENCE, reason);
        }
    }
    switch (call->x.device) {
    case ROWOPS_DEVICE_CPU:
        return choice(ROWOPS_IMPL_CPU_STRIDED,
                      "CPU: strided kernel handles any strides and dtype");
    case ROWOPS_DEVICE_CUDA:
#ifdef ROWOPS_HAVE_CUDA
        return choice(ROWOPS_IMPL_CUDA_STRIDED,
                      "CUDA: strided kernel handles any strides and dtype");
#else
        return choice(ROWOPS_IMPL_REFERENCE,
                      "CUDA: library built without CUDA kernels");
#endif
    default:
        return choice(ROWOPS_IMPL_REFERENCE,
                      "device has no rowops kernel; using the reference");
    }
}
