/* The strided CPU kernel: correct for any strides and every dtype.
 *
 * Per row, pass 1 reads the inputs (for the fused op it forms h, stores it to
 * residual_out and accumulates h^2), pass 2 reads x (or h back from
 * residual_out) and writes out. Reading h back instead of recomputing it is
 * what makes the in-place form safe. Four partial sums keep the float32
 * accumulation error low on long rows. */
#include "rowops.h"
#include "rowops_elem.h"

#include <math.h>

typedef struct row_view {
    char *x, *residual, *out, *residual_out;
    int64_t sx, sr, so, sro, sw; /* last-dimension strides, in elements */
} row_view;

static inline void *at_offset(const rowops_tensor *t, int64_t offset)
{
    return (char *)t->data + offset * (int64_t)rowops_dtype_size(t->dtype);
}

static float sumsq_f32(const void *p, int64_t stride, int64_t n,
                       rowops_dtype dt)
{
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; ++k) {
            const float v = rowops_load_f(p, (i + k) * stride, dt);
            acc[k] += v * v;
        }
    for (; i < n; ++i) {
        const float v = rowops_load_f(p, i * stride, dt);
        acc[0] += v * v;
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

static double sumsq_f64(const void *p, int64_t stride, int64_t n)
{
    double acc[4] = {0., 0., 0., 0.};
    int64_t i = 0;
    for (; i + 4 <= n; i += 4)
        for (int k = 0; k < 4; ++k) {
            const double v = ((const double *)p)[(i + k) * stride];
            acc[k] += v * v;
        }
    for (; i < n; ++i) {
        const double v = ((const double *)p)[i * stride];
        acc[0] += v * v;
    }
    return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}

/* h = x + residual rounded to dt, stored to residual_out. */
static void add_rows(const row_view *v, int64_t n, rowops_dtype dt)
{
    if (dt == ROWOPS_F64) {
        for (int64_t i = 0; i < n; ++i)
            ((double *)v->residual_out)[i * v->sro] =
                ((const double *)v->x)[i * v->sx] +
                ((const double *)v->residual)[i * v->sr];
        return;
    }
    for (int64_t i = 0; i < n; ++i)
        rowops_store_f(v->residual_out, i * v->sro, dt,
                       rowops_load_f(v->x, i * v->sx, dt) +
                           rowops_load_f(v->residual, i * v->sr, dt));
}

static void scale_row(const rowops_call *c, const row_view *v, int64_t n,
                      const char *src, int64_t ss, double rstd)
{
    const rowops_dtype dt = c->x.dtype;
    const void *w = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM ? c->weight.data
                                                           : NULL;
    if (dt == ROWOPS_F64) {
        for (int64_t i = 0; i < n; ++i) {
            double y = ((const double *)src)[i * ss] * rstd;
            if (w)
                y *= rowops_load_d(w, i * v->sw, c->weight.dtype);
            ((double *)v->out)[i * v->so] = y;
        }
        return;
    }
    const float r = (float)rstd;
    for (int64_t i = 0; i < n; ++i) {
        float y = rowops_load_f(src, i * ss, dt) * r;
        if (w)
            y *= rowops_load_f(w, i * v->sw, c->weight.dtype);
        rowops_store_f(v->out, i * v->so, dt, y);
    }
}

void rowops_cpu_strided(const rowops_call *c, int64_t row_begin,
                        int64_t row_end)
{
    const int rank = c->x.rank;
    const int64_t n = c->x.sizes[rank - 1];
    const rowops_dtype dt = c->x.dtype;
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    row_view v = {0};
    v.sx = c->x.strides[rank - 1];
    v.so = c->out.strides[rank - 1];
    if (fused) {
        v.sr = c->residual.strides[rank - 1];
        v.sro = c->residual_out.strides[rank - 1];
        v.sw = c->weight.strides[0];
    }
    for (int64_t row = row_begin; row < row_end; ++row) {
        v.x = at_offset(&c->x, rowops_tensor_row_offset(&c->x, row));
        v.out = at_offset(&c->out, rowops_tensor_row_offset(&c->out, row));
        const char *src = v.x;
        int64_t ss = v.sx;
        if (fused) {
            v.residual = at_offset(
                &c->residual, rowops_tensor_row_offset(&c->residual, row));
            v.residual_out =
                at_offset(&c->residual_out,
                          rowops_tensor_row_offset(&c->residual_out, row));
            add_rows(&v, n, dt);
            src = v.residual_out;
            ss = v.sro;
        }
        const double denom = n > 0 ? (double)n : 1.0;
        double rstd;
        if (dt == ROWOPS_F64) {
            rstd = 1.0 / sqrt(sumsq_f64(src, ss, n) / denom + c->eps);
        } else {
            const float mean = sumsq_f32(src, ss, n, dt) / (float)denom;
            rstd = (double)(1.0f / sqrtf(mean + (float)c->eps));
        }
        scale_row(c, &v, n, src, ss, rstd);
        const int64_t ro = rowops_index_offset(c->rstd.sizes, c->rstd.strides,
                                               c->rstd.rank, row);
        rowops_store_d(c->rstd.data, ro, c->rstd.dtype, rstd);
    }
}
