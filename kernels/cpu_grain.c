/* The CPU kernels' threading policy for a call (rowops.h). */
#include "rowops.h"
#include "rowops_tensor.h"

/* A written tensor whose rows interleave: its own elements lie apart and
 * its rows closer than a cache line (a column-major output, the fused op
 * in place on a transposed input), so every line holds parts of several
 * rows, not only the lines at a task's edges. */
static int rows_interleave(const rowops_tensor *t)
{
    if (!t->data || t->rank < 2 || t->sizes[t->rank - 1] < 2 ||
        t->sizes[t->rank - 2] < 2)
        return 0;
    const int64_t inner = t->strides[t->rank - 1];
    const int64_t row = t->strides[t->rank - 2];
    const int64_t row_bytes =
        (row < 0 ? -row : row) * (int64_t)rowops_dtype_size(t->dtype);
    return inner != 1 && row_bytes < ROWOPS_CPU_LINE_BYTES;
}

int64_t rowops_cpu_grain(const rowops_call *call, rowops_impl impl)
{
    const int64_t n = call->x.sizes[call->x.rank - 1];
    const int64_t grain = rowops_cpu_grain_rows(n);
    const int fused = call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    /* the scalar kernel on 16-bit rows spends its time converting, which
     * two threads share better than they lose to the shared lines
     * (measured: results/experiments/20261207-interleaved-grain) */
    const int scalar16 = impl == ROWOPS_IMPL_CPU_STRIDED &&
                         rowops_dtype_size(call->x.dtype) == 2;
    if (scalar16 || (!rows_interleave(&call->out) &&
                     !(fused && rows_interleave(&call->residual_out))))
        return grain;
    return grain > ROWOPS_CPU_INTERLEAVED_GRAIN_ROWS
               ? grain
               : ROWOPS_CPU_INTERLEAVED_GRAIN_ROWS;
}
