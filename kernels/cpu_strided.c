/* The strided CPU kernel: correct for any strides and every dtype.
 *
 * Per row, pass 1 reads the inputs (for the fused op it forms h, stores it to
 * residual_out and accumulates h^2), pass 2 reads x (or h back from
 * residual_out) and writes out. Reading h back instead of recomputing it is
 * what makes the in-place form safe. The sum of squares is blocked
 * (rowops_sum.h): four partials over blocks of SUMSQ_BLOCK elements, the
 * block sums added in double, so its error does not grow with N. The row
 * helpers are generated once per storage type so every inner loop is
 * branch-free. */
#include "rowops.h"
#include "rowops_elem.h"
#include "rowops_sum.h"

#include <math.h>

/* Four partials of ROWOPS_SUM_LANE_TERMS terms each per block. */
#define SUMSQ_BLOCK (4 * ROWOPS_SUM_LANE_TERMS)

/* The sum of squares of n elements at stride s, accumulated in ACC. */
#define DEFINE_SUMSQ(SUF, T, ACC, TO_ACC)                                      \
    static double sumsq_##SUF(const T *p, int64_t s, int64_t n)                \
    {                                                                          \
        rowops_sum total = {0, 0};                                             \
        for (int64_t i = 0; i < n;) {                                          \
            const int64_t e = rowops_sum_block_end(i, SUMSQ_BLOCK, n);         \
            ACC a0 = 0, a1 = 0, a2 = 0, a3 = 0;                                \
            for (; i + 4 <= e; i += 4) {                                       \
                const ACC v0 = TO_ACC(p[i * s]), v1 = TO_ACC(p[(i + 1) * s]);  \
                const ACC v2 = TO_ACC(p[(i + 2) * s]);                         \
                const ACC v3 = TO_ACC(p[(i + 3) * s]);                         \
                a0 += v0 * v0;                                                 \
                a1 += v1 * v1;                                                 \
                a2 += v2 * v2;                                                 \
                a3 += v3 * v3;                                                 \
            }                                                                  \
            for (; i < e; ++i) {                                               \
                const ACC v = TO_ACC(p[i * s]);                                \
                a0 += v * v;                                                   \
            }                                                                  \
            rowops_sum_add(&total, (double)((a0 + a1) + (a2 + a3)));           \
        }                                                                      \
        return rowops_sum_value(&total);                                       \
    }

static inline float f32_id(float v)
{
    return v;
}

#define DEFINE_ROW_HELPERS(SUF, T, TO_F, FROM_F)                               \
    DEFINE_SUMSQ(SUF, T, float, TO_F)                                          \
    static void add_##SUF(const T *x, int64_t sx, const T *r, int64_t sr,      \
                          T *h, int64_t sh, int64_t n)                         \
    {                                                                          \
        for (int64_t i = 0; i < n; ++i)                                        \
            h[i * sh] = FROM_F(TO_F(x[i * sx]) + TO_F(r[i * sr]));             \
    }                                                                          \
    static void scale_##SUF(const T *src, int64_t ss, float rstd,              \
                            const void *w, rowops_dtype wdt, int64_t sw,       \
                            T *out, int64_t so, int64_t n)                     \
    {                                                                          \
        if (!w) {                                                              \
            for (int64_t i = 0; i < n; ++i)                                    \
                out[i * so] = FROM_F(TO_F(src[i * ss]) * rstd);                \
        } else if (wdt == ROWOPS_F32) {                                        \
            const float *wf = w;                                               \
            for (int64_t i = 0; i < n; ++i)                                    \
                out[i * so] = FROM_F(TO_F(src[i * ss]) * rstd * wf[i * sw]);   \
        } else {                                                               \
            const T *wt = w;                                                   \
            for (int64_t i = 0; i < n; ++i)                                    \
                out[i * so] =                                                  \
                    FROM_F(TO_F(src[i * ss]) * rstd * TO_F(wt[i * sw]));       \
        }                                                                      \
    }                                                                          \
    static void row_##SUF(const rowops_call *c, const T *x, const T *r,        \
                          const void *w, T *out, T *h, int64_t n,              \
                          float *rstd_out)                                     \
    {                                                                          \
        const int rk = c->x.rank - 1;                                          \
        const T *src = x;                                                      \
        int64_t ss = c->x.strides[rk];                                         \
        if (h) {                                                               \
            add_##SUF(x, ss, r, c->residual.strides[rk], h,                    \
                      c->residual_out.strides[rk], n);                         \
            src = h;                                                           \
            ss = c->residual_out.strides[rk];                                  \
        }                                                                      \
        /* in float: a sum beyond float's range is the contract's Inf */       \
        const float sum = (float)sumsq_##SUF(src, ss, n);                      \
        const float mean = sum / (float)(n > 0 ? n : 1);                       \
        const float rstd = 1.0f / sqrtf(mean + (float)c->eps);                 \
        scale_##SUF(src, ss, rstd, w, c->weight.dtype,                         \
                    w ? c->weight.strides[0] : 0, out, c->out.strides[rk], n); \
        *rstd_out = rstd;                                                      \
    }

