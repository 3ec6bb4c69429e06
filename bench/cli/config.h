/* `opcost run` options: parsed once (getopt_long), validated with errors
 * that name the option and the rule, read-only afterwards. */
#ifndef OPCOST_CONFIG_H
#define OPCOST_CONFIG_H

#include "registry.h"
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
    int cuda;            /* --device cuda (or, not given, a GPU found) */
    int device_given;    /* --device was given */
    int paths_default;   /* no --paths: the run's device picks them */
    int variants_all;    /* --variants all: those of the run's device */
    int threads;
    const char *out;        /* NULL: results/<run_id>.csv */
    const char *shapes_dir; /* where shape-set names resolve */
    const char *results_dir;
    int quick;
    uint64_t seed;
    int reps;
    int replicates; /* points measured again at the end; -1: auto */
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

/* Settles the device (cuda: 1 where a GPU was found and --device was not
 * given) and, without --paths, selects the default paths of that device. */
void opcost_config_set_device(opcost_config *cfg, int cuda);

/* Whether a path or a kernel variant runs on the configured device. */
int opcost_config_path_runs(const opcost_config *cfg, const opcost_path *p);
int opcost_config_variant_runs(const opcost_config *cfg,
                               const opcost_variant *v);

#endif
