/* What a run measures and how: the shape sets, paths, variants and the
 * measurement's settings. The command line fills in what was asked
 * (bench/cli/config.c parses it); opcost_plan_settle completes it for the
 * run's device (its default paths and variants, its sample length, the
 * baseline); read-only in the engine afterwards. */
#ifndef OPCOST_PLAN_H
#define OPCOST_PLAN_H

#include "path.h"
#include "variant.h"

#include <stddef.h>
#include <stdint.h>

#define OPCOST_MAX_SHAPE_SETS 32
#define OPCOST_MAX_SELECTED 48
#define OPCOST_MODEL_MAX_TOKENS_CPU 64

typedef struct opcost_plan {
    const char *shapes[OPCOST_MAX_SHAPE_SETS]; /* names or files */
    int nshapes;
    /* every path the build has, in listing order (bench/paths' registry,
     * handed in by the command line): the device's default paths are
     * settled from it */
    const opcost_path *const *all_paths;
    size_t nall_paths;
    /* --paths; without it (paths_default) the device's, settled */
    const opcost_path *paths[OPCOST_MAX_SELECTED];
    int npaths;
    /* --variants; without it auto, settled */
    const opcost_variant *variants[OPCOST_MAX_SELECTED];
    int nvariants;
    unsigned dtype_mask; /* 1 << rowops_dtype; 0 = every dtype */
    int cuda;            /* --device cuda (or, not given, a GPU found) */
    int device_given;    /* --device was given */
    int paths_default;   /* no --paths: the run's device picks them */
    int variants_all;    /* --variants all: those of the run's device */
    int threads;
    int no_pin;      /* --no-pin: threads not pinned to CPUs (affinity.h) */
    const char *out; /* NULL: results/<run_id>.csv */
    const char *shapes_dir; /* where shape-set names resolve */
    const char *results_dir;
    int quick;
    uint64_t seed;
    int reps;
    int replicates; /* points measured again at the end; -1: auto */
    double rep_budget_s;
    int rep_budget_given; /* --rep-budget-ms given, in any spelling */
    /* the target of every paired ratio's 95 % interval (relative): a
     * point's rounds stop once all are within it, or at its budget */
    double noise_target;
    /* a paired ratio's verdict: same within 1 +- threshold */
    double threshold;
    /* the member every path's ratio is against: --baseline, else
     * reference where it was selected, else the first selected path and
     * variant (opcost_plan_settle) */
    const char *baseline_name; /* --baseline as given; NULL: the default */
    const opcost_path *baseline_path;
    const opcost_variant *baseline_variant;
    double target_sample_us; /* calls are batched up to this per sample */
    int sample_us_given;     /* --sample-us given; else the device's
                              * default (batch.h), settled */
    int cold;                /* rotate inputs beyond the LLC */
    /* the last-level cache the run assumes (--llc-mib; 0: detected):
     * what a cold rotation and the ceilings' arrays span */
    size_t llc_bytes;
    /* the model paths time points of at most this many tokens (B); the
     * rest are skipped, saying why (--model-max-tokens; 0: every point;
     * -1: the device's default, OPCOST_MODEL_MAX_TOKENS_CPU on the CPU,
     * every point on a GPU) */
    long model_max_tokens;
    /* seconds a point's rounds may spend more when model paths are among
     * its members (--model-budget-s): a model call takes tens of ms */
    double model_budget_s;
    /* seconds a run may spend, over all its points, holding a point's
     * rounds past their budget while the host runs at reduced bandwidth
     * (bandwidth_state.h), so that its frac_of_peak rests on rounds at
     * full bandwidth (--full-bandwidth-wait-s) */
    double full_bandwidth_wait_s;
    /* --model-dtypes all: the model paths at every dtype's points; by
     * default only at the dtype the model is published in (its
     * config.json's torch_dtype, shapes/models/decoders.csv) */
    int model_all_dtypes;
    /* --time-budget: seconds the whole run may take, which its plan keeps
     * to (budget.h: what gives way, the rows it cuts say so); 0: no
     * budget, every point as the settings say */
    double time_budget_s;
} opcost_plan;

/* Settles the plan for the device cuda says (plan->cuda set to it): the
 * sample length unless --sample-us was given; without --paths, the
 * device's default paths; without --variants, auto; the baseline. Settling
 * again for another device redoes all of it. Returns 0; -1 with the rule
 * in err (the baseline then NULL: no pairing) where --baseline names no
 * selected path or variant. */
int opcost_plan_settle(opcost_plan *plan, int cuda, char *err, size_t len);

/* Whether a path or a kernel variant runs on the plan's device. */
int opcost_plan_path_runs(const opcost_plan *plan, const opcost_path *p);
int opcost_plan_variant_runs(const opcost_plan *plan, const opcost_variant *v);

#endif
