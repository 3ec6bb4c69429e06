/* One point of a run (a shape, every selected path and variant): its rows,
 * built by one function, and its measurement in named phases (open:
 * workload, rows, prepare and verify each path; time: the shuffled
 * repetitions; summarize; attribute; close). */
#ifndef OPCOST_POINT_H
#define OPCOST_POINT_H

#include "ceiling.h"
#include "config.h"
#include "cupti_tracer.h"
#include "hostinfo.h"
#include "nvml_clock.h"
#include "results_csv.h"
#include "rowops_bridge.h"
#include "workload.h"

#include <stddef.h>

/* The device a run measures on: the CPU, or the GPU it found. */
typedef struct run_device {
    int cuda;
    rowops_bridge_cuda_device gpu;
    size_t rotate_bytes; /* inputs rotate over twice this: LLC, or L2 */
    /* GPU: the attribution pass's tracer (NULL: unavailable, why says
     * why) and the clock reader (NULL: unavailable) */
    opcost_cupti *cupti;
    char cupti_why[256];
    opcost_nvml *nvml;
} run_device;

/* Growable arrays of rows and samples. */
typedef struct run_out {
    opcost_result *rows;
    size_t nrows, caprows;
    opcost_sample *samples;
    size_t nsamples, capsamples;
} run_out;

/* What every point of a run shares. The ceiling may be probed again
 * between points; rows read it when they are summarized. */
typedef struct point_context {
    const opcost_config *cfg;
    const opcost_hostinfo *host;
    const run_device *dev;
    const opcost_ceiling *ceiling;
} point_context;

/* Verifies and times point c on every selected (path, variant), one row
 * each appended to out (samples too); point_seed varies the inputs.
 * 0, or -1 with err when memory ran out (the rows so far stay). */
int point_measure(const point_context *ctx, const opcost_case *c,
                  int64_t point_seed, run_out *out, char *err, size_t len);

/* The rows of point c, not measured, with status skipped and note. */
int point_skip(const point_context *ctx, const opcost_case *c, const char *note,
               run_out *out);

/* The ceiling a row's traffic is bounded by; sets ceiling_gbps,
 * ceiling_kind, working_set_bytes and frac_of_peak. */
void point_set_ceiling(opcost_result *row, const opcost_ceiling *c, int gpu);

#endif
