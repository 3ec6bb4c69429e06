/* `opcost ab --base DIR --new DIR [run options]`: two builds in lockstep
 * rounds over shared buffers (bench/ab/ab_coordinator.h); the table of new /
 * base per distribution and point (bench/analysis/ab_report.h); exit 0 (no
 * point slower), 1 (a point slower beyond --threshold, its significance
 * adjusted for the false discovery rate over the pairs),
 * 2 (bad input, or a side that went away: no comparison). And `opcost
 * worker FD`, a side's end of it. */
#define _DEFAULT_SOURCE /* realpath */
#include "ab_cmd.h"
#include "ab_coordinator.h"
#include "ab_report.h"
#include "ab_worker.h"
#include "config.h"
#include "console.h"
#include "gates.h"
#include "omp_waits.h"
#include "outfile.h"
#include "outpath.h"
#include "registry.h"
#include "results_csv.h"
#include "shape_file.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ctx.workers[]: process 0 of each side */
enum { BASE_WORKER = 0, NEW_WORKER = 1 };

/* A point's rounds stop after this per member and repetition unless
 * --rep-budget-ms says otherwise: 100 ms, not opcost run's 10 (an A/A of
 * llama-3.1-8b-conv's 280 pairs on one host and day: median interval
 * +-9.0 % at 10 ms in 233 s, +-2.5-2.8 % at 100 ms in 438-475 s;
 * docs/comparing.md). */
#define OPCOST_AB_REP_BUDGET_S 0.100

/* Worker processes a side unless --processes says otherwise: 4, not 2.
 * Three A/A runs of llama-3.1-8b-conv at 400 ms with four, each process
 * compared with all the others, had no false verdict; with two, four of
 * five had one to three (a process's placement moves its speed, and two
 * a side hold too little of it: docs/comparing.md). */
#define OPCOST_AB_PROCESSES 4

/* --report's verdict band: --threshold's default (config.c) */
#define OPCOST_AB_THRESHOLD 0.02
static void usage(FILE *f)
{
    fprintf(f,
            "usage: opcost ab --base DIR --new DIR [--alpha X] [run "
            "options]\n"
            "       opcost ab --report FILE [--alpha X]\n"
            "A/B of two builds: every selected path and kernel variant of "
            "both, and\nthe bandwidth probe, in lockstep rounds (one sample "
            "each per round,\nshuffled, one process at a time) over the "
            "same buffers in shared memory;\nboth sides verified against "
            "the C double reference first. DIR: a build\ndirectory (`make "
            "build`'s, holding opcost) or a checkout whose build/\nholds "
            "one. Writes results/<run_id>-ab.csv (--out FILE): both sides' "
            "rows\n(side base, new), each new row's ratio to its base twin, "
            "its 95%% interval\nand verdict. The run options are opcost "
            "run's (opcost run --help);\n--threshold (default 0.02) and "
            "--noise (the intervals' target, default\n0.01) decide the "
            "verdicts and when a point's rounds may stop;\n--rep-budget-ms "
            "defaults to 100 here (opcost run's 10 left 273 of\n280 A/A "
            "pairs unsure at a median interval of +-9 %%; 100: +-2.5-2.8 "
            "%%\nin twice the time, docs/comparing.md).\n"
            "  --base DIR   the build compared against\n"
            "  --new DIR    the build compared\n"
            "  --alpha X    significance of a slower or faster verdict, "
            "adjusted\n               over the pairs for the false discovery "
            "rate\n               (Benjamini-Hochberg; default: 0.05)\n"
            "  --processes K  worker processes a side, 1 to %d (default 4): "
            "a process's\n               own placement in memory moves its "
            "speed for its whole\n               life; the sides' means "
            "average it over K and the processes\n               of a side "
            "measure it, into every interval\n"
            "  --gate       also judge each distribution group's weighted "
            "expected\n               cost ratio: exit 1 when one is slower, "
            "3 when one is\n               unsure, 2 when one is incomplete "
            "(make nightly)\n"
            "  --gates-out F  append each group's verdict to F (gates.csv)\n"
            "  --keep-loader-env  pass LD_LIBRARY_PATH, LD_PRELOAD and "
            "PYTHONPATH on\n               to the workers (removed by "
            "default, and said so: each\n               side loads its own "
            "build's libraries)\n"
            "  --report FILE  the table of an opcost ab results file (no "
            "run; exit\n               status as a run's without --gate; "
            "opcost compare does\n               not join an ab file's "
            "sides)\n"
            "Every reply of a worker has a deadline (its hello 120 s, a "
            "point's opening\n120 s + 60 s a member, a sample 10 s + 100 "
            "times its calls' time; 3 s\nonce interrupted): a worker that "
            "misses it is killed with its process\ngroup and named, its "
            "points error. Each side's rowops library, as its\nloader "
            "mapped it, is said (path, size, FNV-1a 64); the same file or "
            "bytes\nunder two different commits is refused (exit 2).\n"
            "Exit status: 0 no point slower, 1 a point slower beyond the "
            "threshold\nor broken (ok in base, wrong or failed in new),\n2 bad "
            "input or no comparison (a side could not "
            "start or went away, no\npoint paired on both sides: a base "
            "that is wrong or failed included;\nwith --gate, a group with a "
            "point not paired: gates row `incomplete`),\n3 (with --gate) a "
            "group unsure.\n",
            OPCOST_AB_MAX_PROCESSES);
}

