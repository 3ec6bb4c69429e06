#define _POSIX_C_SOURCE 200809L
#include "config.h"
#include "cpu_features.h"
#include "shape_file.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

enum {
    OPT_REPS = 256,
    OPT_REP_BUDGET,
    OPT_NOISE,
    OPT_CACHE,
    OPT_SHAPES_DIR,
    OPT_NO_PIN,
    OPT_MODEL_MAX_TOKENS,
    OPT_MODEL_BUDGET,
    OPT_MODEL_DTYPES,
    OPT_FULL_BW_WAIT,
    OPT_SAMPLE_US,
    OPT_REPLICATES,
    OPT_THRESHOLD,
    OPT_BASELINE,
    OPT_LLC_MIB,
    OPT_TIME_BUDGET,
};

static const struct option options[] = {
    {"shapes", required_argument, NULL, 's'},
    {"paths", required_argument, NULL, 'p'},
    {"variants", required_argument, NULL, 'v'},
    {"device", required_argument, NULL, 'd'},
    {"dtype", required_argument, NULL, 't'},
    {"threads", required_argument, NULL, 'j'},
    {"out", required_argument, NULL, 'o'},
    {"quick", no_argument, NULL, 'q'},
    {"seed", required_argument, NULL, 'S'},
    {"reps", required_argument, NULL, OPT_REPS},
    {"replicates", required_argument, NULL, OPT_REPLICATES},
    {"rep-budget-ms", required_argument, NULL, OPT_REP_BUDGET},
    {"noise", required_argument, NULL, OPT_NOISE},
    {"threshold", required_argument, NULL, OPT_THRESHOLD},
    {"baseline", required_argument, NULL, OPT_BASELINE},
    {"llc-mib", required_argument, NULL, OPT_LLC_MIB},
    {"sample-us", required_argument, NULL, OPT_SAMPLE_US},
    {"cache", required_argument, NULL, OPT_CACHE},
    {"shapes-dir", required_argument, NULL, OPT_SHAPES_DIR},
    {"no-pin", no_argument, NULL, OPT_NO_PIN},
    {"model-max-tokens", required_argument, NULL, OPT_MODEL_MAX_TOKENS},
    {"model-budget-s", required_argument, NULL, OPT_MODEL_BUDGET},
    {"model-dtypes", required_argument, NULL, OPT_MODEL_DTYPES},
    {"full-bandwidth-wait-s", required_argument, NULL, OPT_FULL_BW_WAIT},
    {"time-budget", required_argument, NULL, OPT_TIME_BUDGET},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

void opcost_config_usage(FILE *out)
{
    fprintf(
        out,
        "usage: opcost run [options]\n"
        "Times every selected path on every shape of the selected shape sets\n"
        "and writes results/<run_id>.csv (+ .samples.csv). With no options:\n"
        "the default suite (llama-3.1-8b-conv and edges, every path) on the\n"
        "best device present.\n\n"
        "  --shapes NAME|FILE   a shape set in shapes/ (e.g. qwen2.5-7b-code)\n"
        "                       or a shape file; repeatable\n"
        "                       (default: llama-3.1-8b-conv, edges)\n"
        "  --paths LIST         comma-separated paths (default: all but the\n"
        "                       ones run only when named; see `opcost list`)\n"
        "  --variants LIST      kernel variants for the kernel path: auto "
        "(what\n"
        "                       the eligibility function picks) or names from\n"
        "                       `opcost list`, or all (default: auto)\n"
        "  --device cpu|cuda    the device (default: cuda if present, else "
        "cpu)\n"
        "  --dtype LIST         only these dtypes of the shape sets: float32,\n"
        "                       float16, bfloat16, float64 (default: all)\n"
        "  --threads N          intra-op threads, 1..1024 (default: online "
        "CPUs)\n"
        "  --no-pin             leave the threads to the scheduler (default:\n"
        "                       thread i on the i-th CPU the process may use,\n"
        "                       alike in every process of opcost ab)\n"
        "  --out FILE           the results CSV, must end in .csv\n"
        "                       (default: results/<run_id>.csv); one another\n"
        "                       run is writing is refused (exit 2)\n"
        "  --quick              a CI-sized run: fewer shapes, shorter budgets\n"
        "  --time-budget S      seconds the whole run may take, 0..86400: a\n"
        "                       plan made again before every point from what\n"
        "                       the points so far cost here keeps to it. A\n"
        "                       model point is timed only where its ratio can\n"
        "                       reach a verdict (at a narrower model if need\n"
        "                       be); then, first to give way: rounds beyond a\n"
        "                       point's budget (spare time buys up to 4x),\n"
        "                       the full-bandwidth hold, the replicates,\n"
        "                       rounds down to a quarter of the budget, model\n"
        "                       points, whole points of least weight. A cut "
        "is\n"
        "                       a skipped row whose note starts with budget:.\n"
        "                       0: no budget, the full run (the default; make\n"
        "                       bench gives 360)\n"
        "  --seed N             seed of the input values and the path order\n"
        "                       (default: 1)\n"
        "  --reps N             a point's rounds are cut into N repetitions\n"
        "                       (blocks of consecutive rounds: the sidecar's\n"
        "                       rep, ci95_reps_rel), 5..1000 (default: 5)\n"
        "  --replicates N       points measured a second time at the end of\n"
        "                       the run, its run-to-run noise (run_noise_rel)\n"
        "                       from how far their medians moved; every\n"
        "                       interval is at least that noise's; 0..64\n"
        "                       (default: a tenth of the points, 2 to 12;\n"
        "                       0: none, intervals from repetitions alone)\n"
        "  --rep-budget-ms X    a point's rounds stop after X ms per member\n"
        "                       and repetition (its paths, variants and the\n"
        "                       probe; default: 10; --quick: 2)\n"
        "  --noise X            ... or once every paired ratio's 95%% "
        "interval\n"
        "                       is within X of it (default: 0.01)\n"
        "  --threshold X        a paired ratio's verdict: same within 1 +- X,\n"
        "                       slower or faster beyond it, unsure between\n"
        "                       (default: 0.02)\n"
        "  --baseline NAME      the member each path is paired with: a path,\n"
        "                       or path/variant (default: reference when it\n"
        "                       runs, else the first path and variant)\n"
        "  --sample-us X        calls are batched so one sample lasts at "
        "least\n"
        "                       X microseconds (default: 20 on the CPU, 2000 "
        "on a\n"
        "                       GPU, where a sample's fill of ~20 us is then "
        "1 %%)\n"
        "  --cache cold|warm    cold: input sets rotated beyond the "
        "last-level\n"
        "                       cache; warm: one set (default: cold)\n"
        "  --llc-mib X          the last-level cache to assume, MiB: what a\n"
        "                       cold rotation and the ceilings' arrays span\n"
        "                       (4x it each); 1..1048576 (default: detected;\n"
        "                       a smaller one makes a run cheaper, and its\n"
        "                       cold rows colder than the cache only where\n"
        "                       the cache really is that small)\n"
        "  --model-max-tokens N the model paths (model-*) time the points of\n"
        "                       at most N tokens (B) and skip the others,\n"
        "                       saying why; 0..1048576, 0: every point\n"
        "                       (default: 64 on the CPU, where a layer stack\n"
        "                       of an 8B model at thousands of tokens takes\n"
        "                       seconds a call; 0 on a GPU)\n"
        "  --model-dtypes published|all  the model paths at the points of the\n"
        "                       dtype the model is published in (its\n"
        "                       config.json's torch_dtype, in\n"
        "                       shapes/models/decoders.csv) or at every\n"
        "                       dtype's (default: published)\n"
        "  --model-budget-s X   seconds more for the rounds of a point with\n"
        "                       model paths, 0.1..3600 (default: 6; --quick:\n"
        "                       0.5); --quick runs the model paths only when\n"
        "                       --paths names them\n"
        "  --full-bandwidth-wait-s X  seconds the run may hold, over all\n"
        "                       its points, a point streaming from DRAM past\n"
        "                       its budget while the host's bandwidth is\n"
        "                       reduced (these hosts switch between two\n"
        "                       states 2x apart for seconds at a time), so\n"
        "                       that its frac_of_peak rests on rounds at full\n"
        "                       bandwidth; 0..3600 (default: 30; --quick: 0)\n"
        "  --shapes-dir DIR     where shape-set names resolve (default: the\n"
        "                       source tree's shapes/)\n"
        "  --help               this text\n");
}

static int bad(char *err, size_t len, const char *opt, const char *rule,
               const char *got)
{
    snprintf(err, len, "--%s: %s, got '%s'", opt, rule, got);
    return -1;
}

static int parse_int(const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    const long x = strtol(s, &end, 10);
    if (errno || end == s || *end || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

static int parse_real(const char *s, double lo, double hi, double *v)
{
    char *end;
    errno = 0;
    const double x = strtod(s, &end);
    if (errno || end == s || *end || !isfinite(x) || x < lo || x > hi)
        return -1;
    *v = x;
    return 0;
}

/* Splits a comma list; calls add for each item. */
static int each_item(const char *list, const char *opt, char *err, size_t len,
                     int (*add)(void *ctx, const char *item, char *err,
                                size_t len),
                     void *ctx)
{
    char buf[1024];
    if (strlen(list) >= sizeof buf || !*list)
        return bad(err, len, opt, "must be a non-empty comma-separated list",
                   list);
    strcpy(buf, list);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item;
         item = strtok_r(NULL, ",", &save))
        if (add(ctx, item, err, len))
            return -1;
    return 0;
}

#define OPCOST_STR2(x) #x
#define OPCOST_STR(x) OPCOST_STR2(x)

/* Appends ", name" (or name first) to a list, never past its end. */
static void append_name(char *list, size_t cap, const char *name)
{
    const size_t used = strlen(list);
    if (used < cap)
        snprintf(list + used, cap - used, "%s%s", used ? ", " : "", name);
}

static int add_path(void *ctx, const char *item, char *err, size_t len)
{
    opcost_plan *plan = ctx;
    const opcost_path *p = opcost_path_find(item);
    if (!p) {
        char known[1024] = "";
        for (size_t i = 0; i < opcost_path_count(); ++i)
            append_name(known, sizeof known, opcost_path_at(i)->name);
        snprintf(err, len, "--paths: unknown path '%s' (known: %s)", item,
                 known);
        return -1;
    }
    for (int i = 0; i < plan->npaths; ++i)
        if (plan->paths[i] == p)
            return bad(err, len, "paths", "lists a path twice", item);
    if (plan->npaths >= OPCOST_MAX_SELECTED)
        return bad(err, len, "paths",
                   "names more paths than a run holds (" OPCOST_STR(
                       OPCOST_MAX_SELECTED) ")",
                   item);
    plan->paths[plan->npaths++] = p;
    return 0;
}

static int add_variant(void *ctx, const char *item, char *err, size_t len)
{
    opcost_plan *plan = ctx;
    if (strcmp(item, "all") == 0) {
        plan->variants_all = 1;
        for (size_t i = 0; i < opcost_variant_count(); ++i)
            if (plan->nvariants < OPCOST_MAX_SELECTED)
                plan->variants[plan->nvariants++] = opcost_variant_at(i);
        return 0;
    }
    const opcost_variant *v = opcost_variant_find(item);
    if (!v) {
        char known[1024] = "auto, all";
        for (size_t i = 0; i < opcost_variant_count(); ++i)
            append_name(known, sizeof known, opcost_variant_at(i)->name);
        snprintf(err, len, "--variants: unknown variant '%s' (known: %s)", item,
                 known);
        return -1;
    }
    for (int i = 0; i < plan->nvariants; ++i)
        if (plan->variants[i] == v)
            return bad(err, len, "variants", "lists a variant twice", item);
    if (plan->nvariants >= OPCOST_MAX_SELECTED)
        return bad(err, len, "variants", "too many variants", item);
    plan->variants[plan->nvariants++] = v;
    return 0;
}

static int add_dtype(void *ctx, const char *item, char *err, size_t len)
{
    opcost_plan *plan = ctx;
    rowops_dtype d;
    if (opcost_dtype_from_name(item, &d))
        return bad(err, len, "dtype",
                   "each must be float32, float16, bfloat16 or float64", item);
    plan->dtype_mask |= 1u << d;
    return 0;
}

/* What an option's parser says of an option that is not of its group. */
enum { OPTION_NOT_HERE = 1 };

/* --shapes, --paths, --variants, --dtype, --device, --baseline: what the
 * run times (the device's defaults are settled by opcost_plan_settle). */
static int parse_selection(opcost_plan *plan, int opt, const char *arg,
                           char *err, size_t len)
{
    switch (opt) {
    case 's':
        if (plan->nshapes >= OPCOST_MAX_SHAPE_SETS)
            return bad(err, len, "shapes", "at most 32 shape sets", arg);
        plan->shapes[plan->nshapes++] = arg;
        return 0;
    case 'p': return each_item(arg, "paths", err, len, add_path, plan);
    case 'v': return each_item(arg, "variants", err, len, add_variant, plan);
    case 't': return each_item(arg, "dtype", err, len, add_dtype, plan);
    case 'd':
        if (strcmp(arg, "cpu") && strcmp(arg, "cuda"))
            return bad(err, len, "device", "must be cpu or cuda", arg);
        plan->cuda = strcmp(arg, "cuda") == 0;
        plan->device_given = 1;
        return 0;
    case OPT_BASELINE: plan->baseline_name = arg; return 0;
    default: return OPTION_NOT_HERE;
    }
}

/* --threads, --no-pin, --out, --shapes-dir, --quick, --seed: where and how
 * the run runs. */
static int parse_run_setting(opcost_plan *plan, int opt, const char *arg,
                             char *err, size_t len)
{
    long v;
    switch (opt) {
    case 'j':
        if (parse_int(arg, 1, 1024, &v))
            return bad(err, len, "threads", "must be an integer in 1..1024",
                       arg);
        plan->threads = (int)v;
        return 0;
    case OPT_NO_PIN: plan->no_pin = 1; return 0;
    case 'o': {
        const size_t n = strlen(arg);
        if (n < 5 || strcmp(arg + n - 4, ".csv"))
            return bad(err, len, "out", "must be a file ending in .csv", arg);
        plan->out = arg;
        return 0;
    }
    case OPT_SHAPES_DIR: plan->shapes_dir = arg; return 0;
    case 'q': plan->quick = 1; return 0;
    case 'S':
        if (parse_int(arg, 0, 2147483647L, &v))
            return bad(err, len, "seed", "must be an integer in 0..2147483647",
                       arg);
        plan->seed = (uint64_t)v;
        return 0;
    default: return OPTION_NOT_HERE;
    }
}

/* --reps, --replicates, --rep-budget-ms, --noise, --threshold: how long a
 * point is measured and what its ratios' verdicts need. */
static int parse_rounds_setting(opcost_plan *plan, int opt, const char *arg,
                                char *err, size_t len)
{
    long v;
    double x;
    switch (opt) {
    case OPT_REPS:
        if (parse_int(arg, 5, 1000, &v))
            return bad(err, len, "reps", "must be an integer in 5..1000", arg);
        plan->reps = (int)v;
        return 0;
    case OPT_REPLICATES:
        if (parse_int(arg, 0, 64, &v))
            return bad(err, len, "replicates", "must be an integer in 0..64",
                       arg);
        plan->replicates = (int)v;
        return 0;
    case OPT_REP_BUDGET:
        if (parse_real(arg, 0.01, 60000, &x))
            return bad(err, len, "rep-budget-ms",
                       "must be a number in 0.01..60000", arg);
        plan->rep_budget_s = x / 1000.0;
        plan->rep_budget_given = 1;
        return 0;
    case OPT_NOISE:
        if (parse_real(arg, 1e-4, 0.5, &x))
            return bad(err, len, "noise", "must be a fraction in 0.0001..0.5",
                       arg);
        plan->noise_target = x;
        return 0;
    case OPT_THRESHOLD:
        if (parse_real(arg, 1e-4, 1, &x))
            return bad(err, len, "threshold", "must be a fraction in 0.0001..1",
                       arg);
        plan->threshold = x;
        return 0;
    default: return OPTION_NOT_HERE;
    }
}

/* --sample-us, --cache, --llc-mib, --full-bandwidth-wait-s, --time-budget:
 * what a sample and its inputs are, and the time the run may take. */
static int parse_sample_setting(opcost_plan *plan, int opt, const char *arg,
                                char *err, size_t len)
{
    double x;
    switch (opt) {
    case OPT_LLC_MIB:
        if (parse_real(arg, 1, 1048576, &x))
            return bad(err, len, "llc-mib",
                       "must be a number of MiB in 1..1048576", arg);
        plan->llc_bytes = (size_t)(x * (1 << 20));
        return 0;
    case OPT_SAMPLE_US:
        if (parse_real(arg, 0, 1e6, &x))
            return bad(err, len, "sample-us",
                       "must be a number of microseconds in 0..1e6", arg);
        plan->target_sample_us = x;
        plan->sample_us_given = 1;
        return 0;
    case OPT_CACHE:
        if (strcmp(arg, "cold") && strcmp(arg, "warm"))
            return bad(err, len, "cache", "must be cold or warm", arg);
        plan->cold = strcmp(arg, "cold") == 0;
        return 0;
    case OPT_TIME_BUDGET:
        if (parse_real(arg, 0, 86400, &x))
            return bad(err, len, "time-budget",
                       "must be a number of seconds in 0..86400 (0: no "
                       "budget)",
                       arg);
        plan->time_budget_s = x;
        return 0;
    case OPT_FULL_BW_WAIT:
        if (parse_real(arg, 0, 3600, &x))
            return bad(err, len, "full-bandwidth-wait-s",
                       "must be a number of seconds in 0..3600", arg);
        plan->full_bandwidth_wait_s = x;
        return 0;
    default: return OPTION_NOT_HERE;
    }
}

/* --model-max-tokens, --model-dtypes, --model-budget-s: the model paths. */
static int parse_model_setting(opcost_plan *plan, int opt, const char *arg,
                               char *err, size_t len)
{
    long v;
    double x;
    switch (opt) {
    case OPT_MODEL_MAX_TOKENS:
        if (parse_int(arg, 0, 1048576, &v))
            return bad(err, len, "model-max-tokens",
                       "must be an integer in 0..1048576", arg);
        plan->model_max_tokens = v;
        return 0;
    case OPT_MODEL_DTYPES:
        if (strcmp(arg, "published") && strcmp(arg, "all"))
            return bad(err, len, "model-dtypes", "must be published or all",
                       arg);
        plan->model_all_dtypes = strcmp(arg, "all") == 0;
        return 0;
    case OPT_MODEL_BUDGET:
        if (parse_real(arg, 0.1, 3600, &x))
            return bad(err, len, "model-budget-s",
                       "must be a number of seconds in 0.1..3600", arg);
        plan->model_budget_s = x;
        return 0;
    default: return OPTION_NOT_HERE;
    }
}

typedef int (*option_group_parser)(opcost_plan *plan, int opt, const char *arg,
                                   char *err, size_t len);

static const option_group_parser option_groups[] = {
    parse_selection,      parse_run_setting,   parse_rounds_setting,
    parse_sample_setting, parse_model_setting,
};

/* A capability the kernels would not apply: stop before any result is
 * labelled with it. */
static int check_cpu_capability(char *err, size_t len)
{
    const char *cap = getenv(ROWOPS_CPU_CAPABILITY_ENV);
    unsigned keep;
    if (!rowops_cpu_capability_parse(cap, &keep))
        return 0;
    snprintf(err, len,
             "%s=%s: the CPU capability must be " ROWOPS_CPU_CAPABILITY_NAMES
             " (or unset)",
             ROWOPS_CPU_CAPABILITY_ENV, cap);
    return -1;
}

/* The defaults no option changed (-1: the device's or --quick's, below) */
static void set_defaults(opcost_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->all_paths = opcost_path_table();
    plan->nall_paths = opcost_path_count();
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    plan->threads = cpus > 0 ? (int)cpus : 1;
    plan->shapes_dir = opcost_default_shapes_dir();
    /* OPCOST_RESULTS_DIR: where results/<run_id>.csv goes (the tests) */
    const char *results = getenv("OPCOST_RESULTS_DIR");
    plan->results_dir =
        results && *results ? results : OPCOST_SOURCE_DIR "/results";
    plan->seed = 1;
    plan->reps = 5;
    plan->replicates = -1;
    plan->rep_budget_s = -1;
    plan->noise_target = 0.01;
    plan->threshold = 0.02;
    plan->cold = 1;
    plan->model_max_tokens = -1; /* the device's default */
    plan->model_budget_s = -1;
    plan->full_bandwidth_wait_s = -1;
}

/* What the options left unsaid and --quick shortens. */
static void set_defaults_after_options(opcost_plan *plan)
{
    if (plan->nshapes == 0) {
        plan->shapes[plan->nshapes++] = "llama-3.1-8b-conv";
        plan->shapes[plan->nshapes++] = "edges";
    }
    plan->paths_default = plan->npaths == 0;
    if (plan->rep_budget_s < 0)
        plan->rep_budget_s = plan->quick ? 0.002 : 0.010;
    if (plan->model_budget_s < 0)
        plan->model_budget_s = plan->quick ? 0.5 : 6;
    if (plan->full_bandwidth_wait_s < 0)
        plan->full_bandwidth_wait_s = plan->quick ? 0 : 30;
}

int opcost_config_parse(opcost_plan *plan, int argc, char **argv, char *err,
                        size_t errlen)
{
    set_defaults(plan);
    if (check_cpu_capability(err, errlen))
        return -1;
    optind = 1;
    opterr = 0;
    int opt;
    while ((opt = getopt_long(argc, argv, ":h", options, NULL)) != -1) {
        if (opt == 'h') {
            opcost_config_usage(stdout);
            return 1;
        }
        if (opt == ':') {
            snprintf(err, errlen, "%s: needs a value (see opcost run --help)",
                     argv[optind - 1]);
            return -1;
        }
        int rc = OPTION_NOT_HERE;
        for (size_t g = 0; rc == OPTION_NOT_HERE &&
                           g < sizeof option_groups / sizeof *option_groups;
             ++g)
            rc = option_groups[g](plan, opt, optarg, err, errlen);
        if (rc == OPTION_NOT_HERE) {
            snprintf(err, errlen, "unknown option '%s' (see opcost run --help)",
                     argv[optind - 1]);
            return -1;
        }
        if (rc)
            return -1;
    }
    if (optind < argc) {
        snprintf(err, errlen,
                 "unexpected argument '%s' (options only; see opcost run "
                 "--help)",
                 argv[optind]);
        return -1;
    }
    set_defaults_after_options(plan);
    return 0;
}
