/* Contract checks for C callers (the bench and the C tests). The torch layer
 * has its own symbolic-size validation (ops/validate.cpp) with the same
 * rules and messages. */
#include "rowops.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

static int fail(char *err, size_t len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && len)
        vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

static int same_sizes(const rowops_tensor *a, const rowops_tensor *b)
{
    if (a->rank != b->rank)
        return 0;
    for (int d = 0; d < a->rank && d < ROWOPS_MAX_RANK; ++d)
        if (a->sizes[d] != b->sizes[d])
            return 0;
    return 1;
}

static int is_float_dtype(rowops_dtype dt)
{
    return dt >= ROWOPS_F32 && dt < ROWOPS_DTYPE_COUNT;
}

int rowops_check_call(const rowops_call *c, char *err, size_t len)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    if (c->op < 0 || c->op >= ROWOPS_OP_COUNT)
        return fail(err, len, "op: unknown op %d", (int)c->op);
    if (c->x.rank < 1)
        return fail(err, len, "x: must have rank >= 1 (got rank %d)",
                    c->x.rank);
    if (c->x.rank > ROWOPS_MAX_RANK)
        return fail(err, len, "x: rank %d exceeds the C descriptor limit %d",
                    c->x.rank, ROWOPS_MAX_RANK);
    if (!is_float_dtype(c->x.dtype))
        return fail(err, len,
                    "x: dtype must be float32, float16, bfloat16 "
                    "or float64");
    if (!(c->eps >= 0.0) || !isfinite(c->eps))
        return fail(err, len, "eps: must be finite and >= 0 (got %g)", c->eps);
    for (int d = 0; d < c->x.rank; ++d)
        if (c->x.sizes[d] < 0)
            return fail(err, len, "x: size %d is negative", d);
    if (!same_sizes(&c->x, &c->out) || c->out.dtype != c->x.dtype)
        return fail(err, len, "out: must have x's shape and dtype");
    if (c->rstd.rank != c->x.rank - 1 ||
        c->rstd.dtype != rowops_acc_dtype(c->x.dtype))
        return fail(err, len,
                    "rstd: must have x's leading shape and dtype "
                    "%s",
                    rowops_dtype_name(rowops_acc_dtype(c->x.dtype)));
    for (int d = 0; d + 1 < c->x.rank; ++d)
        if (c->rstd.sizes[d] != c->x.sizes[d])
            return fail(err, len, "rstd: must have x's leading shape");
    if (c->out.device != c->x.device || c->rstd.device != c->x.device)
        return fail(err, len, "out: must be on x's device");
    if (!fused)
        return 0;
    if (!same_sizes(&c->x, &c->residual))
        return fail(err, len, "residual: must have the same shape as x");
    if (c->residual.dtype != c->x.dtype)
        return fail(err, len, "residual: must have x's dtype %s (got %s)",
                    rowops_dtype_name(c->x.dtype),
                    rowops_dtype_name(c->residual.dtype));
    if (c->weight.rank != 1 || c->weight.sizes[0] != c->x.sizes[c->x.rank - 1])
        return fail(err, len,
                    "weight: must have shape [N] with N = x's "
                    "last dimension");
    if (c->weight.dtype != c->x.dtype && c->weight.dtype != ROWOPS_F32)
        return fail(err, len, "weight: dtype must be x's dtype or float32");
    if (!same_sizes(&c->x, &c->residual_out) ||
        c->residual_out.dtype != c->x.dtype)
        return fail(err, len, "residual_out: must have x's shape and dtype");
    if (c->residual.device != c->x.device || c->weight.device != c->x.device ||
        c->residual_out.device != c->x.device)
        return fail(err, len, "residual: all tensors must be on x's device");
    return 0;
}
