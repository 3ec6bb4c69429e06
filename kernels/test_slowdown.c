/* The run-time slowdown for opcost ab's checks (test_slowdown.h). */
#define _POSIX_C_SOURCE 200809L
#include "test_slowdown.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

double rowops_test_slowdown(void)
{
    /* read once; a race between threads reads the same value */
    static double fraction = -1;
    if (fraction < 0) {
        const char *v = getenv(ROWOPS_TEST_SLOWDOWN_ENV);
        char *end = NULL;
        const double f = v ? strtod(v, &end) : 0;
        fraction = v && end != v && !*end && f > 0 && f <= 1 ? f : 0;
    }
    return fraction;
}

int64_t rowops_test_slowdown_start(void)
{
    return rowops_test_slowdown() > 0 ? now_ns() : 0;
}

void rowops_test_slowdown_spin(int64_t start)
{
    if (!start)
        return;
    const int64_t t = now_ns();
    const int64_t until =
        t + (int64_t)llround(rowops_test_slowdown() * (double)(t - start));
    while (now_ns() < until)
        ;
}
