/* The fast CPU kernel at 512 bits (AVX-512 F + BW, with FMA and F16C),
 * for the calls the eligibility function admits to the fast path on CPUs
 * that have them: the algorithm of cpu_fast_avx2.c (kernels/
 * cpu_fast_pipeline.h: pipelined passes, a float32 scratch row, bfloat16
 * rounded in integer arithmetic and NaN rows redone exactly) over blocks
 * of 32 elements in two 512-bit vectors. It exists because at 256 bits
 * the bfloat16 conversions and rounding cap one core below the memory
 * bandwidth (bandwidth set, 1 thread: 31 of 52 GB/s); at 512 bits half
 * the instructions do the same work.
 *
 * The block functions are cpu_fast_blocks.h's, over the 512-bit form of
 * the width layer (cpu_vec16.h); this file adds the weight check and the
 * entry points. It alone is compiled with -mavx512f -mavx512bw -mfma
 * -mf16c; it runs only where rowops_cpu_features() reports them. */
#define ROWOPS_VEC16_BITS 512
#include "cpu_fast_blocks.h"

#include <immintrin.h>

/* The weight's 64-byte blocks all finite (exponent not all ones)? */
static int prefix_finite(const rowops_call *c, int64_t n, int64_t *done)
{
    const int f32 = c->weight.dtype == ROWOPS_F32;
    const int64_t per = f32 ? 16 : 32, blocks = n / per * per;
    const char *p = c->weight.data;
    __mmask64 bad = 0;
    for (int64_t i = 0; i < blocks; i += per, p += 64) {
        const __m512i v = _mm512_loadu_si512(p);
        if (f32) {
            const __m512i m = _mm512_set1_epi32(0x7f800000);
            bad |= _mm512_cmpeq_epi32_mask(_mm512_and_si512(v, m), m);
        } else {
            const __m512i m = _mm512_set1_epi16(0x7f80);
            bad |= _mm512_cmpeq_epi16_mask(_mm512_and_si512(v, m), m);
        }
    }
    *done = blocks;
    return !bad;
}

DEFINE_FAST_ROWS(rowops_cpu_fast_avx512, prefix_finite)
