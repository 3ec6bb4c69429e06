/* The column-major kernel for short columns on a CPU without AVX-512: each
 * row of x (and of the residual) is gathered from the column-major span
 * into a contiguous row on the stack, and the AVX2 row kernel
 * (rowops_cpu_fast_avx2) runs on those rows, writing the outputs where the
 * caller asked. See rowops_colmajor_copy_ok (kernels/eligibility.c) for
 * its preconditions beyond cpu_colmajor.h's: out, residual_out and the
 * weight as the row kernel wants them (32-byte aligned rows), and a row of
 * N elements within COPY_ROW_BYTES.
 *
 * Why: at a short column (B = 2-6 in 16 bits) the AVX2 tiles read a 16-row
 * unit per column where B rows are real, and ran at 0.17-0.30 of the
 * contiguous call (bfloat16, B = 2-4, N = 4096, cold, paired; a Zen 5 with
 * AVX-512 capped by ROWOPS_CPU_CAPABILITY=avx2); gathered into rows first,
 * 0.41-0.45. The gather is scalar: the span of B * N elements is in L1 or
 * L2 after its first row, and each element is one load and one store.
 * Where the CPU has AVX-512 the narrow kernel does this in registers
 * (cpu_colmajor_narrow.c) and is not replaced (0.58-0.60 against this
 * form's 0.43-0.45 there). */
#include "cpu_colmajor.h"
#include "rowops_tensor.h"

#include <stdint.h>

/* The gathered rows of one batch, per input: a stack buffer (two with the
 * residual) the batch's rows fill; a row fits (rowops_colmajor_copy_ok). */
#define COPY_BATCH_BYTES ROWOPS_COLMAJOR_COPY_ROW_BYTES

static void gather16(uint16_t *dst, const uint16_t *src, int64_t s, int64_t n)
{
    for (int64_t j = 0; j < n; ++j)
        dst[j] = src[j * s];
}

static void gather32(uint32_t *dst, const uint32_t *src, int64_t s, int64_t n)
{
    for (int64_t j = 0; j < n; ++j)
        dst[j] = src[j * s];
}

/* Rows [b0, b0 + rows) of t (x or the residual) into dst, rows rs bytes
 * apart. */
static void gather_rows(unsigned char *dst, int64_t rs, const rowops_tensor *t,
                        int64_t b0, int64_t rows)
{
    const int64_t n = t->sizes[1], s = t->strides[1];
    for (int64_t i = 0; i < rows; ++i) {
        if (rowops_dtype_size(t->dtype) == 2)
            gather16((uint16_t *)(dst + i * rs),
                     (const uint16_t *)t->data + b0 + i, s, n);
        else
            gather32((uint32_t *)(dst + i * rs),
                     (const uint32_t *)t->data + b0 + i, s, n);
    }
}

/* t's rows from b0 on, rows of them. */
static rowops_tensor rows_from(const rowops_tensor *t, int64_t b0, int64_t rows)
{
    rowops_tensor v = *t;
    v.data = rowops_tensor_row_ptr(t, b0);
    v.sizes[0] = rows;
    return v;
}

void rowops_cpu_colmajor_copy(const rowops_call *c, int64_t row_begin,
                              int64_t row_end)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const int64_t es = (int64_t)rowops_dtype_size(c->x.dtype);
    const int64_t n = c->x.sizes[1];
    /* gathered rows 32-byte aligned, as the row kernel reads them */
    const int64_t rs = (n * es + 31) / 32 * 32;
    const int64_t batch = COPY_BATCH_BYTES / rs;
    _Alignas(64) unsigned char xs[COPY_BATCH_BYTES];
    _Alignas(64) unsigned char rsb[COPY_BATCH_BYTES];
    for (int64_t b0 = row_begin; b0 < row_end; b0 += batch) {
        const int64_t rows = row_end - b0 < batch ? row_end - b0 : batch;
        rowops_call g = *c;
        gather_rows(xs, rs, &c->x, b0, rows);
        g.x.data = xs;
        g.x.sizes[0] = rows;
        g.x.strides[0] = rs / es;
        g.x.strides[1] = 1;
        if (fused) {
            gather_rows(rsb, rs, &c->residual, b0, rows);
            g.residual = g.x;
            g.residual.data = rsb;
            g.residual_out = rows_from(&c->residual_out, b0, rows);
        }
        g.out = rows_from(&c->out, b0, rows);
        g.rstd = c->rstd;
        g.rstd.data = rowops_tensor_index_ptr(&c->rstd, b0);
        g.rstd.sizes[0] = rows;
        rowops_cpu_fast_avx2(&g, 0, rows);
    }
}
