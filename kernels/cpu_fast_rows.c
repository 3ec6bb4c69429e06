#include "cpu_fast_rows.h"

static void *at_row(const rowops_tensor *t, int64_t row)
{
    return (char *)t->data + rowops_tensor_row_offset(t, row) *
                                 (int64_t)rowops_dtype_size(t->dtype);
}

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
        float *rstd = (float *)c->rstd.data +
                      rowops_index_offset(c->rstd.sizes, c->rstd.strides,
                                          c->rstd.rank, row);
        row_fn(at_row(&c->x, row), fused ? at_row(&c->residual, row) : NULL, w,
               w_f32, at_row(&c->out, row),
               fused ? at_row(&c->residual_out, row) : NULL, n, eps, rstd);
    }
}
