/* The fast CPU kernel (AVX2 + FMA + F16C), for calls the eligibility
 * function admits: float32/float16/bfloat16, unit last-dimension stride,
 * 32-byte aligned rows, 1 <= N <= the one-pass limit.
 *
 * Per row, pass 1 reads x (and residual), forms h, keeps it as float32 in
 * a scratch row (L1) and accumulates h^2 in float32 lanes; pass 2 stores h
 * (fused op) from the scratch row, scales it and stores out. Memory sees each
 * input read once and each output written once. The passes of consecutive
 * rows are software-pipelined: one loop runs pass 2 of row j and pass 1 of
 * row j+1 (two scratch rows), so reads and writes stream together; a
 * read-only phase followed by a write-only phase per row measured 25-35 %
 * below the same traffic interleaved. Rows wider than the scratch row
 * (rare: N > 8192) take the two passes one after the other, pass 2
 * re-reading the row from L2. Two entry points differ
 * only in the stores: rowops_cpu_fast_avx2 uses ordinary stores (outputs
 * stay in cache for the next op), rowops_cpu_fast_avx2_nt streams them
 * past the cache (no read-for-ownership of the destination lines), which
 * the eligibility function picks when the outputs exceed the last-level
 * cache anyway.
 *
 * The block functions (cpu_fast_blocks.h) are written once over the width
 * layer (cpu_vec16.h), here in its 256-bit form. bfloat16 is widened by
 * interleaving with zeros (one shuffle per 8 values), an order the packing
 * back to 16 bits undoes for free; the weight is loaded in the same order.
 * Rounding to bfloat16 skips NaN handling, so a bfloat16 row writes
 * nothing in pass 1 (h waits in the scratch row): a row whose sum of
 * squares is not finite, or every row when the weight holds a NaN or an
 * infinity, is then done by the strided kernel, whose scalar conversions
 * define the NaN results, from inputs still intact even in place. float32
 * arithmetic and the F16C conversions treat NaN exactly as the scalar code
 * does. This file alone is compiled with -mavx2 -mfma -mf16c and only
 * called when rowops_cpu_features() reports all three. */
#define ROWOPS_VEC16_BITS 256
#include "cpu_fast_blocks.h"

#include <immintrin.h>
#include <math.h>

/* The weight's 32-byte blocks all finite (exponent not all ones)? */
static int prefix_finite(const rowops_call *c, int64_t n, int64_t *done)
{
    const int f32 = c->weight.dtype == ROWOPS_F32;
    const __m256i mask = _mm256_set1_epi32(f32 ? 0x7f800000 : 0x7f807f80);
    __m256i bad = _mm256_setzero_si256();
    const int64_t per = f32 ? 8 : 16, blocks = n / per * per;
    const __m256i *p = c->weight.data;
    for (int64_t i = 0; i < blocks; i += per, ++p) {
        const __m256i e = _mm256_and_si256(_mm256_loadu_si256(p), mask);
        /* per 32 bits (f32) or per 16 bits: exponent == all ones */
        bad = _mm256_or_si256(bad, f32 ? _mm256_cmpeq_epi32(e, mask)
                                       : _mm256_cmpeq_epi16(e, mask));
    }
    *done = blocks;
    return _mm256_testz_si256(bad, bad);
}

DEFINE_FAST_ROWS(rowops_cpu_fast_avx2, prefix_finite)
