/* The fused op in place on column-major rows (fused_add_rms_norm_ on a
 * transposed x and residual): element (b, j) at data + b + j * S, and the
 * outputs are the inputs. Sixteen rows at a time, one per vector lane: a
 * column's sixteen elements are contiguous, so pass 1 reads x and residual
 * a column at a time, stores h over the residual and adds each lane's
 * square to its own row's sum (no transpose, no horizontal sum), and pass 2
 * reads h back and stores out over x. The column-major kernels that read
 * tiles (cpu_colmajor.h) write row-major outputs, which in place they
 * cannot; the strided kernel walks each row across N lines, and the
 * row-major outputs copied back through ATen took 3-6x the op (Zen 5,
 * float32 N = 4096, B = 101-3152). The rows of a range that do not fill
 * sixteen lanes run in scalar code over the same columns.
 *
 * Preconditions (rowops_colmajor_inplace_ok, kernels/eligibility.c): the
 * fused op; x 2-D with strides {1, S >= B}; residual with x's sizes and
 * strides, not overlapping it; out is x and residual_out is residual; the
 * weight with unit stride; dtype float32, float16 or bfloat16, the weight
 * float32 or x's; rstd float32. Compiled with -mavx2 -mfma -mf16c: call it
 * only where rowops_cpu_features() reports ROWOPS_CPU_FAST_FEATURES.
 * Threads take disjoint [row_begin, row_end) ranges and touch nothing
 * outside their rows. */
#define ROWOPS_VEC16_BITS 256
#include "cpu_vec16.h"
#include "rowops.h"
#include "rowops_elem.h"
#include "rowops_sum.h"
#include "rowops_tensor.h"

#include <math.h>

#define LANES 16

/* bfloat16 widened by v16_load16_bf16 holds its rows in this order per
 * lane (pack16_bf16 restores it); float32 and float16 in their own. */
static const int bf16_lane_row[LANES] = {0, 1, 2, 3, 8,  9,  10, 11,
                                         4, 5, 6, 7, 12, 13, 14, 15};

static inline vec16 load_rows(const void *p, rowops_dtype dt)
{
    switch (dt) {
    case ROWOPS_BF16: return v16_load16_bf16(p);
    case ROWOPS_F16: return v16_load_f16((const uint16_t *)p);
    default: return v16_loadu((const float *)p);
    }
}

/* v rounded to dt and stored; the rounded value (what a later load reads) */
static inline vec16 store_rows(void *p, vec16 v, rowops_dtype dt)
{
    switch (dt) {
    case ROWOPS_BF16:
        v = v16_round_bf16_nan(v);
        _mm256_storeu_si256((__m256i *)p, pack16_bf16(v));
        return v;
    case ROWOPS_F16: {
        const half16 h = v16_to_f16(v);
        _mm_storeu_si128((__m128i *)p, h.a);
        _mm_storeu_si128((__m128i *)p + 1, h.b);
        return v16_from_f16(h);
    }
    default: v16_store_f32((float *)p, v, 0); return v;
    }
}

/* Sixteen rows from b0: both passes in vectors. */
static void block16(const rowops_call *c, int64_t b0)
{
    const rowops_dtype dt = c->x.dtype, wdt = c->weight.dtype;
    const int64_t n = c->x.sizes[1], s = c->x.strides[1];
    const size_t es = rowops_dtype_size(dt);
    unsigned char *const x = (unsigned char *)c->x.data + b0 * (int64_t)es;
    unsigned char *const r =
        (unsigned char *)c->residual.data + b0 * (int64_t)es;
    const int64_t col = s * (int64_t)es; /* bytes from a column to the next */
    rowops_sum sums[LANES] = {{0, 0}};
    float lane[LANES] __attribute__((aligned(32)));
    for (int64_t j0 = 0; j0 < n; j0 += ROWOPS_SUM_LANE_TERMS) {
        const int64_t j1 = rowops_sum_block_end(j0, ROWOPS_SUM_LANE_TERMS, n);
        vec16 acc = v16_zero();
        for (int64_t j = j0; j < j1; ++j) {
            const vec16 h = store_rows(
                r + j * col,
                v16_add(load_rows(x + j * col, dt), load_rows(r + j * col, dt)),
                dt);
            acc = v16_fmadd(h, h, acc);
        }
        v16_store(lane, acc);
        for (int k = 0; k < LANES; ++k)
            rowops_sum_add(&sums[k], lane[k]);
    }
    const float eps = (float)c->eps;
    for (int k = 0; k < LANES; ++k) {
        lane[k] =
            1.0f / sqrtf((float)rowops_sum_value(&sums[k]) / (float)n + eps);
        const int row = dt == ROWOPS_BF16 ? bf16_lane_row[k] : k;
        *(float *)rowops_tensor_index_ptr(&c->rstd, b0 + row) = lane[k];
    }
    const vec16 rv = v16_load(lane);
    for (int64_t j = 0; j < n; ++j) {
        const vec16 w = v16_set1(rowops_load_f(c->weight.data, j, wdt));
        store_rows(x + j * col,
                   v16_mul(v16_mul(load_rows(r + j * col, dt), rv), w), dt);
    }
}

/* Rows [b0, b1), fewer than sixteen: the same passes in scalar code. */
static void block_scalar(const rowops_call *c, int64_t b0, int64_t b1)
{
    const rowops_dtype dt = c->x.dtype, wdt = c->weight.dtype;
    const int64_t n = c->x.sizes[1], s = c->x.strides[1], m = b1 - b0;
    rowops_sum sums[LANES] = {{0, 0}};
    float part[LANES];
    for (int64_t j0 = 0; j0 < n; j0 += ROWOPS_SUM_LANE_TERMS) {
        const int64_t j1 = rowops_sum_block_end(j0, ROWOPS_SUM_LANE_TERMS, n);
        for (int64_t k = 0; k < m; ++k)
            part[k] = 0.f;
        for (int64_t j = j0; j < j1; ++j)
            for (int64_t k = 0; k < m; ++k) {
                const int64_t at = b0 + k + j * s;
                rowops_store_f(c->residual.data, at, dt,
                               rowops_load_f(c->x.data, at, dt) +
                                   rowops_load_f(c->residual.data, at, dt));
                const float h = rowops_load_f(c->residual.data, at, dt);
                part[k] += h * h;
            }
        for (int64_t k = 0; k < m; ++k)
            rowops_sum_add(&sums[k], part[k]);
    }
    for (int64_t k = 0; k < m; ++k)
        part[k] = 1.0f / sqrtf((float)rowops_sum_value(&sums[k]) / (float)n +
                               (float)c->eps);
    for (int64_t k = 0; k < m; ++k)
        *(float *)rowops_tensor_index_ptr(&c->rstd, b0 + k) = part[k];
    for (int64_t j = 0; j < n; ++j) {
        const float w = rowops_load_f(c->weight.data, j, wdt);
        for (int64_t k = 0; k < m; ++k) {
            const int64_t at = b0 + k + j * s;
            rowops_store_f(c->x.data, at, dt,
                           rowops_load_f(c->residual.data, at, dt) * part[k] *
                               w);
        }
    }
}

void rowops_cpu_colmajor_inplace(const rowops_call *call, int64_t row_begin,
                                 int64_t row_end)
{
    int64_t b = row_begin;
    for (; b + LANES <= row_end; b += LANES)
        block16(call, b);
    if (b < row_end)
        block_scalar(call, b, row_end);
}
