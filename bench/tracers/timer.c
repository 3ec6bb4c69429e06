#define _POSIX_C_SOURCE 200809L
#include "timer.h"

#include <time.h>

int64_t opcost_now_ns(void)
{
    struct timespec ts;
    /* CLOCK_MONOTONIC cannot fail with a valid pointer on POSIX systems. */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

double opcost_seconds_since(int64_t start_ns)
{
    return (double)(opcost_now_ns() - start_ns) * 1e-9;
}

int64_t opcost_timer_resolution_ns(void)
{
    /* Idempotent: a race between threads writes a similar value. */
    static volatile int64_t cached = 0;
    if (cached != 0)
        return cached;
    /* 20000 reads at ~20 ns each: long enough to see the true minimum,
     * short enough to call at start-up. */
    int64_t best = -1;
    int64_t prev = opcost_now_ns();
    for (int i = 0; i < 20000; ++i) {
        const int64_t t = opcost_now_ns();
        const int64_t d = t - prev;
        if (d > 0 && (best < 0 || d < best))
            best = d;
        prev = t;
    }
    cached = best;
    return best;
}

int64_t opcost_timer_getres_ns(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0)
        return -1;
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}
