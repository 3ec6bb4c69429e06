/* STREAM-style memory-bandwidth ceilings, measured at the start of every
 * benchmark run on T threads, GB = 1e9 bytes:
 *   - DRAM, arrays of doubles each at least 4x the last-level cache: copy
 *     (c = a) and triad (a = b + s*c), STREAM's, and the two op mixes: the
 *     rows mix (1 read + 1 write: copy) and the fused mix (2 reads + 2
 *     writes: add2, c = a + b, d = s*(a + b)), each with ordinary and with
 *     non-temporal stores;
 *   - the cache levels a warm point's working set can fall into (the L2s
 *     of the T cores, the last-level cache): the same mixes with ordinary
 *     stores on a working set of half the level, repeated so one trial
 *     lasts about a millisecond.
 * A row's fraction of peak divides by the ceiling of its op's mix at the
 * level its working set falls into (opcost_ceiling_for): a bound on what
 * that traffic can reach on this machine. */
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
    OPCOST_CEILING_ADD2,    /* c = a + b; d = s*(a + b): 2 reads, 2 writes */
    OPCOST_CEILING_ADD2_NT, /* the same with non-temporal stores */
    /* a = a + 0 b; b = b + 0 a: 2 reads and 2 writes to the lines just
     * read (an in-place op's traffic: no line read for ownership) */
    OPCOST_CEILING_ADD2_IN_PLACE,
    OPCOST_CEILING_KERNELS
} opcost_ceiling_kernel_id;

/* What an op moves per element: rms_norm_rows reads x and writes y;
 * fused_add_rms_norm reads x and residual and writes out and h. */
typedef enum opcost_mix {
    OPCOST_MIX_ROWS = 0, /* 1 read + 1 write */
    OPCOST_MIX_FUSED,    /* 2 reads + 2 writes */
    /* the fused op in place (fused_add_rms_norm_): 2 reads + 2 writes of
     * the same lines, ordinary stores */
    OPCOST_MIX_FUSED_IN_PLACE,
    OPCOST_MIXES
} opcost_mix;

/* Where a working set lives. */
typedef enum opcost_level {
    OPCOST_LEVEL_L2 = 0,
    OPCOST_LEVEL_L3, /* the last-level cache */
    OPCOST_LEVEL_DRAM,
    OPCOST_LEVELS
} opcost_level;

const char *opcost_level_name(opcost_level level); /* "l2", "l3", "dram" */
/* "rows", "fused", "fused_in_place" */
const char *opcost_mix_name(opcost_mix mix);

/* One mix at one level: the best of its store kinds. */
typedef struct opcost_mix_ceiling {
    double gbps;        /* max(plain_gbps, nt_gbps); NAN: not measured */
    double plain_gbps;  /* ordinary stores */
    double nt_gbps;     /* non-temporal stores (DRAM only; NAN elsewhere) */
    size_t working_set; /* bytes the probe's arrays spanned */
} opcost_mix_ceiling;

typedef struct opcost_ceiling_kernel {
    const char *name; /* "copy", "triad", ..., "add2_in_place" */
    /* 0 when non-temporal stores are unavailable (not x86 with SSE2): the
     * figures are then NAN. */
    int available;
    /* Bytes the source reads + writes per element: copy 16, triad 24,
     * add2 32. */
    int bytes_per_element;
    /* Ordinary stores also read each destination line first (write
     * allocate): copy 24, triad 32, add2 48 per element. 0 for
     * non-temporal. This is a stated model, not a measured count. */
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
    /* The op mixes per level, and each level's capacity across the run's
     * threads (L2: one core's L2 times the threads; 0 when unknown: that
     * level is then not measured and working sets skip it). */
    opcost_mix_ceiling mix[OPCOST_LEVELS][OPCOST_MIXES];
    size_t level_bytes[OPCOST_LEVELS];
} opcost_ceiling;

/* Whether the streaming probes prefetch their inputs into L2 (T1, 4 KiB
 * ahead) as the kernels' L2-prefetch forms do: not where the kernels pick
 * their non-temporal-prefetch forms (ROWOPS_CPU_PREFETCH_NTA, AMD family
 * 26), where the plain streams ran fastest without: measured on Zen 5
 * (fused mix, 256 MiB arrays on 2 MiB pages, paired in alternation) the
 * T1 probe took x1.11 the time of the unprefetched one on one thread and
 * x1.06 on two, the NTA one x1.05 and x1.01; the kernels with NTA prefetch
 * read 1.05-1.07 of the T1 probe (docs/history.md). */
int opcost_ceiling_prefetches(void);

/* Merges a second probe of the same machine into c: each kernel's, mix's
 * and the best figure become the better of the two. */
void opcost_ceiling_merge(opcost_ceiling *c, const opcost_ceiling *other);

/* Merges one figure of a mix at a level (a point's paired probe,
 * bench/measure/probe.h) into c: the better of the two for that store
 * kind, and the mix's best. */
void opcost_ceiling_merge_mix(opcost_ceiling *c, opcost_level level,
                              opcost_mix mix, int streaming, double gbps);

/* Whether a run of npoints probes the ceilings again after its done-th
 * point (1-based; the last point is followed by the end's probe anyway):
 * every OPCOST_PROBE_EVERY_MAX points, and in shorter runs every quarter
 * of the run (at least every point), so that a run of a few long
 * DRAM-bound points still samples the host's bandwidth while it runs. */
#define OPCOST_PROBE_EVERY_MAX 8
int opcost_probe_due(size_t done, size_t npoints);

/* The ceiling of a row: its op's mix at the level its working set (the
 * bytes one call touches) falls into, or DRAM when the row is cold (its
 * data is not in any cache when a call starts). *level is set. NULL when
 * that ceiling was not measured. */
const opcost_mix_ceiling *opcost_ceiling_for(const opcost_ceiling *c,
                                             opcost_mix mix, int cold,
                                             double working_set_bytes,
                                             opcost_level *level);

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
 * what the probe times, exposed for tests (d: add2's second output;
 * add2_in_place writes a and b, which the others only read).
 * Returns -1 if the kernel is unavailable on this build. */
int opcost_ceiling_kernel_run(opcost_ceiling_kernel_id kernel, double *a,
                              double *b, double *c, double *d, size_t n,
                              double scalar);

/* The streamed kernels' store width: the widest the CPU has (512, 256,
 * 128 bits), at most bits where bits > 0 (a test reaching the narrower
 * kernels); returns the width now used. */
int opcost_ceiling_force_width(int bits);

#ifdef __cplusplus
}
#endif

#endif