/* DIR's opcost: DIR/opcost, or DIR/build/opcost. */
static int resolve(const char *opt, const char *dir, char *exe, size_t len,
                   char *err, size_t elen)
{
    const char *tries[] = {"%s/opcost", "%s/build/opcost"};
    struct stat st;
    if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
        snprintf(err, elen, "--%s: '%s' is not a directory", opt, dir);
        return -1;
    }
    for (int i = 0; i < 2; ++i) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, tries[i], dir);
        if (access(path, X_OK) == 0 && realpath(path, exe) && strlen(exe) < len)
            return 0;
    }
    snprintf(err, elen,
             "--%s: '%s' holds no opcost (neither %s/opcost nor "
             "%s/build/opcost: run `make build` there)",
             opt, dir, dir, dir);
    return -1;
}

/* What the comparison's summary needs, and the exit status it leaves. */
typedef struct ab_summary {
    double threshold, alpha;
    int gate;              /* exit on the groups' verdicts (3: unsure) */
    const char *gates_out; /* append the groups' verdicts */
    const char *base_sha;
    int rc;
} ab_summary;

/* A side's expected cost per call of a group: sum freq median / sum freq
 * over its rows of the group (NAN unless all are ok). */
static double side_expected(const opcost_result *rows, size_t n,
                            const opcost_result *key, const char *side)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *r = &rows[i];
        if (strcmp(r->side, side) ||
            strcmp(r->distribution, key->distribution) ||
            strcmp(r->op, key->op) || strcmp(r->dtype, key->dtype) ||
            strcmp(r->layout, key->layout) || strcmp(r->path, key->path) ||
            strcmp(r->variant, key->variant))
            continue;
        if (r->status != OPCOST_STATUS_OK)
            return NAN;
        const double w = atof(r->freq) > 0 ? atof(r->freq) : 1;
        num += w * r->median_us;
        den += w;
    }
    return den > 0 ? num / den : NAN;
}

/* The gate: exit 1 when a point or a group is slower, 2 when a group is
 * incomplete (a point of it not paired on both sides: an interrupted run,
 * a side that went away, a base not ok; its gates row says `incomplete`,
 * never a pass), 3 when a group is unsure (no pass, no fail), else 0; the
 * groups appended to gates_out. Without --gate: 1 when a point is
 * slower, else 0 (no pair at all is the caller's 2). */
