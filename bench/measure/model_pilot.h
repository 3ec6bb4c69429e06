/* The model stacks' pilot: before a run commits to its model points, what
 * one call of a group's stack as shipped takes at its fewest and at its
 * most tokens, and what a compiled model path's compile takes, for the
 * time budget's plan and the ETA (budget.h). It runs the run's own model
 * paths through the path interface, so the stacks and compiled graphs it
 * makes are those the points then reuse. */
#ifndef OPCOST_MODEL_PILOT_H
#define OPCOST_MODEL_PILOT_H

#include "plan.h"
#include "workload.h"

#include <stddef.h>

typedef struct opcost_model_pilot {
    int available;           /* 0: the stack cannot run here (why) */
    double a_s, per_token_s; /* a call: a_s + per_token_s * tokens */
    double compile_s;        /* a compiled path's compile; NAN: none */
    double seconds;          /* what the pilot itself took */
    char why[320];
} opcost_model_pilot;

/* Pilots the stack of the plan's model paths at points lo and hi (the
 * group's fewest and most tokens; the same point twice is one) and a
 * compile at point main (the group's of most weight, whose point then
 * reuses the graph), in the narrower configuration where narrow (no
 * compile: its graphs are the same code). Never fails: out says what it
 * could not measure. */
void opcost_model_pilot_run(const opcost_plan *plan, const opcost_case *lo,
                            const opcost_case *hi, const opcost_case *main,
                            int narrow, size_t rotate_bytes,
                            opcost_model_pilot *out);

#endif
