/* The run's time budget (opcost run --time-budget SECONDS) and its ETA.
 *
 * Before every point the plan is made again from what the points so far
 * cost on this host: what this point may spend, and what gives way when
 * the rest would not fit. What informs least gives way first: a model
 * point whose ratio could not reach a verdict in the time left (its
 * stack is timed at a narrower real configuration where that one can,
 * else its model rows are cut), then the replicate pass, then the full
 * bandwidth hold, then rounds beyond a point's floor, and last whole
 * points, those of least weight per second first. A cut is a row with
 * status skipped and a note that starts with "budget:", never a missing
 * row, and the console's summary counts them. Without a budget (0)
 * nothing is cut and the estimates only make the ETA.
 *
 * The estimates: a point's setup (prepare, verify, calibrate, warm up)
 * and its attribution pass per member, from a fixed part, the input sets
 * it rotates over and the bytes of a call (in seconds of streaming them
 * at the run's DRAM ceiling), fitted to the points so far (ridge
 * regression towards priors); its rounds, the larger of their budget and
 * what its slowest members need for the rounds a ratio rests on; a
 * compile where the point is the first of its class; the model stack's
 * calls from a pilot that timed the stack as shipped before the run
 * committed to it. Torch-free: tests/c/test_budget.c drives it with
 * synthetic plans. */
#ifndef OPCOST_BUDGET_H
#define OPCOST_BUDGET_H

#include <stddef.h>

/* A point as the plan sees it before it is measured. */
typedef struct opcost_budget_point {
    int members;      /* the op's members of its rounds (not the models') */
    double stream_ms; /* one call's bytes streamed at the DRAM ceiling */
    double nsets;     /* input sets its calls rotate over */
    int contiguous;   /* the layout needs no conversion */
    /* its class of compiled graphs: the first point of a class compiles
     * (-1: none) */
    int compile_class;
    double rounds_s;    /* its rounds' budget at scale 1 (the op's members) */
    double value;       /* its weight in its group: freq over the group's sum */
    int dram_streaming; /* the full-bandwidth hold may apply */
    /* its model rows (model_members 0: none): the group (distribution,
     * dtype) whose stacks share a configuration and a pilot, the class of
     * their compiled graphs (group, B == 1), the tokens of a call, its
     * weight among the group's model points */
    int model_members, model_compiled;
    int model_group, model_class;
    double tokens, model_value;
} opcost_budget_point;

/* What a point cost, in seconds of wall time by phase (point.c measures
 * it). */
typedef struct opcost_point_cost {
    double total_s;
    double setup_s;   /* workload, prepare, verify, calibrate, warm up */
    double compile_s; /* of setup_s: compiles and builds (compile_ms) */
    double rounds_s;
    double held_s;  /* of rounds_s: held for the host's full bandwidth */
    double after_s; /* attribution, evidence, release */
    /* of each phase, the model paths' part: their setup and evidence,
     * their samples in the rounds */
    double model_setup_s, model_compile_s, model_rounds_s, model_after_s;
    /* the model pairs' per-round log-ratio spread (NAN: none) */
    double model_sigma;
} opcost_point_cost;

typedef enum opcost_model_choice {
    OPCOST_MODEL_OWN = 0, /* the set's own model */
    OPCOST_MODEL_NARROW,  /* the narrower real configuration */
    OPCOST_MODEL_CUT,     /* no model rows here: budget */
} opcost_model_choice;

/* The plan for one point. */
typedef struct opcost_point_plan {
    int cut; /* not measured: every row skipped, why */
    opcost_model_choice model;
    double rounds_scale; /* of its rounds' budget */
    /* seconds its model members' rounds are planned to take (0: the
     * run's --model-budget-s, as without a budget) */
    double model_rounds_s;
    /* seconds it may hold its rounds for the host's full bandwidth (of
     * what is left of --full-bandwidth-wait-s) */
    double hold_s;
    char why[320]; /* of a cut: the point's or its model rows' */
} opcost_point_plan;

/* The parts of a run that gives way, and what each part cost. */
typedef struct opcost_budget_summary {
    double budget_s; /* 0: none */
    size_t points, cut_points;
    size_t model_points, model_cut, model_narrow; /* points with models */
    size_t replicates_wanted, replicates_run;
    size_t scaled_points; /* rounds below their budget */
    double min_scale;
    int hold_cut; /* the full-bandwidth hold was given up at some point */
    /* seconds: before the first point, the model pilots, the op's and the
     * models' parts of the points, the replicates, after them */
    double start_s, pilot_s, end_s, replicates_s;
    opcost_point_cost op, model;
    /* the longest point: what a run can overrun its budget by, at most
     * (the plan cannot split a point) */
    double longest_s;
} opcost_budget_summary;

typedef struct opcost_budget opcost_budget;

/* The planning rule's settings: the run's --time-budget (0: none), the
 * verdicts' threshold, the full run's --model-budget-s and
 * --full-bandwidth-wait-s, how a point's rounds budget scales at least
 * and at most, and the rounds a pair needs at least. */
typedef struct opcost_budget_rule {
    double budget_s;
    double threshold;
    double model_budget_s;
    double hold_s;
    double min_scale, max_scale;
    size_t paired_min;
} opcost_budget_rule;

/* A plan over points p[0..n-1] (copied); start_s: what the run spent
 * before its first point (host, ceilings), also what its end will spend
 * probing again. NULL when memory ran out. */
opcost_budget *opcost_budget_new(const opcost_budget_rule *rule,
                                 const opcost_budget_point *p, size_t n,
                                 double start_s);
void opcost_budget_free(opcost_budget *b);

/* What a pilot measured of a model group's stack (narrow: the narrower
 * configuration's): a call takes a_s + per_token_s * tokens, a compiled
 * path's compile compile_s a class (NAN: not measured); available 0: the
 * configuration cannot run there (why). pilot_s: what the pilot cost. */
void opcost_budget_model_cost(opcost_budget *b, int group, int narrow,
                              int available, double a_s, double per_token_s,
                              double compile_s, double pilot_s,
                              const char *why);

/* Whether the plan needs a pilot of group's narrower configuration (the
 * own one cannot reach a verdict at the group's points in their share). */
int opcost_budget_wants_narrow(const opcost_budget *b, int group);

/* The plan for point i at elapsed_s seconds into the run (made again
 * from everything measured so far). */
void opcost_budget_plan_point(opcost_budget *b, size_t i, double elapsed_s,
                              opcost_point_plan *plan);

/* Point i ended, costing c (its plan as given). */
void opcost_budget_point_done(opcost_budget *b, size_t i,
                              const opcost_point_cost *c);

/* Seconds the run has left at elapsed_s, its points after the last one
 * done, the replicates and the end included. */
double opcost_budget_left_s(opcost_budget *b, double elapsed_s);

/* How many of `wanted` replicate points fit at elapsed_s. */
size_t opcost_budget_replicates(opcost_budget *b, size_t wanted,
                                double elapsed_s);

/* The replicates took seconds; the run ended at elapsed_s. */
void opcost_budget_finish(opcost_budget *b, double replicates_s,
                          double elapsed_s);

/* Whether point i was cut (its rows skipped). */
int opcost_budget_is_cut(const opcost_budget *b, size_t i);

void opcost_budget_summarize(const opcost_budget *b, opcost_budget_summary *s);

#endif
