/* The rows of a point (point_rows.c): what a run's points (point.c) and
 * opcost ab's (bench/ab/ab_coordinator.c) share. */
#ifndef OPCOST_POINT_ROWS_H
#define OPCOST_POINT_ROWS_H

#include "bandwidth_state.h"
#include "paired.h"
#include "plan.h"
#include "rounds.h"
#include "row.h"
#include "run_context.h"
#include "workload.h"

#include <stddef.h>

/* A point's rows: one per (path, variant) of the selection, in its order
 * (a variant of the other device is left out under --variants all). */
#define POINT_ROWS_MAX (OPCOST_MAX_SELECTED * OPCOST_MAX_SELECTED)
typedef struct point_row_id {
    const opcost_path *path;
    const opcost_variant *variant;
} point_row_id;

int point_row_ids(const opcost_plan *run_plan, const opcost_case *c,
                  point_row_id *ids);

/* The one function that builds a row: appended to out, with the identity
 * of the run, the point (w: its workload, NULL where none was made), its
 * path and its variant. NULL: out of memory. */
opcost_result *point_row(run_out *out, const point_context *ctx,
                         const opcost_case *c, const opcost_workload *w,
                         const opcost_path *path,
                         const opcost_variant *variant);

/* The rows of point c, not measured, with status skipped and note. */
int point_skip(const point_context *ctx, const opcost_case *c, const char *note,
               run_out *out);

void point_row_status(opcost_result *row, opcost_status s, const char *note);
/* Appends "; text" to the row's note (or text to an empty one). */
void point_row_note(opcost_result *row, const char *text);
/* The median of x[0..n-1]; NAN for n = 0. */
double point_median(const double *x, size_t n);

/* A timed row's statistics from its member's samples, which go to out:
 * the samples pooled (median and the rest), and cut into run_plan->reps blocks
 * of consecutive rounds (the sidecar's repetitions), whose medians give
 * the interval of another run's median (ci95_reps_rel). -1: out of
 * memory. */
int point_row_samples(const opcost_plan *run_plan, opcost_result *row,
                      const opcost_member *m, run_out *out);

/* A member's name as others are paired with it: path, or path/variant
 * for a variant other than auto. */
void point_member_name(const opcost_path *path, const opcost_variant *variant,
                       char *buf, size_t len);

/* The row's paired ratio m / base (e), its interval, p-value, rounds and
 * verdict (run_plan->threshold), paired_with = base_name. -1 with a note on the
 * row when they shared too few rounds. */
int point_row_ratio(const opcost_plan *run_plan, opcost_result *row,
                    const opcost_member *m, const opcost_member *base,
                    const char *base_name, opcost_paired *e);

/* The same of several processes of a build each: the mean log of m[0..nm-1]
 * over that of base[0..nb-1] (opcost_members_ratio). */
int point_row_ratio_of(const opcost_plan *run_plan, opcost_result *row,
                       const opcost_member *const *m, int nm,
                       const opcost_member *const *base, int nb,
                       const char *base_name, opcost_paired *e);

/* The row's frac_of_peak: its bandwidth over the probe's in the same
 * rounds (the probe moves `moved` bytes a call; the rounds of probe->used,
 * those of one bandwidth state where the point streams from DRAM), with
 * its interval, the probe's GB/s and probe_state. */
void point_row_frac(const opcost_plan *run_plan, opcost_result *row,
                    const opcost_bw_split *probe, const opcost_member *m,
                    int64_t moved);

/* The same with the row's time the mean log of m[0..nm-1]. */
void point_row_frac_of(const opcost_plan *run_plan, opcost_result *row,
                       const opcost_bw_split *probe,
                       const opcost_member *const *m, int nm, int64_t moved);

/* After the run, against its final full-bandwidth reference (the
 * pipeline's full_gbps): a row whose fraction rests on rounds called
 * full, with a probe below OPCOST_FULL_BANDWIDTH of it (a reference
 * learnt after the point), is relabelled reduced. */
void point_row_settle_state(opcost_result *row, double full_gbps);

/* The ceiling a row's traffic is bounded by (in_place: the fused op in
 * place, the fused_in_place mix); sets ceiling_gbps, ceiling_kind,
 * working_set_bytes and frac_of_peak_best. */
void point_set_ceiling(opcost_result *row, const opcost_ceiling *c, int gpu,
                       int in_place);

#endif
