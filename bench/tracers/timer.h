/* Monotonic nanosecond clock for the benchmark, and what it can resolve. */
#ifndef OPCOST_TIMER_H
#define OPCOST_TIMER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CLOCK_MONOTONIC in nanoseconds (arbitrary origin; differences only). */
int64_t opcost_now_ns(void);

/* Seconds elapsed since start_ns, a value of opcost_now_ns(). */
double opcost_seconds_since(int64_t start_ns);

/* Smallest non-zero difference between consecutive opcost_now_ns() reads
 * over many tries: what the clock resolves in practice, including the cost
 * of a read. Measured on the first call (about a millisecond), then cached.
 * Returns -1 if the clock never advanced. */
int64_t opcost_timer_resolution_ns(void);

/* The resolution clock_getres(CLOCK_MONOTONIC) claims, or -1 on failure. */
int64_t opcost_timer_getres_ns(void);

#ifdef __cplusplus
}
#endif

#endif
