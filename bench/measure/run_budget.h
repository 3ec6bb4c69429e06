/* One run's time budget: its points as the plan (budget.h) sees them,
 * made from the run's cases and settings, and its model groups (a shape
 * set's points of one dtype with model rows: one stack, one pilot). */
#ifndef OPCOST_RUN_BUDGET_H
#define OPCOST_RUN_BUDGET_H

#include "budget.h"
#include "model_pilot.h"
#include "plan.h"
#include "workload.h"

#include <stddef.h>

typedef struct opcost_run_budget {
    opcost_budget *b;
    opcost_budget_point *points;
    size_t n;
    int ngroups;
    /* per group: its cases of the fewest and the most tokens, and of the
     * most weight (whose graphs the pilot compiles) */
    size_t (*group_span)[3];
} opcost_run_budget;

/* The budget of a run over cases[0..n-1]: dram_gbps is the run's DRAM
 * ceiling (what a call's bytes are streamed at), llc_bytes what cold
 * rotations span, start_s what the run spent before its first point,
 * sides the builds whose members a round holds (opcost ab: 2). 0, or -1
 * when memory ran out. */
int opcost_run_budget_open(opcost_run_budget *rb, const opcost_plan *run_plan,
                           const opcost_case *cases, size_t n, double dram_gbps,
                           size_t llc_bytes, int cuda, double start_s,
                           int sides);
void opcost_run_budget_close(opcost_run_budget *rb);

/* Pilots group g's stack (narrow: the narrower configuration) and gives
 * the plan what it measured; out says it (for the console). */
void opcost_run_budget_pilot(opcost_run_budget *rb, const opcost_plan *run_plan,
                             const opcost_case *cases, size_t rotate_bytes,
                             int g, int narrow, opcost_model_pilot *out);

#endif
