/* The portable fast CPU kernel: the same eligible calls and the same row
 * algorithm as cpu_fast_avx2.c, in plain C over blocks of 8 floats that the
 * compiler vectorizes for the baseline ISA. Used when the CPU lacks AVX2,
 * FMA or F16C. */
#include "rowops.h"
#include "rowops_elem.h"

#include <math.h>

#define BLOCK 8

static inline float f32_id(float v)
{
    return v;
}

#define DEFINE_PORTABLE_ROW(SUF, T, TO_F, FROM_F)                              \
    static void portable_row_##SUF(const T *x, const T *r, const void *w,      \
                                   int w_f32, T *out, T *h, int64_t n,         \
                                   float eps, float *rstd_out)                 \
    {                                                                          \
        float acc[BLOCK] = {0};                                                \
        const T *src = h ? h : x;                                              \
        int64_t i = 0;                                                         \
        for (; i + BLOCK <= n; i += BLOCK) {                                   \
            float v[BLOCK];                                                    \
            for (int k = 0; k < BLOCK; ++k) {                                  \
                if (h)                                                         \
                    h[i + k] = FROM_F(TO_F(x[i + k]) + TO_F(r[i + k]));        \
                v[k] = TO_F(src[i + k]);                                       \
            }                                                                  \
            for (int k = 0; k < BLOCK; ++k)                                    \
                acc[k] += v[k] * v[k];                                         \
        }                                                                      \
        float sum = 0.f;                                                       \
        for (; i < n; ++i) {                                                   \
            if (h)                                                             \
                h[i] = FROM_F(TO_F(x[i]) + TO_F(r[i]));                        \
            const float v = TO_F(src[i]);                                      \
            sum += v * v;                                                      \
        }                                                                      \
        for (int k = 0; k < BLOCK; ++k)                                        \
            sum += acc[k];                                                     \
        const float rstd = 1.0f / sqrtf(sum / (float)n + eps);                 \
        for (i = 0; i < n; ++i) {                                              \
            float y = TO_F(src[i]) * rstd;                                     \
            if (w)                                                             \
                y *= w_f32 ? ((const float *)w)[i] : TO_F(((const T *)w)[i]);  \
            out[i] = FROM_F(y);                                                \
        }                                                                      \
        *rstd_out = rstd;                                                      \
    }

DEFINE_PORTABLE_ROW(f32, float, f32_id, f32_id)
DEFINE_PORTABLE_ROW(f16, uint16_t, rowops_f16_to_f32, rowops_f32_to_f16)
DEFINE_PORTABLE_ROW(bf16, uint16_t, rowops_bf16_to_f32, rowops_f32_to_bf16)

static void *at_row(const rowops_tensor *t, int64_t row)
{
    return (char *)t->data + rowops_tensor_row_offset(t, row) *
                                 (int64_t)rowops_dtype_size(t->dtype);
}

void rowops_cpu_fast_portable(const rowops_call *c, int64_t row_begin,
                              int64_t row_end)
{
    const int64_t n = c->x.sizes[c->x.rank - 1];
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const void *w = fused ? c->weight.data : NULL;
    const int w_f32 = fused && c->weight.dtype == ROWOPS_F32;
    const float eps = (float)c->eps;
    for (int64_t row = row_begin; row < row_end; ++row) {
        const void *x = at_row(&c->x, row);
        const void *r = fused ? at_row(&c->residual, row) : NULL;
        void *out = at_row(&c->out, row);
        void *h = fused ? at_row(&c->residual_out, row) : NULL;
        float *rstd = (float *)c->rstd.data +
                      rowops_index_offset(c->rstd.sizes, c->rstd.strides,
                                          c->rstd.rank, row);
        switch (c->x.dtype) {
        case ROWOPS_F16:
            portable_row_f16(x, r, w, w_f32, out, h, n, eps, rstd);
            break;
        case ROWOPS_BF16:
            portable_row_bf16(x, r, w, w_f32, out, h, n, eps, rstd);
            break;
        default: portable_row_f32(x, r, w, w_f32, out, h, n, eps, rstd); break;
        }
    }
}
