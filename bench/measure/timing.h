/* The one timing loop. A path is timed in named phases: calibrate (how
 * many calls make one sample), warm-up, then repetitions; each repetition
 * takes samples until its stopping rule says enough. One sample = the
 * mean time per call over a batch of calls, each on the next input set
 * (rotation), read from the monotonic clock around the batch; on a GPU the
 * stream is synchronized before the clock is read again (end to end), and
 * CUDA events around the batch give the device's time. No profiler is
 * attached while timing. */
#ifndef OPCOST_TIMING_H
#define OPCOST_TIMING_H

#include "path.h"
#include "stop.h"

#include <stddef.h>

/* What is timed: the path's run, or only its conversions. */
typedef enum opcost_timed {
    OPCOST_TIME_RUN = 0,
    OPCOST_TIME_CONVERT
} opcost_timed;

typedef struct opcost_timer_state {
    opcost_path_run *run;
    opcost_timed what;
    int batch;      /* calls per sample */
    int next_set;   /* rotation */
    double call_us; /* calibration: one call */
    /* whether a sample is led in by one untimed call: -1 (opcost_timing_
     * begin's) decides by call_us; 0 or 1 as told (opcost ab: both sides
     * as the base, so a pair's two sides make the same calls) */
    int lead_in;
    double *samples;
    /* on a GPU: the device time per call of each sample (CUDA events
     * around its batch), beside samples; NULL on the CPU */
    double *device_samples;
    size_t n, cap;
    char error[512]; /* set when a call fails */
} opcost_timer_state;

/* The warm-up's passes over the input sets stop after this long. Long
 * enough for a pass to finish where making the outputs faults in fresh
 * memory: in a VM a fresh 2 MiB page the host must back cost about 7 ms
 * (Zen 5 host of 2026-12-03), and a pass cut at 30 ms left the rest of
 * them to the first rounds, 7-15 ms spikes in a third of a framework
 * path's samples there. */
#define OPCOST_WARMUP_PASS_MAX_S 0.5

/* Calibrate and warm up: batch = ceil(target_sample_us / one call), at
 * most 1000, where on a GPU one call's cost is the slope to a pipelined
 * batch (batch.h); warm-up runs for warmup_s and at least two calls per input
 * set (every set's outputs made, and the allocator warm, before timing).
 * first_call_us, the duration of a call just made (verification; 0 if none),
 * counts as a calibration call: from 1 ms on, nothing more is needed. 0, or -1
 * (error set). */
int opcost_timing_begin(opcost_timer_state *t, opcost_path_run *run,
                        opcost_timed what, double target_sample_us,
                        double warmup_s, double first_call_us);

/* One repetition: appends its samples (microseconds per call) to
 * t->samples until rule stops it. Returns the number taken, or -1. */
long opcost_timing_repetition(opcost_timer_state *t, opcost_stop_rule *rule);

/* A sample of calls shorter than this is led in by one untimed call
 * (where lead_in is -1). */
#define OPCOST_LEAD_IN_BELOW_US 1000.0

/* One sample, outside any repetition (a member's sample in a round,
 * bench/measure/rounds.h): *us per call, *device_us the device's time per
 * call (NAN on the CPU). 0, or -1 (error set). */
int opcost_timing_sample(opcost_timer_state *t, double *us, double *device_us);

void opcost_timing_end(opcost_timer_state *t);

#endif
