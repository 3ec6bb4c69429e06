/* The row loop both fast CPU kernels share: per-row pointers from the
 * descriptors, then one row function per storage type. */
#ifndef ROWOPS_CPU_FAST_ROWS_H
#define ROWOPS_CPU_FAST_ROWS_H

#include "rowops.h"

/* One row: x, residual (NULL unless fused), weight (NULL unless fused),
 * out, h (residual_out; NULL unless fused), N, eps, where rstd goes. */
typedef void (*rowops_fast_row_fn)(const void *x, const void *r, const void *w,
                                   int w_f32, void *out, void *h, int64_t n,
                                   float eps, float *rstd_out);

typedef struct rowops_fast_row_fns {
    rowops_fast_row_fn f32, f16, bf16;
} rowops_fast_row_fns;

void rowops_cpu_fast_rows(const rowops_call *call, int64_t row_begin,
                          int64_t row_end, const rowops_fast_row_fns *fns);

#endif
