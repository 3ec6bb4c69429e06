/* The run-time slowdown of the fast CPU kernels (kernels/test_slowdown.h),
 * opcost ab's stand-in for a slower build with the same code: its
 * fraction read from the environment once (only a number in (0, 1] is
 * one), and a spin that lasts at least that fraction of the time before
 * it, a lower bound the clock keeps whatever the host does. */
#define _POSIX_C_SOURCE 200809L
#include "test_slowdown.h"
#include "c_samples.h"

#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int main(int argc, char **argv)
{
    /* argv[1]: the value the test sets, argv[2]: the fraction it means */
    const double want = argc > 2 ? atof(argv[2]) : 0;
    if (argc > 1)
        setenv(ROWOPS_TEST_SLOWDOWN_ENV, argv[1], 1);
    else
        unsetenv(ROWOPS_TEST_SLOWDOWN_ENV);
    C_EXPECT(rowops_test_slowdown() == want, "'%s' means %g, got %g",
             argc > 1 ? argv[1] : "(unset)", want, rowops_test_slowdown());
    const int64_t start = rowops_test_slowdown_start();
    C_EXPECT((start != 0) == (want > 0), "a clock read only when asked");
    volatile double sink = 0;
    for (int i = 0; i < 2000000; ++i)
        sink += i * 1e-9;
    const int64_t worked = now_ns();
    rowops_test_slowdown_spin(start);
    const int64_t spun = now_ns();
    if (want > 0)
        C_EXPECT((double)(spun - worked) >= want * (double)(worked - start),
                 "spun %lld ns after %lld ns of work: at least %g of it",
                 (long long)(spun - worked), (long long)(worked - start), want);
    return c_report("test_slowdown");
}