static int gate(ab_summary *c, const opcost_result *rows, size_t n,
                int slower_points)
{
    opcost_ab_group *g;
    size_t ng;
    if (opcost_ab_groups(rows, n, c->threshold, c->alpha, &g, &ng)) {
        fprintf(stderr, "opcost ab: out of memory (gate)\n");
        return 2;
    }
    int slower = slower_points > 0, unsure = 0;
    size_t incomplete = 0;
    opcost_gate_row *out = calloc(ng ? ng : 1, sizeof *out);
    for (size_t k = 0; k < ng; ++k) {
        const int broken =
            g[k].verdict == OPCOST_VERDICT_SLOWER || g[k].broken > 0;
        const int partial = OPCOST_AB_INCOMPLETE(&g[k]) && !broken;
        slower |= broken;
        incomplete += partial;
        unsure |= g[k].verdict == OPCOST_VERDICT_UNSURE ||
                  g[k].verdict == OPCOST_VERDICT_NONE;
        if (out)
            out[k] = (opcost_gate_row){g[k].key,
                                       side_expected(rows, n, g[k].key, "base"),
                                       side_expected(rows, n, g[k].key, "new"),
                                       g[k].ratio.ratio,
                                       g[k].p_holm,
                                       broken,
                                       partial};
    }
    int rc = slower ? 1 : incomplete && c->gate ? 2 : unsure && c->gate ? 3 : 0;
    char err[1024];
    int unwritten = 0;
    if (c->gates_out &&
        (!out || opcost_gates_append("--gates-out", c->gates_out,
                                     n ? rows[0].run_id : "", c->base_sha, out,
                                     ng, err, sizeof err))) {
        fprintf(stderr, "opcost ab: %s\n", out ? err : "out of memory");
        rc = 2;
        unwritten = 1;
    }
    if (c->gate) {
        if (unwritten)
            printf("gate: could not write the verdicts\n");
        else if (rc == 1)
            printf("gate: slower (a regression)\n");
        else if (rc == 2)
            printf("gate: incomplete: %zu of %zu group%s not paired at "
                   "every point (no verdict: neither a pass nor a fail)\n",
                   incomplete, ng, ng == 1 ? "" : "s");
        else if (rc == 3)
            printf("gate: unsure (an interval reaches across the threshold: "
                   "neither a pass nor a fail)\n");
        else
            printf("gate: no group or point slower, every group same or "
                   "faster\n");
        if (incomplete && rc != 2)
            printf("gate: incomplete: %zu of %zu group%s not paired at "
                   "every point (their gates rows say so)\n",
                   incomplete, ng, ng == 1 ? "" : "s");
    }
    free(out);
    free(g);
    return c->gate || rc == 2 ? rc : slower_points ? 1 : 0;
}

/* Why no pair was compared, on stderr; the exit status 2. */
static int no_comparison(const opcost_ab_counts *k)
{
    char why[512] = "";
    size_t at = 0;
    if (k->base_not_ok)
        at += (size_t)snprintf(why + at, sizeof why - at,
                               "; %zu with the base's row not ok (wrong, "
                               "failed or skipped: see its rows)",
                               k->base_not_ok);
    if (k->new_not_ok && at < sizeof why)
        at += (size_t)snprintf(why + at, sizeof why - at,
                               "; %zu with the new build's row not ok",
                               k->new_not_ok);
    if (k->unsided && at < sizeof why)
        at += (size_t)snprintf(why + at, sizeof why - at,
                               "; %zu skipped before either side ran them",
                               k->unsided);
    if (k->unsettled && at < sizeof why)
        snprintf(why + at, sizeof why - at,
                 "; %zu unsettled (the journal of a run that did not end)",
                 k->unsettled);
    fprintf(stderr,
            "opcost ab: no comparison: 0 of %zu points x paths paired%s\n",
            k->rows, why);
    printf("no comparison: 0 of %zu points x paths paired on both sides "
           "(exit 2)\n",
           k->rows);
    return 2;
}
/* The console's summary (console.h): the table, then the gate; no pair
 * compared at all is no comparison (exit 2), said. */
static void summarize(void *ctx, const opcost_result *rows, size_t n)
{
    ab_summary *c = ctx;
    const opcost_ab_counts k =
        opcost_ab_report(stdout, rows, n, c->threshold, c->alpha);
    /* a row the new build broke counts as a slower one */
    c->rc = gate(c, rows, n, (int)(k.slower + k.broken));
    /* nothing paired (a base that computes wrong results, ...): no
     * verdict, whatever the gate says of the groups */
    if (!k.paired && c->rc != 1)
        c->rc = no_comparison(&k);
}

/* --gates-out is neither --out, its sidecar nor a shape file the run
 * reads (it would append 13-field rows to a results CSV). */
