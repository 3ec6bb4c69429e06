#include "cpu_fast_rows.h"

void rowops_cpu_fast_rows(const rowops_call *c, int64_t row_begin,
                          int64_t row_end, const rowops_fast_row_fns *fns)
{
    const int64_t n = c->x.sizes[c->x.rank - 1];
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const void *w = fused ? c->weight.data : NULL;
    const int w_f32 = fused && c->weight.dtype == ROWOPS_F32;
    const float eps = (float)c->eps;
    const rowops_fast_row_fn row_fn = c->x.dtype == ROWOPS_F16    ? fns->f16
                                      : c->x.dtype == ROWOPS_BF16 ? fns->bf16
                                                                  : fns->f32;
    for (int64_t row = row_begin; row < row_end; ++row) {
        float *rstd = rowops_tensor_index_ptr(&c->rstd, row);
        row_fn(rowops_tensor_row_ptr(&c->x, row),
               fused ? rowops_tensor_row_ptr(&c->residual, row) : NULL, w,
               w_f32, rowops_tensor_row_ptr(&c->out, row),
               fused ? rowops_tensor_row_ptr(&c->residual_out, row) : NULL, n,
               eps, rstd);
    }
}
