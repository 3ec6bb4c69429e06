/* `opcost ab`: two builds compared in lockstep rounds. Each side is its
 * own build's opcost, started as workers (bench/ab/ab_worker.h), two
 * processes a side by default (opcost_ab_ctx says why);
 * this process, the coordinator, makes every point's input sets once in
 * shared memory, has both sides prepare, verify (against the C double
 * reference), calibrate and warm up every selected path and variant on
 * them, then runs rounds (bench/measure/rounds.h) in which every member of
 * both sides, and the bandwidth probe run here, takes one sample in a
 * shuffled order, one at a time: the sides never run at once and always
 * on the same physical pages. Both sides of a pair take the same number of
 * calls per sample (the base's calibration). Each new row's ratio is
 * against its base twin; after the last point the verdicts are corrected
 * for the number of pairs (false discovery rate, Benjamini-Hochberg). */
#ifndef OPCOST_AB_H
#define OPCOST_AB_H

#include "ab_contrast.h"
#include "pipeline.h"
#include "plan.h"

#include <sys/types.h>

/* A worker: one process of a side. */
typedef struct opcost_ab_side {
    const char *name;   /* "base" or "new" */
    const char *opcost; /* the build's opcost executable */
    char places[4096];  /* OMP_PLACES of its threads; "": not pinned */
    /* set by opcost_ab_start */
    pid_t pid;
    int sock;
    int alive;
    int protocol; /* the newest its worker speaks (hello's reply) */
    char git_sha[64], torch_version[64];
} opcost_ab_side;

/* An A/B run: its workers, each side `processes` of them (4 by default
 * in opcost ab: a process's own placement in memory moves its speed by a
 * few per cent for its whole life, so a side of one process could not
 * tell that from a change; with several, both sides' means average it and
 * the processes' contrasts, new's less base's of the same index, measure
 * it: opcost_members_cross_contrasts, opcost_paired_excess_spread). ctx
 * is owned by the caller and must outlive the run. */
typedef struct opcost_ab_ctx {
    /* workers[2 p] is process p of base, workers[2 p + 1] of new; set
     * name and opcost of each before opcost_ab_start */
    opcost_ab_side workers[2 * OPCOST_AB_MAX_PROCESSES];
    int processes;           /* a side: 1 .. OPCOST_AB_MAX_PROCESSES */
    double threshold, alpha; /* the verdicts' band and significance */
    int failed;              /* a side went away: the comparison is not whole */
    char why[512];
    /* set during the run */
    opcost_ab_contrast *contrasts;
    size_t ncontrasts, capcontrasts;
} opcost_ab_ctx;

/* Sets ctx's workers from the two builds' executables (processes a side)
 * with the threshold and alpha; no worker started. */
void opcost_ab_init(opcost_ab_ctx *ctx, const char *base_exe,
                    const char *new_exe, int processes, double threshold,
                    double alpha);

/* Starts every worker, the sides alternating, and greets them (same
 * protocol, the plan's threads set). 0, or -1 with err (a side that cannot
 * start, speaks another protocol or refuses the settings). */
int opcost_ab_start(const opcost_plan *plan, opcost_ab_ctx *ctx, char *err,
                    size_t len);

/* Stops every worker (quit, then waits for it) and frees what the run
 * kept. */
void opcost_ab_stop(opcost_ab_ctx *ctx);

/* The measurer of opcost_pipeline_run for an A/B run (alpha: the
 * significance of the verdicts, adjusted for the false discovery rate). */
opcost_point_measurer opcost_ab_measurer(opcost_ab_ctx *ctx);

#endif