static int gates_not_input(const opcost_plan *plan, const char *gates_out,
                           char *err, size_t len)
{
    char side[4096] = "";
    if (plan->out &&
        opcost_samples_path(plan->out, side, sizeof side, err, len))
        side[0] = '\0';
    const char *paths[2 + OPCOST_MAX_SHAPE_SETS] = {plan->out,
                                                    side[0] ? side : NULL};
    const char *names[2 + OPCOST_MAX_SHAPE_SETS] = {"--out", "--out's sidecar"};
    int n = 2;
    char shape[OPCOST_MAX_SHAPE_SETS][4096];
    for (int i = 0; i < plan->nshapes && i < OPCOST_MAX_SHAPE_SETS; ++i) {
        char e[512];
        if (opcost_shape_set_resolve(plan->shapes[i], plan->shapes_dir,
                                     shape[i], sizeof shape[i], e, sizeof e))
            continue;
        paths[n] = shape[i];
        names[n++] = "a --shapes file";
    }
    return opcost_output_not_input("--gates-out", gates_out, paths, names, n,
                                   err, len);
}

/* What opcost ab takes beyond opcost run's options. */
typedef struct ab_options {
    const char *dirs[2]; /* --base, --new */
    const char *gates_out;
    const char *report; /* --report FILE */
    int gate;
    double alpha;
    long processes;
    int keep_loader_env;
} ab_options;

/* Takes opcost ab's own options out of argv; the rest (run's options) go
 * to rest, after "ab". Returns 0; 1 after --help (text printed); 2 with
 * the error printed. */
static int parse_ab_options(int argc, char **argv, ab_options *own, char **rest,
                            int *nrest)
{
    *own =
        (ab_options){{NULL, NULL}, NULL, NULL, 0, 0.05, OPCOST_AB_PROCESSES, 0};
    *nrest = 0;
    rest[(*nrest)++] = "ab";
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            return 1;
        }
        if (!strcmp(a, "--gate")) {
            own->gate = 1;
            continue;
        }
        if (!strcmp(a, "--keep-loader-env")) {
            own->keep_loader_env = 1;
            continue;
        }
        const int which = !strcmp(a, "--base")        ? 0
                          : !strcmp(a, "--new")       ? 1
                          : !strcmp(a, "--alpha")     ? 2
                          : !strcmp(a, "--gates-out") ? 3
                          : !strcmp(a, "--processes") ? 4
                          : !strcmp(a, "--report")    ? 5
                                                      : -1;
        if (which < 0) {
            rest[(*nrest)++] = argv[i];
            continue;
        }
        if (i + 1 >= argc) {
            fprintf(stderr,
                    "opcost ab: %s: needs a value (see opcost ab "
                    "--help)\n",
                    a);
            return 2;
        }
        const char *v = argv[++i];
        if (which < 2) {
            own->dirs[which] = v;
            continue;
        }
        if (which == 3) {
            own->gates_out = v;
            continue;
        }
        if (which == 5) {
            own->report = v;
            continue;
        }
        char *end;
        if (which == 4) {
            errno = 0;
            own->processes = strtol(v, &end, 10);
            if (errno || end == v || *end || own->processes < 1 ||
                own->processes > OPCOST_AB_MAX_PROCESSES) {
                fprintf(stderr,
                        "opcost ab: --processes: must be a whole number "
                        "from 1 to %d, got '%s'\n",
                        OPCOST_AB_MAX_PROCESSES, v);
                return 2;
            }
            continue;
        }
        own->alpha = strtod(v, &end);
        if (*end || !(own->alpha > 0 && own->alpha < 1)) {
            fprintf(stderr, "opcost ab: --alpha: must be in (0, 1), got '%s'\n",
                    v);
            return 2;
        }
    }
    return 0;
}

/* The plan as asked (opcost run's options, ab's defaults), settled for the
 * device as given (keep_comparable refuses a GPU's). Returns 0; 1 after
 * --help; 2 with the error printed. */
static int parse_ab_plan(int nrest, char **rest, opcost_plan *plan)
{
    char err[2048];
    const int rc = opcost_config_parse(plan, nrest, rest, err, sizeof err);
    if (rc > 0)
        return 1;
    if (rc < 0 || opcost_plan_settle(plan, plan->cuda, err, sizeof err)) {
        fprintf(stderr, "opcost ab: %s\n", err);
        return 2;
    }
    /* ab's own default is 10x run's; a budget given in any spelling
     * getopt takes (--rep-budget-ms=5, --rep-budget 5) is kept */
    if (!plan->rep_budget_given && !plan->quick)
        plan->rep_budget_s = OPCOST_AB_REP_BUDGET_S;
    return 0;
}

/* Each side's opcost, from --base and --new. 0, or 2 with the error
 * printed. */
