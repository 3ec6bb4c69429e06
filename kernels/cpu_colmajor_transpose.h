/* The column-major kernels' 16-bit transpose, written once for both widths:
 * an 8 x 8 block of 16-bit elements in each 128-bit lane, two lanes in
 * cpu_colmajor_avx2.c and four in cpu_colmajor_avx512.c. The including
 * file defines ROWOPS_TRANSPOSE_BITS as 256 or 512 and is compiled for that
 * instruction set; each gets the same instructions its own copy had. */
#ifndef ROWOPS_CPU_COLMAJOR_TRANSPOSE_H
#define ROWOPS_CPU_COLMAJOR_TRANSPOSE_H

#include "cpu_colmajor_rows.h"

#include <immintrin.h>

#if ROWOPS_TRANSPOSE_BITS == 512
typedef __m512i lanes16;
#define LANES16(op) _mm512_##op
#elif ROWOPS_TRANSPOSE_BITS == 256
typedef __m256i lanes16;
#define LANES16(op) _mm256_##op
#else
#error "define ROWOPS_TRANSPOSE_BITS as 256 or 512"
#endif

/* In each 128-bit lane: word w of v[k] is element (w, k) of an 8 x 8
 * block on entry (v[k] is column k, word = row), element (k, w) on return
 * (v[k] is row k). */
ALWAYS_INLINE void transpose8_epi16_lanes(lanes16 v[8])
{
    const lanes16 t0 = LANES16(unpacklo_epi16)(v[0], v[1]);
    const lanes16 t1 = LANES16(unpackhi_epi16)(v[0], v[1]);
    const lanes16 t2 = LANES16(unpacklo_epi16)(v[2], v[3]);
    const lanes16 t3 = LANES16(unpackhi_epi16)(v[2], v[3]);
    const lanes16 t4 = LANES16(unpacklo_epi16)(v[4], v[5]);
    const lanes16 t5 = LANES16(unpackhi_epi16)(v[4], v[5]);
    const lanes16 t6 = LANES16(unpacklo_epi16)(v[6], v[7]);
    const lanes16 t7 = LANES16(unpackhi_epi16)(v[6], v[7]);
    const lanes16 u0 = LANES16(unpacklo_epi32)(t0, t2);
    const lanes16 u1 = LANES16(unpackhi_epi32)(t0, t2);
    const lanes16 u2 = LANES16(unpacklo_epi32)(t1, t3);
    const lanes16 u3 = LANES16(unpackhi_epi32)(t1, t3);
    const lanes16 u4 = LANES16(unpacklo_epi32)(t4, t6);
    const lanes16 u5 = LANES16(unpackhi_epi32)(t4, t6);
    const lanes16 u6 = LANES16(unpacklo_epi32)(t5, t7);
    const lanes16 u7 = LANES16(unpackhi_epi32)(t5, t7);
    v[0] = LANES16(unpacklo_epi64)(u0, u4);
    v[1] = LANES16(unpackhi_epi64)(u0, u4);
    v[2] = LANES16(unpacklo_epi64)(u1, u5);
    v[3] = LANES16(unpackhi_epi64)(u1, u5);
    v[4] = LANES16(unpacklo_epi64)(u2, u6);
    v[5] = LANES16(unpackhi_epi64)(u2, u6);
    v[6] = LANES16(unpacklo_epi64)(u3, u7);
    v[7] = LANES16(unpackhi_epi64)(u3, u7);
}

#undef LANES16

#endif