DEFINE_ROW_HELPERS(f32, float, f32_id, f32_id)
DEFINE_ROW_HELPERS(f16, uint16_t, rowops_f16_to_f32, rowops_f32_to_f16)
DEFINE_ROW_HELPERS(bf16, uint16_t, rowops_bf16_to_f32, rowops_f32_to_bf16)

static inline double f64_id(double v)
{
    return v;
}

DEFINE_SUMSQ(f64, double, double, f64_id)

/* float64: double accumulation; weight is float64 or float32. */
static void row_f64(const rowops_call *c, const double *x, const double *r,
                    const void *w, double *out, double *h, int64_t n,
                    double *rstd_out)
{
    const int rk = c->x.rank - 1;
    const double *src = x;
    int64_t ss = c->x.strides[rk];
    if (h) {
        const int64_t sr = c->residual.strides[rk];
        const int64_t sh = c->residual_out.strides[rk];
        for (int64_t i = 0; i < n; ++i)
            h[i * sh] = x[i * ss] + r[i * sr];
        src = h;
        ss = sh;
    }
    const double mean = sumsq_f64(src, ss, n) / (double)(n ? n : 1);
    const double rstd = 1.0 / sqrt(mean + c->eps);
    const int64_t so = c->out.strides[rk];
    const int64_t sw = w ? c->weight.strides[0] : 0;
    for (int64_t i = 0; i < n; ++i) {
        double y = src[i * ss] * rstd;
        if (w)
            y *= rowops_load_d(w, i * sw, c->weight.dtype);
        out[i * so] = y;
    }
    *rstd_out = rstd;
}

void rowops_cpu_strided(const rowops_call *c, int64_t row_begin,
                        int64_t row_end)
{
    const int64_t n = c->x.sizes[c->x.rank - 1];
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const void *w = fused ? c->weight.data : NULL;
    for (int64_t row = row_begin; row < row_end; ++row) {
        const void *x = rowops_tensor_row_ptr(&c->x, row);
        const void *r = fused ? rowops_tensor_row_ptr(&c->residual, row) : NULL;
        void *out = rowops_tensor_row_ptr(&c->out, row);
        void *h = fused ? rowops_tensor_row_ptr(&c->residual_out, row) : NULL;
        const int64_t ro = rowops_index_offset(c->rstd.sizes, c->rstd.strides,
                                               c->rstd.rank, row);
        switch (c->x.dtype) {
        case ROWOPS_F64:
            row_f64(c, x, r, w, out, h, n, (double *)c->rstd.data + ro);
            break;
        case ROWOPS_F16:
            row_f16(c, x, r, w, out, h, n, (float *)c->rstd.data + ro);
            break;
        case ROWOPS_BF16:
            row_bf16(c, x, r, w, out, h, n, (float *)c->rstd.data + ro);
            break;
        default:
            row_f32(c, x, r, w, out, h, n, (float *)c->rstd.data + ro);
            break;
        }
    }
}
