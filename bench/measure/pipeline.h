/* The run pipeline: a plan's points measured one after another on a
 * settled device, in named phases (open: host, points, destination,
 * ceilings, journal; measure every point; settle: the run-to-run noise
 * and the ceilings of every row; write the results and their samples,
 * never lost). What it has to say goes to the caller's hooks: the command
 * line prints (bench/cli/console.c), the engine measures. */
#ifndef OPCOST_PIPELINE_H
#define OPCOST_PIPELINE_H

#include "budget.h"
#include "ceiling.h"
#include "hostinfo.h"
#include "plan.h"
#include "point.h"
#include "row.h"

#include <stddef.h>

/* What the run settled after its points: the paired probes' range over the
 * run (the DRAM fused medians of its cold fused points: the host's drift),
 * the ceilings, and the run-to-run noise from the points measured again. */
typedef struct opcost_run_settled {
    int cpu_ceilings; /* the CPU ceilings were probed (not on a GPU) */
    int probes;       /* cold fused points with a paired probe */
    double probe_lo_gbps, probe_hi_gbps;
    const opcost_ceiling *ceiling; /* the best of all probes */
    size_t noise_points;           /* 0: none measured again */
    size_t noise_pairs;
    double noise; /* run_noise_rel; NAN: not known */
    /* rows with a probe_state, those not at full bandwidth, and the
     * seconds points were held for full bandwidth */
    size_t classed_rows, reduced_rows;
    double waited_s;
    /* the full DRAM bandwidth they were classed against, and what earlier
     * runs on this machine remembered (host_bandwidth.h; 0: none) */
    double full_gbps, recalled_gbps;
    /* what each part of the run cost, and what its time budget cut */
    const opcost_budget_summary *budget;
} opcost_run_settled;

/* The caller's side of a run: each hook may be NULL. */
typedef struct opcost_run_hooks {
    void *ctx;
    /* after the ceilings were probed, before the first point */
    void (*started)(void *ctx, const opcost_plan *plan,
                    const opcost_hostinfo *host, const opcost_ceiling *ceiling,
                    const run_device *dev, size_t points, const char *out_path);
    /* after each point: the run's seconds so far and its estimate of
     * those left (budget.h) */
    void (*progress)(void *ctx, size_t done, size_t total, double elapsed_s,
                     double left_s);
    /* one line to say (is_error: a failure, else a notice) */
    void (*message)(void *ctx, int is_error, const char *text);
    void (*settled)(void *ctx, const opcost_run_settled *s);
    /* after the results were written (or not: rc) */
    void (*finished)(void *ctx, const opcost_result *rows, size_t n,
                     const char *out_path, double seconds);
} opcost_run_hooks;

/* Finds the device of a plan settled as asked (opcost_plan_settle):
 * --device cuda needs a usable GPU (-1 with the reason where there is
 * none); without --device a GPU found is used, and the plan settled again
 * for it. Sets dev->cuda. On a GPU, CUPTI and NVML are opened (or said
 * unavailable through hooks). */
int opcost_find_device(opcost_plan *plan, run_device *dev,
                       const opcost_run_hooks *hooks, char *err, size_t len);
void opcost_close_device(run_device *dev);

/* How a point is measured: by default point_measure (this process's
 * paths); opcost ab's points are two builds' (bench/ab/ab_coordinator.h).
 * probe: POINT_PROBES of them, as point_measure fills them. */
typedef struct opcost_point_measurer {
    void *ctx;
    int (*measure)(void *ctx, const point_context *pc, const opcost_case *c,
                   int64_t point_seed, run_out *out, point_probe *probe,
                   opcost_point_cost *cost, char *err, size_t len);
    /* after every point, before the rows are written (NULL: nothing) */
    void (*settle)(void *ctx, run_out *out);
    /* the results file's name without a --out: <results>/<run_id><suffix>
     * .csv */
    const char *suffix;
    /* the builds whose members a round holds (opcost ab: 2) */
    int sides;
} opcost_point_measurer;

/* Every point of the plan on dev; the exit status: 0 when every row was
 * written (rows may be skipped, wrong or error: the CSV says which), 1 on a
 * fatal error or an interrupt, 2 for bad input (a shape set, the
 * destination). measurer NULL: point_measure. */
int opcost_pipeline_run(const opcost_plan *plan, run_device *dev,
                        const opcost_run_hooks *hooks,
                        const opcost_point_measurer *measurer);

#endif
