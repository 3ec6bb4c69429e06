/* The portable fast CPU kernel: the same eligible calls and the same row
 * algorithm as cpu_fast_avx2.c, in plain C over blocks of 8 floats that the
 * compiler vectorizes for the baseline ISA. Used when the CPU lacks AVX2,
 * FMA or F16C. */
#include "cpu_fast_rows.h"
#include "rowops.h"
#include "rowops_elem.h"
#include "rowops_sum.h"

#include <math.h>

#define BLOCK 8
/* Each of the BLOCK lanes adds ROWOPS_SUM_LANE_TERMS squares per chunk;
 * chunk sums are added in double (rowops_sum.h). */
#define CHUNK (BLOCK * ROWOPS_SUM_LANE_TERMS)

static inline float f32_id(float v)
{
    return v;
}

#define DEFINE_PORTABLE_ROW(SUF, T, TO_F, FROM_F)                              \
    static void portable_row_##SUF(                                            \
        const void *vx, const void *vr, const void *w, int w_f32, void *vout,  \
        void *vh, int64_t n, float eps, float *rstd_out)                       \
    {                                                                          \
        const T *x = vx, *r = vr;                                              \
        T *out = vout, *h = vh;                                                \
        const T *src = h ? h : x;                                              \
        const int64_t blocks = n / BLOCK * BLOCK;                              \
        rowops_sum total = {0, 0};                                             \
        for (int64_t c = 0; c < blocks; c += CHUNK) {                          \
            const int64_t ce = rowops_sum_block_end(c, CHUNK, blocks);         \
            float acc[BLOCK] = {0};                                            \
            for (int64_t i = c; i < ce; i += BLOCK) {                          \
                float v[BLOCK];                                                \
                for (int k = 0; k < BLOCK; ++k) {                              \
                    if (h)                                                     \
                        h[i + k] = FROM_F(TO_F(x[i + k]) + TO_F(r[i + k]));    \
                    v[k] = TO_F(src[i + k]);                                   \
                }                                                              \
                for (int k = 0; k < BLOCK; ++k)                                \
                    acc[k] += v[k] * v[k];                                     \
            }                                                                  \
            float chunk = 0.f;                                                 \
            for (int k = 0; k < BLOCK; ++k)                                    \
                chunk += acc[k];                                               \
            rowops_sum_add(&total, chunk);                                     \
        }                                                                      \
        float tail = 0.f;                                                      \
        for (int64_t i = blocks; i < n; ++i) {                                 \
            if (h)                                                             \
                h[i] = FROM_F(TO_F(x[i]) + TO_F(r[i]));                        \
            const float v = TO_F(src[i]);                                      \
            tail += v * v;                                                     \
        }                                                                      \
        rowops_sum_add(&total, tail);                                          \
        /* in float: a sum beyond float's range is the contract's Inf */       \
        const float sum = (float)rowops_sum_value(&total);                     \
        const float rstd = 1.0f / sqrtf(sum / (float)n + eps);                 \
        for (int64_t i = 0; i < n; ++i) {                                      \
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

void rowops_cpu_fast_portable(const rowops_call *c, int64_t row_begin,
                              int64_t row_end)
{
    static const rowops_fast_row_fns fns = {portable_row_f32, portable_row_f16,
                                            portable_row_bf16};
    rowops_cpu_fast_rows(c, row_begin, row_end, &fns);
}
