/* gcc 12.2 (Debian 12.2.0-14): `gcc -O3 -std=c11 -mavx512f -c
 * gcc_prefetch_drop.c && objdump -d gcc_prefetch_drop.o | grep -c prefetch`
 * prints 0: both hints' prefetches are gone from f. With one hint per
 * function (prefetch_t1 / prefetch_nta in kernels/cpu_fast_pipeline.h)
 * they stay. */
#include <immintrin.h>
#include <stdint.h>
static inline void pa(int nta, const void *x, const void *r, int64_t off)
{
    const char *xp = (const char *)x + off;
    if (nta) {
        if (r) {
            _mm_prefetch(xp + 4096, _MM_HINT_NTA);
            _mm_prefetch((const char *)r + off + 4096, _MM_HINT_NTA);
        } else
            _mm_prefetch(xp + 8192, _MM_HINT_NTA);
    } else if (r) {
        _mm_prefetch(xp + 4096, _MM_HINT_T1);
        _mm_prefetch((const char *)r + off + 4096, _MM_HINT_T1);
    } else
        _mm_prefetch(xp + 8192, _MM_HINT_T1);
}
float f(const float *x, const float *r, int64_t n, int nta)
{
    float s = 0;
    for (int64_t i = 0; i < n; i += 16) {
        pa(nta, x, r, i * 4);
        s += x[i] + r[i];
    }
    return s;
}
