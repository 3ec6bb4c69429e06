/* `opcost ab`: two builds compared in lockstep rounds. Each side is its
 * own build's opcost, started as a worker (bench/measure/ab_worker.h);
 * this process, the coordinator, makes every point's input sets once in
 * shared memory, has both sides prepare, verify (against the C double
 * reference), calibrate and warm up every selected path and variant on
 * them, then runs rounds (bench/measure/rounds.h) in which every member of
 * both sides, and the bandwidth probe run here, takes one sample in a
 * shuffled order, one at a time: the sides never run at once and always
 * on the same physical pages. Both sides of a pair take the same number of
 * calls per sample (the base's calibration). Each new row's ratio is
 * against its base twin; after the last point the verdicts are corrected
 * for the number of pairs (Holm). */
#ifndef OPCOST_AB_H
#define OPCOST_AB_H

#include "pipeline.h"
#include "plan.h"

#include <sys/types.h>

typedef struct opcost_ab_side {
    const char *name;   /* "base" or "new" */
    const char *opcost; /* the build's opcost executable */
    char places[4096];  /* OMP_PLACES of its threads; "": not pinned */
    /* set by opcost_ab_start */
    pid_t pid;
    int sock;
    int alive;
    char git_sha[64], torch_version[64];
} opcost_ab_side;

/* Starts both sides' workers and greets them (same protocol, the plan's
 * threads set). 0, or -1 with err (a side that cannot start, speaks
 * another protocol or refuses the settings). */
int opcost_ab_start(const opcost_plan *plan, opcost_ab_side sides[2], char *err,
                    size_t len);

/* Stops both workers (quit, then waits for them). */
void opcost_ab_stop(opcost_ab_side sides[2]);

/* The measurer of opcost_pipeline_run for an A/B run over sides (alpha:
 * the significance of the Holm-corrected verdicts). ctx is owned by the
 * caller and must outlive the run. */
typedef struct opcost_ab_ctx {
    opcost_ab_side *sides;
    double threshold, alpha; /* the verdicts' band and significance */
    int failed;              /* a side went away: the comparison is not whole */
    char why[512];
} opcost_ab_ctx;

opcost_point_measurer opcost_ab_measurer(opcost_ab_ctx *ctx);

#endif
