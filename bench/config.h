/* `opcost run` options: parsed once (getopt_long), validated with errors
 * that name the option and the rule, read-only afterwards. */
#ifndef OPCOST_CONFIG_H
#define OPCOST_CONFIG_H

#include "path.h"
#include "variants.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OPCOST_MAX_SHAPE_SETS 32
#define OPCOST_MAX_SELECTED 16

typedef struct opcost_config {
    const char *shapes[OPCOST_MAX_SHAPE_SETS]; /* names or files */
    int nshapes;
    const opcost_path *paths[OPCOST_MAX_SELECTED];
    int npaths;
    const opcost_variant *variants[OPCOST_MAX_SELECTED];
    int nvariants;
    unsigned dtype_mask; /* 1 << rowops_dtype; 0 = every dtype */
    int cuda;            /* --device cuda */
    int threads;
    const char *out;        /* NULL: results/<run_id>.csv */
    const char *shapes_dir; /* where shape-set names resolve */
    const char *results_dir;
    int quick;
    uint64_t seed;
    int reps;
    double rep_budget_s;
    double noise_target;
    double target_sample_us; /* calls are batched up to this per sample */
    int cold;                /* rotate inputs beyond the LLC */
} opcost_config;

/* Defaults, then argv (argv[0] is "run"). Returns 0; 1 after --help (text
 * printed); -1 with the error in err. */
int opcost_config_parse(opcost_config *cfg, int argc, char **argv, char *err,
                        size_t errlen);

void opcost_config_usage(FILE *out);

#endif
