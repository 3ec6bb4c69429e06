/* STREAM-style memory-bandwidth ceiling, measured at the start of every
 * benchmark run: copy (c = a) and triad (a = b + s*c), each with ordinary
 * and with non-temporal stores, on T threads over arrays of doubles each at
 * least 4x the last-level cache. GB = 1e9 bytes. */
#ifndef OPCOST_CEILING_H
#define OPCOST_CEILING_H

#include "cpu_cache.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Trials per kernel; as in STREAM the first is not counted, and the figure
 * is the best of the rest. */
#define OPCOST_CEILING_TRIALS 10
#define OPCOST_CEILING_MAX_THREADS 1024
/* Assumed when neither sysfs nor sysconf reports a last-level cache. */
#define OPCOST_LLC_FALLBACK_BYTES ROWOPS_LLC_FALLBACK_BYTES

typedef enum opcost_ceiling_kernel_id {
    OPCOST_CEILING_COPY = 0,
    OPCOST_CEILING_TRIAD,
    OPCOST_CEILING_COPY_NT,
    OPCOST_CEILING_TRIAD_NT,
    OPCOST_CEILING_KERNELS
} opcost_ceiling_kernel_id;

typedef struct opcost_ceiling_kernel {
    const char *name; /* "copy", "triad", "copy_nt", "triad_nt" */
    /* 0 when non-temporal stores are unavailable (not x86 with SSE2): the
     * figures are then NAN. */
    int available;
    /* Bytes the source reads + writes per element: copy 16, triad 24. */
    int bytes_per_element;
    /* Ordinary stores also read each destination line first (write
     * allocate): copy 24, triad 32 per element. 0 for non-temporal. This is
     * a stated model, not a measured count. */
    int wa_bytes_per_element;
    double best_s, avg_s; /* over the counted trials */
    double gbps;          /* bytes_per_element * elements / best_s / 1e9 */
    double wa_gbps;       /* the same with wa_bytes_per_element; NAN for NT */
} opcost_ceiling_kernel;

typedef struct opcost_ceiling {
    int threads;
    size_t llc_bytes;
    char llc_source[192]; /* where llc_bytes came from */
    size_t elements;      /* per array */
    size_t array_bytes;   /* elements * 8 >= 4 * llc_bytes, each array */
    int trials;
    opcost_ceiling_kernel k[OPCOST_CEILING_KERNELS];
    double best_gbps;        /* max gbps over the available kernels */
    const char *best_kernel; /* its name */
    double max_rel_err;      /* final arrays against the STREAM recurrence */
    double seconds;          /* wall time of the whole probe */
} opcost_ceiling;

/* Measures the ceiling with `threads` threads (1..1024), each owning a
 * contiguous slice that it first-touches. llc_bytes_or_0 = 0 detects the
 * last-level cache (opcost_llc_bytes). On the 2-core EPYC VM (32 MiB L3,
 * 128 MiB arrays) it takes about 0.6 s with 1 thread and 0.45 s with 2,
 * about 60% of it the timed kernels, the rest first touch and validation.
 * Returns 0, or -1 with err naming the argument or the failure (allocation,
 * threads, validation). */
int opcost_ceiling_measure(int threads, size_t llc_bytes_or_0,
                           opcost_ceiling *out, char *err, size_t errlen);

/* Last-level cache size: sysfs cpu0's highest-level data or unified cache,
 * else sysconf(_SC_LEVEL3_CACHE_SIZE), else OPCOST_LLC_FALLBACK_BYTES.
 * source (may be NULL) says which, and for the fallback says so. */
size_t opcost_llc_bytes(char *source, size_t len);

/* One kernel over elements [0, n) on the calling thread (any alignment):
 * what the probe times, exposed for tests. Returns -1 if the kernel is
 * unavailable on this build. */
int opcost_ceiling_kernel_run(opcost_ceiling_kernel_id kernel, double *a,
                              const double *b, double *c, size_t n,
                              double scalar);

#ifdef __cplusplus
}
#endif

#endif