static int resolve_sides(const ab_options *own, char exe[2][PATH_MAX])
{
    const char *opt[2] = {"base", "new"};
    char err[2048];
    for (int s = 0; s < 2; ++s) {
        if (!own->dirs[s]) {
            fprintf(stderr,
                    "opcost ab: --%s DIR is required (see opcost ab "
                    "--help)\n",
                    opt[s]);
            return 2;
        }
        if (resolve(opt[s], own->dirs[s], exe[s], PATH_MAX, err, sizeof err)) {
            fprintf(stderr, "opcost ab: %s\n", err);
            return 2;
        }
    }
    return 0;
}

/* What opcost ab does not compare: a GPU's run, and the model paths (each
 * worker process would hold the model's weights, 6 GB at 8B with the
 * float64 verification): named, refused; by default, left out. 0, or 2
 * with the error printed. */
static int keep_comparable(opcost_plan *plan)
{
    if (plan->cuda) {
        fprintf(stderr, "opcost ab: --device cuda: the two sides would need "
                        "their device buffers shared (CUDA IPC), which opcost "
                        "ab does not do yet; compare GPU builds with opcost "
                        "run in each\n");
        return 2;
    }
    int kept = 0;
    for (int i = 0; i < plan->npaths; ++i) {
        if (plan->paths[i]->model && !plan->paths_default) {
            fprintf(stderr,
                    "opcost ab: --paths: %s: the model paths are not compared "
                    "across builds (each worker process would hold the "
                    "model's weights); time them with opcost run in each "
                    "build\n",
                    plan->paths[i]->name);
            return 2;
        }
        if (!plan->paths[i]->model)
            plan->paths[kept++] = plan->paths[i];
    }
    plan->npaths = kept;
    plan->replicates = 0; /* the pairs need no run-to-run noise */
    return 0;
}

/* The two sides' workers started, the plan run over them, the verdicts:
 * the exit status. */
static int compare(int argc, char **argv, const opcost_plan *plan,
                   const ab_options *own, char exe[2][PATH_MAX])
{
    /* this process runs the probe of every round on the op's threads,
     * between the sides' samples: they must not spin on the sides' cores
     * (omp_waits.h); executes this program again with the settings, and
     * returns here only when they are there or that failed */
    char waits[512];
    opcost_omp_waits_coordinator(argc, argv, waits, sizeof waits);
    static opcost_ab_ctx ctx; /* 66 KiB */
    char err[2048];
    opcost_ab_init(&ctx, exe[0], exe[1], (int)own->processes, plan->threshold,
                   own->alpha);
    ctx.keep_loader_env = own->keep_loader_env;
    /* the deadlines' scale: for tests (a hung worker found in seconds) */
    const char *scale = getenv("OPCOST_AB_DEADLINE_SCALE");
    if (scale && *scale) {
        char *end;
        ctx.deadline_scale = strtod(scale, &end);
        if (*end || !(ctx.deadline_scale > 0 && ctx.deadline_scale <= 1000)) {
            fprintf(stderr,
                    "opcost ab: OPCOST_AB_DEADLINE_SCALE: must be a number "
                    "in (0, 1000], got '%s'\n",
                    scale);
            return 2;
        }
    }
    char scrubbed[8192];
    opcost_ab_scrubbed(&ctx, scrubbed, sizeof scrubbed);
    if (scrubbed[0])
        printf("opcost ab: removed for the workers (each side loads its own "
               "build's libraries; --keep-loader-env keeps them): %s\n",
               scrubbed);
    fflush(stdout);
    if (opcost_ab_start(plan, &ctx, err, sizeof err)) {
        fprintf(stderr, "opcost ab: %s\n", err);
        opcost_ab_stop(&ctx);
        return 2;
    }
    printf("opcost ab: base %s (git %s), new %s (git %s), %d process%s a "
           "side\n",
           exe[0], ctx.workers[BASE_WORKER].git_sha, exe[1],
           ctx.workers[NEW_WORKER].git_sha, ctx.processes,
           ctx.processes == 1 ? "" : "es");
    for (int s = 0; s < 2; ++s) {
        const opcost_ab_side *side = &ctx.workers[s];
        if (side->lib.path[0])
            printf("opcost ab: %s library %s, %llu bytes, FNV-1a 64 %016llx\n",
                   side->name, side->lib.path,
                   (unsigned long long)side->lib.size,
                   (unsigned long long)side->lib.hash);
        else
            printf("opcost ab: %s library: not read from its worker's maps "
                   "(said above)\n",
                   side->name);
    }
    printf("opcost ab: %s\n", waits);
    ab_summary summary = {plan->threshold,
                          own->alpha,
                          own->gate,
                          own->gates_out,
                          ctx.workers[BASE_WORKER].git_sha,
                          0};
    opcost_console console = {"opcost ab", summarize, &summary};
    const opcost_run_hooks hooks = opcost_console_hooks(&console);
    const opcost_point_measurer m = opcost_ab_measurer(&ctx);
    run_device dev;
    memset(&dev, 0, sizeof dev);
    const int rc = opcost_pipeline_run(plan, &dev, &hooks, &m);
    opcost_ab_stop(&ctx);
    if (ctx.failed) {
        fprintf(stderr, "opcost ab: no whole comparison: %s\n", ctx.why);
        return 2;
    }
    return rc ? 2 : summary.rc;
}

