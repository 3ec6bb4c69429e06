/* One point of a run (a shape, every selected path and variant): its rows,
 * built by one function, and its measurement in named phases (open:
 * workload, rows, prepare and verify each path; time: the shuffled
 * repetitions; summarize; attribute; close). */
#ifndef OPCOST_POINT_H
#define OPCOST_POINT_H

#include "budget.h"
#include "ceiling.h"
#include "plan.h"
#include "point_rows.h"
#include "timing.h"
#include "workload.h"

#include <stddef.h>

/* What a point's paired probe (bench/measure/probe.h) measured: the run
 * keeps the best as its ceiling of that mix at that level (the probe runs
 * during every point, where a ceiling probed at the start and the end
 * alone missed the host's fast moments), and the medians show the host's
 * drift over the run. */
typedef struct point_probe {
    int measured;
    opcost_level level;
    opcost_mix mix;
    int streaming; /* non-temporal stores */
    double bytes;  /* one call's */
    double best_gbps, median_gbps;
    /* a classed probe's highest window median (bandwidth_state.h), what
     * the run's full-bandwidth reference learns from; NAN elsewhere */
    double full_gbps;
} point_probe;

/* The probe paired with a point's rows (probe.h): streaming stores where
 * the run's ceilings found them the better kind at the level the point's
 * data lives in (DRAM when cold), ordinary stores otherwise; info says
 * which. */
const opcost_path *point_probe_choose(const point_context *ctx,
                                      const opcost_workload *w,
                                      point_probe *info);

/* What the point's probe rounds are classed against (bandwidth_state.h):
 * the run's full-bandwidth reference so far (ctx->full_gbps; 0 while
 * none), where the probe streams from DRAM on the CPU and moves at least
 * OPCOST_DRAM_REFERENCE_LLCS times the LLC (and OPCOST_STREAMING_BYTES) a
 * call; NAN elsewhere (not classed: a smaller cold call is partly served
 * by the caches, and its probe at full bandwidth reads 85-110 GB/s where
 * the large ones read 95-117 on Zen 5, too close to the threshold). */
double point_probe_reference(const point_context *ctx, const point_probe *p,
                             double moved);

/* What the probe's member m measured on w, into info. */
void point_probe_measured(point_probe *info, const opcost_member *m,
                          const opcost_workload *w);

/* The probes a point reports (point_measure): the one its rows pair
 * with, and the in-place rows' (measured 0 where it did not run). */
#define POINT_PROBES 2

/* Verifies and times point c on every selected (path, variant), one row
 * each appended to out (samples too); point_seed varies the inputs; probe
 * (may be NULL: else POINT_PROBES of them) gets what the paired probes
 * measured, cost (may be NULL) what the point cost. 0, or -1 with err when
 * memory ran out (the rows so far stay). */
int point_measure(const point_context *ctx, const opcost_case *c,
                  int64_t point_seed, run_out *out, point_probe *probe,
                  opcost_point_cost *cost, char *err, size_t len);

/* A path made ready to time on run->w: prepared, verified on poisoned
 * outputs against the C double reference, calibrated and warmed up
 * (timer). OPCOST_STATUS_OK, or the status it ends in (skipped, wrong,
 * error) with the reason in why; dispatch_path says what it ran. */
opcost_status point_start(const opcost_plan *run_plan, int cuda,
                          opcost_path_run *run, opcost_timer_state *timer,
                          char *dispatch_path, size_t dlen, char *why,
                          size_t wl);

/* The plan's intra-op threads pinned, thread i to the i-th CPU the
 * process may use (affinity.h), unless --no-pin: the same in a run, in
 * opcost ab's coordinator and in both of its workers. The count pinned,
 * 0 (not pinned: desc says why) or -1 (pinning failed: desc says how). */
int point_pin_threads(const opcost_plan *run_plan, char *desc, size_t len);

#endif
