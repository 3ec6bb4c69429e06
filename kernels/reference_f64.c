/* The C double-precision reference the C tests compare every kernel with.
 * It follows the contract literally: h is rounded to x's dtype (as the
 * unfused eager add does), everything after that is double. Outputs are
 * dense row-major double arrays: out and residual_out [rows*N], rstd [rows]. */
#include "reference_f64.h"
#include "rowops_elem.h"

#include <math.h>

void rowops_reference_f64(const rowops_call *c, double *out,
                          double *residual_out, double *rstd)
{
    const int rank = c->x.rank;
    const int64_t n = c->x.sizes[rank - 1];
    const int64_t rows = rowops_tensor_rows(&c->x);
    const rowops_dtype dt = c->x.dtype;
    const size_t es = rowops_dtype_size(dt);
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    for (int64_t row = 0; row < rows; ++row) {
        const char *x = (const char *)c->x.data +
                        rowops_tensor_row_offset(&c->x, row) * (int64_t)es;
        const char *r =
            fused
                ? (const char *)c->residual.data +
                      rowops_tensor_row_offset(&c->residual, row) * (int64_t)es
                : NULL;
        double *h = residual_out ? residual_out + row * n : NULL;
        double *y = out + row * n;
        double ss = 0.0;
        for (int64_t i = 0; i < n; ++i) {
            double v;
            if (!fused) {
                v = rowops_load_d(x, i * c->x.strides[rank - 1], dt);
            } else if (dt == ROWOPS_F64) {
                v = rowops_load_d(x, i * c->x.strides[rank - 1], dt) +
                    rowops_load_d(r, i * c->residual.strides[rank - 1], dt);
            } else {
                /* Round the float sum to dt, exactly like eager x + r. */
                uint64_t tmp = 0;
                rowops_store_f(
                    &tmp, 0, dt,
                    rowops_load_f(x, i * c->x.strides[rank - 1], dt) +
                        rowops_load_f(r, i * c->residual.strides[rank - 1],
                                      dt));
                v = rowops_load_d(&tmp, 0, dt);
            }
            if (h)
                h[i] = v;
            y[i] = v;
            ss += v * v;
        }
        const double rs = 1.0 / sqrt((n > 0 ? ss / (double)n : 0.0) + c->eps);
        rstd[row] = rs;
        for (int64_t i = 0; i < n; ++i) {
            y[i] *= rs;
            if (fused)
                y[i] *= rowops_load_d(c->weight.data, i * c->weight.strides[0],
                                      c->weight.dtype);
        }
    }
}
