/* The column-major ("transposed") CPU kernel: x of shape [B, N] whose rows
 * have unit stride, element (b, j) at x.data + b + j * S with S >= B (e.g.
 * x = t.T for a contiguous [N, B] tensor t). It reads x (and residual)
 * column-major once and writes the row-major outputs once, instead of
 * walking each row with stride S (rowops_cpu_strided).
 *
 * Preconditions (the caller's eligibility check): op either; x, residual,
 * out and residual_out of one dtype, float32/float16/bfloat16; weight
 * float32 or x's dtype with unit stride; x.rank == 2, x.strides[0] == 1,
 * x.strides[1] >= B; residual (fused) with x's sizes and strides; out and
 * residual_out with last-dim stride 1 (any row stride >= N, any alignment);
 * rstd float32; N >= 1; no in-place use (out must not alias x, nor
 * residual_out residual). Compiled with -mavx2 -mfma -mf16c: call it only
 * when rowops_cpu_features() reports ROWOPS_CPU_FAST_FEATURES.
 *
 * Threads may call it on disjoint [row_begin, row_end) ranges of any size;
 * it reads (never writes) input rows just outside its range to fill a
 * vector tile. */
#ifndef ROWOPS_CPU_COLMAJOR_H
#define ROWOPS_CPU_COLMAJOR_H

/* rowops_cpu_colmajor_avx2 is declared with the other kernels in
 * rowops.h; kernels/eligibility.c checks the preconditions above. */
#include "rowops.h"

#endif
