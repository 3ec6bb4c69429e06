/* The strided CPU backward kernel: correct for any strides and every dtype.
 *
 * Per row, pass 1 recomputes the normalized row n = h * rstd from the saved
 * h and rstd and reduces mean(gw * n); pass 2 writes grad_h and adds
 * grad_out * n to the caller's weight-gradient partial row. Saving h and
 * rstd (not x and residual) is what the forward's residual_out gives for
 * free; recomputing n costs one multiply per element. Both reductions are
 * blocked (rowops_sum.h), so their error does not grow with N or with the
 * rows: mean(gw * n) as the forward's sum of squares (four partials per
 * block of DOT_BLOCK elements, block sums compensated in double), the
 * weight gradient over blocks of ROWOPS_SUM_LANE_TERMS rows summed in the
 * accumulation dtype, then compensated in double. The row helpers are
 * generated once per accumulation type. */
#include "rowops.h"
#include "rowops_elem.h"
#include "rowops_sum.h"

#include <string.h>

#define DOT_BLOCK (4 * ROWOPS_SUM_LANE_TERMS)

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
        /* pass 1: dot = sum(gw * n), four partials per block */               \
        rowops_sum total = {0, 0};                                             \
        for (int64_t i = 0; i < n;) {                                          \
            const int64_t e = rowops_sum_block_end(i, DOT_BLOCK, n);           \
            ACC a[4] = {0, 0, 0, 0};                                           \
            for (; i < e; ++i) {                                               \
                ACC gw = LOAD(g, i * sg, dt);                                  \
                if (w)                                                         \
                    gw *= LOAD(w, i * sw, wdt);                                \
                a[i & 3] += gw * (LOAD(h, i * sh, dt) * r);                    \
            }                                                                  \
            rowops_sum_add(&total, (double)((a[0] + a[1]) + (a[2] + a[3])));   \
        }                                                                      \
        const ACC dot = (ACC)rowops_sum_value(&total);                         \
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

size_t rowops_backward_scratch_bytes(const rowops_backward_call *call)
{
    const int64_t n = call->h.sizes[call->h.rank - 1];
    const size_t acc =
        call->h.dtype == ROWOPS_F64 ? sizeof(double) : sizeof(float);
    return (size_t)n * (sizeof(double) + acc);
}

/* Adds the block row (N accumulators) into the compensated sums (s, c). */
static void flush_block(const void *block, int f64, double *s, double *c,
                        int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        rowops_sum t = {s[i], c[i]};
        rowops_sum_add(&t, f64 ? ((const double *)block)[i]
                               : (double)((const float *)block)[i]);
        s[i] = t.s;
        c[i] = t.c;
    }
}

void rowops_cpu_backward_strided(const rowops_backward_call *call,
                                 int64_t row_begin, int64_t row_end,
                                 double *weight_grad, void *scratch)
{
    const int f64 = call->h.dtype == ROWOPS_F64;
    if (call->op != ROWOPS_OP_FUSED_ADD_RMS_NORM || !weight_grad) {
        for (int64_t row = row_begin; row < row_end; ++row) {
            if (f64)
                backward_row_d(call, row, NULL);
            else
                backward_row_f(call, row, NULL);
        }
        return;
    }
    const int64_t n = call->h.sizes[call->h.rank - 1];
    double *comp = scratch;
    void *block = comp + n;
    const size_t block_bytes =
        (size_t)n * (f64 ? sizeof(double) : sizeof(float));
    for (int64_t i = 0; i < n; ++i)
        weight_grad[i] = comp[i] = 0.0;
    for (int64_t row = row_begin; row < row_end;) {
        const int64_t e =
            rowops_sum_block_end(row, ROWOPS_SUM_LANE_TERMS, row_end);
        memset(block, 0, block_bytes);
        for (; row < e; ++row) {
            if (f64)
                backward_row_d(call, row, block);
            else
                backward_row_f(call, row, block);
        }
        flush_block(block, f64, weight_grad, comp, n);
    }
    for (int64_t i = 0; i < n; ++i) {
        const rowops_sum t = {weight_grad[i], comp[i]};
        weight_grad[i] = rowops_sum_value(&t);
    }
}
