#include "timing.h"
#include "batch.h"
#include "nvtx_ranges.h"
#include "rowops_bridge.h"
#include "timer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Waits for the GPU's work (on the CPU: nothing to wait for). */
static int finish(opcost_timer_state *t)
{
    return t->run->w->cuda ? rowops_bridge_cuda_sync(t->error, sizeof t->error)
                           : 0;
}

static int call_once(opcost_timer_state *t)
{
    opcost_path_run *r = t->run;
    const int set = t->next_set;
    t->next_set = (t->next_set + 1) % r->w->nsets;
    const int rc = t->what == OPCOST_TIME_RUN
                       ? r->path->run(r, set, t->error, sizeof t->error)
                       : r->path->convert(r, set, t->error, sizeof t->error);
    return rc < 0 ? -1 : 0;
}

/* Calls of the pipelined calibration batch on a GPU. */
#define OPCOST_CALIBRATION_PIPELINED 16

int opcost_timing_begin(opcost_timer_state *t, opcost_path_run *run,
                        opcost_timed what, double target_sample_us,
                        double warmup_s, double first_call_us)
{
    memset(t, 0, sizeof *t);
    t->run = run;
    t->what = what;
    t->lead_in = -1;
    t->next_set = run->w->nsets > 0 ? run->first_set % run->w->nsets : 0;
    /* calibrate on up to three calls (the first is often slower), fewer
     * when one call already lasts a millisecond: the path ran once before
     * (verification), and slow calls need no batching; but at least one,
     * since the verification call may have compiled the path (seconds,
     * where its calls take microseconds) */
    double best = first_call_us > 0 ? first_call_us : INFINITY;
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "calibrate");
    for (int i = 0; i < 3 && (i == 0 || !(best >= 1000.0)); ++i) {
        const int64_t t0 = opcost_now_ns();
        if (call_once(t) || finish(t)) {
            opcost_nvtx_pop(OPCOST_NVTX_PHASE);
            return -1;
        }
        const double us = (double)(opcost_now_ns() - t0) / 1e3;
        best = us < best ? us : best;
    }
    /* on a GPU one call with its wait is mostly the stream's fill: the
     * call's own cost is the slope to a pipelined batch (batch.h) */
    double pipelined = 0;
    if (run->w->cuda && best < target_sample_us)
        for (int k = 0; k < 2; ++k) {
            const int64_t t0 = opcost_now_ns();
            for (int i = 0; i < OPCOST_CALIBRATION_PIPELINED; ++i)
                if (call_once(t)) {
                    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
                    return -1;
                }
            if (finish(t)) {
                opcost_nvtx_pop(OPCOST_NVTX_PHASE);
                return -1;
            }
            const double us = (double)(opcost_now_ns() - t0) / 1e3;
            pipelined = k == 0 || us < pipelined ? us : pipelined;
        }
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    if (best >= 1000.0)
        warmup_s = 0; /* verification and calibration warmed it up */
    t->call_us = opcost_batch_call_us(
        best, pipelined, pipelined > 0 ? OPCOST_CALIBRATION_PIPELINED : 0);
    t->batch = opcost_batch_calls(target_sample_us, t->call_us);
    const int64_t start = opcost_now_ns();
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "warm-up");
    /* ... and two calls on every input set, so each set's outputs exist
     * (pages mapped, the allocator's cache holding a set's worth of freed
     * blocks: a call makes its outputs before the set's previous ones are
     * freed) before the first timed call, not during the first repetition
     * (measured: first repetitions 2-3x slower without); for at most
     * OPCOST_WARMUP_PASS_MAX_S (tiny shapes rotate up to 65536 sets,
     * whose outputs are small and cheap to make). A model path's call
     * makes the same activations whichever set it reads (a few KiB of
     * tokens against 0.9 GB of weights): two calls warm it, where the
     * pass would spend its 0.5 s (measured: 4 s a point of seven) */
    const int pass_calls = run->path->model ? 2 : 2 * run->w->nsets;
    for (int calls = 0; opcost_seconds_since(start) < warmup_s ||
                        (calls < pass_calls && opcost_seconds_since(start) <
                                                   OPCOST_WARMUP_PASS_MAX_S);
         ++calls)
        if (call_once(t)) {
            opcost_nvtx_pop(OPCOST_NVTX_PHASE);
            return -1;
        }
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    return finish(t);
}

/* One batch of calls: *us per call end to end, *device_us the device's
 * time per call (NAN on the CPU). */
static int batch(opcost_timer_state *t, double *us, double *device_us)
{
    const int gpu = t->run->w->cuda;
    const int64_t t0 = opcost_now_ns();
    if (gpu && rowops_bridge_cuda_timer_start(t->error, sizeof t->error))
        return -1;
    for (int i = 0; i < t->batch; ++i)
        if (call_once(t))
            return -1;
    double device_ms = NAN;
    /* waits for the batch's last work: the clock then reads end to end */
    if (gpu &&
        rowops_bridge_cuda_timer_stop(&device_ms, t->error, sizeof t->error))
        return -1;
    const int64_t t1 = opcost_now_ns();
    *device_us = device_ms * 1e3 / t->batch;
    *us = (double)(t1 - t0) / 1e3 / t->batch;
    return 0;
}

int opcost_timing_sample(opcost_timer_state *t, double *us, double *device_us)
{
    /* the members of a round run in turn, so the path's code, its
     * allocator's blocks and the framework's caches were just another
     * member's: one call untimed first (on the next set, as a repetition's
     * previous sample would have been) makes the batch a warm one; a call
     * of a millisecond or more does not notice (and would double the time
     * of the slowest members) */
    const int lead_in =
        t->lead_in >= 0 ? t->lead_in : t->call_us < OPCOST_LEAD_IN_BELOW_US;
    opcost_workload_flush(t->run->w, t->next_set, t->batch + lead_in);
    if (lead_in && (call_once(t) || finish(t)))
        return -1;
    return batch(t, us, device_us);
}

static long repetition(opcost_timer_state *t, opcost_stop_rule *rule)
{
    opcost_stop_reset(rule);
    const int gpu = t->run->w->cuda;
    const size_t first = t->n;
    const int64_t start = opcost_now_ns();
    for (;;) {
        if (t->n == t->cap) {
            const size_t cap = t->cap ? 2 * t->cap : 256;
            double *s = realloc(t->samples, cap * sizeof *s);
            if (s)
                t->samples = s;
            double *d =
                s && gpu ? realloc(t->device_samples, cap * sizeof *d) : NULL;
            if (d)
                t->device_samples = d;
            if (!s || (gpu && !d)) {
                snprintf(t->error, sizeof t->error, "out of memory (samples)");
                return -1;
            }
            t->cap = cap;
        }
        double us, device_us;
        if (batch(t, &us, &device_us))
            return -1;
        if (gpu)
            t->device_samples[t->n] = device_us;
        t->samples[t->n++] = us;
        const int stop =
            opcost_stop_check(rule, t->samples + first, t->n - first,
                              opcost_seconds_since(start));
        if (stop < 0) {
            snprintf(t->error, sizeof t->error, "stopping rule failed");
            return -1;
        }
        if (stop)
            return (long)(t->n - first);
    }
}

long opcost_timing_repetition(opcost_timer_state *t, opcost_stop_rule *rule)
{
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "repetition");
    const long n = repetition(t, rule);
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    return n;
}

void opcost_timing_end(opcost_timer_state *t)
{
    free(t->samples);
    free(t->device_samples);
    t->samples = t->device_samples = NULL;
    t->n = t->cap = 0;
}
