/* What a run's points share, beside the rows they build (point_rows.h):
 * the device the run measures on, the growing arrays of its rows and
 * samples, and the context every point reads. A header of their own: the
 * pipeline, the points and opcost ab's verdicts use them without the
 * functions that fill a row. */
#ifndef OPCOST_RUN_CONTEXT_H
#define OPCOST_RUN_CONTEXT_H

#include "budget.h"
#include "ceiling.h"
#include "cupti_tracer.h"
#include "hostinfo.h"
#include "nvml_clock.h"
#include "plan.h"
#include "row.h"
#include "rowops_bridge.h"

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
    /* where the intra-op threads run (affinity.h): "2 threads pinned to
     * CPUs 0,1", or why not */
    char pinning[160];
    /* where this process's code runs (code_pages.h) */
    char code[700];
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
    const opcost_plan *run_plan;
    const opcost_hostinfo *host;
    const run_device *dev;
    const opcost_ceiling *ceiling;
    /* what is left of the run's --full-bandwidth-wait-s (NULL: none) */
    double *wait_left_s;
    /* the run's full DRAM bandwidth so far (bandwidth_state.h): the
     * ceilings' and the classed probes' highest window medians (NULL or
     * 0: none) */
    const double *full_gbps;
    /* the time budget's plan for this point (budget.h); NULL: none */
    const opcost_point_plan *plan;
} point_context;

#endif