/* `opcost ab --report FILE`: the table of a file opcost ab wrote, its
 * exit status a run's without --gate (0, 1 a point slower or broken, 2
 * unreadable, not an ab file, or no point paired). */
static int report(const char *path, double alpha)
{
    opcost_result *rows = NULL;
    size_t n = 0;
    char err[2048];
    if (opcost_results_read(path, &rows, &n, err, sizeof err)) {
        fprintf(stderr, "opcost ab: --report: %s\n", err);
        return 2;
    }
    size_t sided = 0;
    for (size_t i = 0; i < n; ++i)
        sided += rows[i].side[0] != '\0';
    if (!sided) {
        fprintf(stderr,
                "opcost ab: --report: '%s' has no rows of side base or new: "
                "not an opcost ab file (two runs: opcost compare)\n",
                path);
        free(rows);
        return 2;
    }
    ab_summary c = {OPCOST_AB_THRESHOLD, alpha, 0, NULL, "", 0};
    summarize(&c, rows, n);
    free(rows);
    return c.rc;
}

int opcost_ab_main(int argc, char **argv)
{
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    if (!rest)
        return 2;
    ab_options own;
    int nrest;
    opcost_plan plan;
    int rc = parse_ab_options(argc, argv, &own, rest, &nrest);
    if (rc == 0 && own.report) {
        /* a file's table: nothing run, so no option of a run */
        const char *extra = own.dirs[0]     ? "--base"
                            : own.dirs[1]   ? "--new"
                            : own.gates_out ? "--gates-out"
                            : own.gate      ? "--gate"
                            : nrest > 1     ? rest[1]
                                            : NULL;
        if (extra)
            fprintf(stderr,
                    "opcost ab: --report: %s: not with --report (it reads a "
                    "file, runs nothing; --alpha only)\n",
                    extra);
        free(rest);
        return extra ? 2 : report(own.report, own.alpha);
    }
    if (rc == 0)
        rc = parse_ab_plan(nrest, rest, &plan);
    free(rest);
    if (rc)
        return rc == 1 ? 0 : 2;
    static char exe[2][PATH_MAX];
    if (resolve_sides(&own, exe))
        return 2;
    char err[2048];
    if (own.gates_out &&
        (opcost_output_path_check("--gates-out", own.gates_out, err,
                                  sizeof err) ||
         gates_not_input(&plan, own.gates_out, err, sizeof err))) {
        fprintf(stderr, "opcost ab: %s\n", err);
        return 2;
    }
    if (keep_comparable(&plan))
        return 2;
    return compare(argc, argv, &plan, &own, exe);
}

static const opcost_variant *find_variant(const char *name)
{
    return opcost_variant_find(name);
}

int opcost_worker_main(int argc, char **argv)
{
    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: opcost worker FD\nA side of opcost ab (which starts "
               "it), serving on the socket FD.\n");
        return 0;
    }
    char *end;
    const long fd = argc == 2 ? strtol(argv[1], &end, 10) : -1;
    if (argc != 2 || *end || fd < 0) {
        fprintf(stderr, "usage: opcost worker FD (a side of opcost ab, which "
                        "starts it)\n");
        return 2;
    }
    const opcost_ab_names names = {opcost_path_find, find_variant};
    return opcost_ab_serve((int)fd, &names);
}
