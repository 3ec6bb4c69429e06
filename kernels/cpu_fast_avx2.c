/* The fast CPU kernel (AVX2 + FMA + F16C), for calls the eligibility
 * function admits: float32/float16/bfloat16, unit last-dimension stride,
 * 32-byte aligned rows, 1 <= N <= the one-pass limit.
 *
 * One pass over memory per row: pass 1 reads x (and residual), forms h,
 * stores it (fused op) and accumulates h^2 in float32 over 8-wide vectors
 * with two accumulators; pass 2 reads the row back from L1/L2 (the one-pass
 * limit keeps it there) and writes out. float16/bfloat16 are converted in
 * registers. This file alone is compiled with -mavx2 -mfma -mf16c; it is
 * only called when rowops_cpu_features() reports all three. */
#include "cpu_fast_rows.h"
#include "rowops.h"
#include "rowops_elem.h"

#include <immintrin.h>
#include <math.h>

/* ---- 8 elements of each storage type <-> 8 floats ---------------------- */

static inline __m256 load8_f32(const void *p)
{
    return _mm256_loadu_ps((const float *)p);
}
static inline void store8_f32(void *p, __m256 v)
{
    _mm256_storeu_ps((float *)p, v);
}

static inline __m256 load8_f16(const void *p)
{
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}
static inline void store8_f16(void *p, __m256 v)
{
    _mm_storeu_si128((__m128i *)p,
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

static inline __m256 load8_bf16(const void *p)
{
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
}
/* Round to nearest even; NaN stays a quiet NaN (as rowops_f32_to_bf16). */
static inline void store8_bf16(void *p, __m256 v)
{
    const __m256i bits = _mm256_castps_si256(v);
    const __m256i lsb =
        _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(bits,
                         _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)),
        16);
    const __m256i quiet =
        _mm256_or_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(0x40));
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(v, v, _CMP_UNORD_Q));
    const __m256i r = _mm256_blendv_epi8(rounded, quiet, nan);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r),
                                            _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128((__m128i *)p, packed);
}

static inline float hsum8(__m256 v)
{
    const __m128 s =
        _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    const __m128 t = _mm_add_ps(s, _mm_movehl_ps(s, s));
    return _mm_cvtss_f32(_mm_add_ss(t, _mm_shuffle_ps(t, t, 1)));
}

/* ---- one row, generated per storage type -------------------------------- */

#define DEFINE_FAST_ROW(SUF, T, LOAD8, STORE8, TO_F, FROM_F)                   \
    static void fast_row_##SUF(const void *vx, const void *vr, const void *w,  \
                               int w_f32, void *vout, void *vh, int64_t n,     \
                               float eps, float *rstd_out)                     \
    {                                                                          \
        const T *x = vx, *r = vr;                                              \
        T *out = vout, *h = vh;                                                \
        __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();         \
        const T *src = h ? h : x;                                              \
        int64_t i = 0;                                                         \
        if (h) {                                                               \
            for (; i + 16 <= n; i += 16) {                                     \
                STORE8(h + i, _mm256_add_ps(LOAD8(x + i), LOAD8(r + i)));      \
                STORE8(h + i + 8,                                              \
                       _mm256_add_ps(LOAD8(x + i + 8), LOAD8(r + i + 8)));     \
                const __m256 a = LOAD8(h + i), b = LOAD8(h + i + 8);           \
                acc0 = _mm256_fmadd_ps(a, a, acc0);                            \
                acc1 = _mm256_fmadd_ps(b, b, acc1);                            \
            }                                                                  \
            for (; i + 8 <= n; i += 8) {                                       \
                STORE8(h + i, _mm256_add_ps(LOAD8(x + i), LOAD8(r + i)));      \
                const __m256 a = LOAD8(h + i); /* h as rounded */              \
                acc0 = _mm256_fmadd_ps(a, a, acc0);                            \
            }                                                                  \
        } else {                                                               \
            for (; i + 16 <= n; i += 16) {                                     \
                const __m256 a = LOAD8(x + i), b = LOAD8(x + i + 8);           \
                acc0 = _mm256_fmadd_ps(a, a, acc0);                            \
                acc1 = _mm256_fmadd_ps(b, b, acc1);                            \
            }                                                                  \
            for (; i + 8 <= n; i += 8) {                                       \
                const __m256 a = LOAD8(x + i);                                 \
                acc0 = _mm256_fmadd_ps(a, a, acc0);                            \
            }                                                                  \
        }                                                                      \
        float tail = 0.f;                                                      \
        for (; i < n; ++i) {                                                   \
            if (h)                                                             \
                h[i] = FROM_F(TO_F(x[i]) + TO_F(r[i]));                        \
            const float v = TO_F(src[i]);                                      \
            tail += v * v;                                                     \
        }                                                                      \
        const float sum = hsum8(_mm256_add_ps(acc0, acc1)) + tail;             \
        const float rstd = 1.0f / sqrtf(sum / (float)n + eps);                 \
        const __m256 rv = _mm256_set1_ps(rstd);                                \
        for (i = 0; i + 8 <= n; i += 8) {                                      \
            __m256 y = _mm256_mul_ps(LOAD8(src + i), rv);                      \
            if (w)                                                             \
                y = _mm256_mul_ps(y, w_f32 ? load8_f32((const float *)w + i)   \
                                           : LOAD8((const T *)w + i));         \
            STORE8(out + i, y);                                                \
        }                                                                      \
        for (; i < n; ++i) {                                                   \
            float y = TO_F(src[i]) * rstd;                                     \
            if (w)                                                             \
                y *= w_f32 ? ((const float *)w)[i] : TO_F(((const T *)w)[i]);  \
            out[i] = FROM_F(y);                                                \
        }                                                                      \
        *rstd_out = rstd;                                                      \
    }

static inline float f32_id(float v)
{
    return v;
}

DEFINE_FAST_ROW(f32, float, load8_f32, store8_f32, f32_id, f32_id)
DEFINE_FAST_ROW(f16, uint16_t, load8_f16, store8_f16, rowops_f16_to_f32,
                rowops_f32_to_f16)
DEFINE_FAST_ROW(bf16, uint16_t, load8_bf16, store8_bf16, rowops_bf16_to_f32,
                rowops_f32_to_bf16)

void rowops_cpu_fast_avx2(const rowops_call *c, int64_t row_begin,
                          int64_t row_end)
{
    static const rowops_fast_row_fns fns = {fast_row_f32, fast_row_f16,
                                            fast_row_bf16};
    rowops_cpu_fast_rows(c, row_begin, row_end, &fns);
}
