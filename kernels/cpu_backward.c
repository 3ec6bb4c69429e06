/* The strided CPU backward kernel: correct for any strides and every dtype.
 *
 * Per row, pass 1 recomputes the normalized row n = h * rstd from the saved
 * h and rstd and reduces mean(gw * n); pass 2 writes grad_h and adds
 * grad_out * n to the caller's weight-gradient partial row. Saving h and
 * rstd (not x and residual) is what the forward's residual_out gives for
 * free; recomputing n costs one multiply per element. The row helpers are
 * generated once per accumulation type. */
#include "rowops.h"
#include "rowops_elem.h"

static float load_acc_f(const void *base, int64_t i, rowops_dtype dt)
{
    return rowops_load_f(base, i, dt);
}

static double load_acc_d(const void *base, int64_t i, rowops_dtype dt)
{
    return rowops_load_d(base, i, dt);
}

static void store_acc_f(void *base, int64_t i, rowops_dtype dt, float v)
{
    rowops_store_f(base, i, dt, v);
}

static void store_acc_d(void *base, int64_t i, rowops_dtype dt, double v)
{
    rowops_store_d(base, i, dt, v);
}

/* Element offset of a per-row scalar (rstd, grad_rstd) for row `row`. */
static int64_t scalar_offset(const rowops_tensor *t, int64_t row)
{
    return rowops_index_offset(t->sizes, t->strides, t->rank, row);
}

#define DEFINE_BACKWARD_ROW(SUF, ACC, LOAD, STORE)                             \
    static void backward_row_##SUF(const rowops_backward_call *c, int64_t row, \
                                   ACC *wpart)                                 \
    {                                                                          \
        const int rk = c->h.rank - 1;                                          \
        const int64_t n = c->h.sizes[rk];                                      \
        const rowops_dtype dt = c->h.dtype;                                    \
        const void *h = rowops_tensor_row_ptr(&c->h, row);                     \
        const void *g = rowops_tensor_row_ptr(&c->grad_out, row);              \
        void *gx = rowops_tensor_row_ptr(&c->grad_h, row);                     \
        const int64_t sh = c->h.strides[rk], sg = c->grad_out.strides[rk];     \
        const int64_t sx = c->grad_h.strides[rk];                              \
        const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;               \
        const void *w = fused ? c->weight.data : NULL;                         \
        const int64_t sw = fused ? c->weight.strides[0] : 0;                   \
        const rowops_dtype wdt = c->weight.dtype;                              \
        const void *gr =                                                       \
            fused && c->grad_residual_out.data                                 \
                ? rowops_tensor_row_ptr(&c->grad_residual_out, row)            \
                : NULL;                                                        \
        const int64_t sgr = gr ? c->grad_residual_out.strides[rk] : 0;         \
        const ACC r =                                                          \
            LOAD(c->rstd.data, scalar_offset(&c->rstd, row), c->rstd.dtype);   \
        const ACC grstd =                                                      \
            c->grad_rstd.data                                                  \
                ? LOAD(c->grad_rstd.data, scalar_offset(&c->grad_rstd, row),   \
                       c->grad_rstd.dtype)                                     \
                : (ACC)0;                                                      \
        /* pass 1: dot = sum(gw * n), four partial sums */                     \
        ACC a[4] = {0, 0, 0, 0};                                               \
        for (int64_t i = 0; i < n; ++i) {                                      \
            ACC gw = LOAD(g, i * sg, dt);                                      \
            if (w)                                                             \
                gw *= LOAD(w, i * sw, wdt);                                    \
            a[i & 3] += gw * (LOAD(h, i * sh, dt) * r);                        \
        }                                                                      \
        const ACC dot = (a[0] + a[1]) + (a[2] + a[3]);                         \
        const ACC inv_n = (ACC)1 / (ACC)(n > 0 ? n : 1);                       \
        const ACC k = (r * dot + grstd * r * r) * inv_n;                       \
        /* pass 2: grad_h, and the weight gradient's partial row */            \
        for (int64_t i = 0; i < n; ++i) {                                      \
            const ACC gv = LOAD(g, i * sg, dt);                                \
            const ACC nv = LOAD(h, i * sh, dt) * r;                            \
            const ACC gw = w ? gv * LOAD(w, i * sw, wdt) : gv;                 \
            ACC v = r * gw - nv * k;                                           \
            if (gr)                                                            \
                v += LOAD(gr, i * sgr, dt);                                    \
            STORE(gx, i *sx, dt, v);                                           \
            if (wpart)                                                         \
                wpart[i] += gv * nv;                                           \
        }                                                                      \
    }

DEFINE_BACKWARD_ROW(f, float, load_acc_f, store_acc_f)
DEFINE_BACKWARD_ROW(d, double, load_acc_d, store_acc_d)

void rowops_cpu_backward_strided(const rowops_backward_call *call,
                                 int64_t row_begin, int64_t row_end,
                                 void *weight_grad_partial)
{
    const int fused = call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    for (int64_t row = row_begin; row < row_end; ++row) {
        if (call->h.dtype == ROWOPS_F64)
            backward_row_d(call, row, fused ? weight_grad_partial : NULL);
        else
            backward_row_f(call, row, fused ? weight_grad_partial : NULL);
    }
}
