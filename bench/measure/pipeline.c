#define _POSIX_C_SOURCE 200809L
#include "pipeline.h"
#include "ceiling.h"
#include "code_pages.h"
#include "cupti_tracer.h"
#include "host_bandwidth.h"
#include "hostinfo.h"
#include "journal.h"
#include "nvml_clock.h"
#include "nvtx_ranges.h"
#include "outfile.h"
#include "outpath.h"
#include "point.h"
#include "results_csv.h"
#include "rowops_bridge.h"
#include "run_budget.h"
#include "stats.h"
#include "timer.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

/* One line to the caller (formatted here, printed there). */
static void say(const opcost_run_hooks *h, int is_error, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void say(const opcost_run_hooks *h, int is_error, const char *fmt, ...)
{
    if (!h || !h->message)
        return;
    char line[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    h->message(h->ctx, is_error, line);
}

/* Bytes of memory available now: MemAvailable, else free physical pages. */
static double available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f)) {
        long long kb;
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) {
            fclose(f);
            return (double)kb * 1024.0;
        }
    }
    if (f)
        fclose(f);
    return (double)sysconf(_SC_AVPHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
}

/* ---- cases from the shape sets */

typedef struct case_list {
    opcost_case *cases;
    size_t n;
    opcost_shape_set *sets;
    int nsets;
} case_list;

/* --quick keeps, per set, up to 4 evenly spaced rows of at most 2^22
 * elements: the smallest calls, where overheads show, at CI cost. One
 * pass per set (keep[k] for row k); B * N is never formed (it could
 * overflow). */
#define QUICK_MAX_ELEMS ((int64_t)1 << 22)

static void quick_keeps(const opcost_shape_set *set, char *keep)
{
    size_t small = 0;
    for (size_t k = 0; k < set->count; ++k) {
        const opcost_shape *s = &set->rows[k];
        keep[k] = s->B <= QUICK_MAX_ELEMS / s->N;
        small += (size_t)keep[k];
    }
    const size_t step = small <= 4 ? 1 : (small + 3) / 4;
    for (size_t k = 0, rank = 0; k < set->count; ++k)
        if (keep[k])
            keep[k] = rank++ % step == 0;
}

static int load_cases(const opcost_plan *plan, const run_device *dev,
                      case_list *cl, char *err, size_t len)
{
    memset(cl, 0, sizeof *cl);
    cl->sets = calloc((size_t)plan->nshapes, sizeof *cl->sets);
    if (!cl->sets)
        return -1;
    size_t total = 0;
    for (int i = 0; i < plan->nshapes; ++i) {
        char path[4096], e[1024];
        if (opcost_shape_set_resolve(plan->shapes[i], plan->shapes_dir, path,
                                     sizeof path, e, sizeof e) ||
            opcost_shape_set_load(path, &cl->sets[i], e, sizeof e)) {
            snprintf(err, len, "--shapes: %s", e);
            return -1;
        }
        /* the same set twice would count its rows and weights twice */
        for (int k = 0; k < i; ++k)
            if (!strcmp(cl->sets[k].name, cl->sets[i].name)) {
                snprintf(err, len,
                         "--shapes: '%s' is given twice (shape set %s): each "
                         "set may be named once",
                         plan->shapes[i], cl->sets[i].name);
                cl->nsets = i + 1;
                return -1;
            }
        cl->nsets = i + 1;
        total += cl->sets[i].count;
    }
    cl->cases = calloc(total ? total : 1, sizeof *cl->cases);
    if (!cl->cases)
        return -1;
    const size_t llc = dev->cuda         ? (size_t)dev->gpu.l2_bytes
                       : plan->llc_bytes ? plan->llc_bytes
                                         : opcost_llc_bytes(NULL, 0);
    const double avail = available_bytes();
    size_t dtype_ok = 0; /* rows of the selected dtypes */
    for (int i = 0; i < cl->nsets; ++i) {
        const opcost_shape_set *set = &cl->sets[i];
        char *keep = calloc(set->count, 1);
        if (!keep)
            return -1;
        if (plan->quick)
            quick_keeps(set, keep);
        for (size_t k = 0; k < set->count; ++k) {
            const opcost_shape *s = &set->rows[k];
            if (plan->dtype_mask && !(plan->dtype_mask & (1u << s->dtype)))
                continue;
            ++dtype_ok;
            if (plan->quick && !keep[k])
                continue;
            opcost_case *c = &cl->cases[cl->n];
            c->distribution = set->name;
            c->op = s->op;
            c->B = s->B;
            c->N = s->N;
            c->dtype = c->weight_dtype = s->dtype;
            c->layout = s->layout;
            c->freq = s->freq;
            snprintf(c->freq_text, sizeof c->freq_text, "%.9g", s->freq);
            c->eps = 1e-6;
            /* refuse now, with the numbers, what could not be allocated */
            const double need = opcost_workload_bytes(c, llc, plan->cold);
            if (need > 0.8 * avail) {
                snprintf(
                    err, len,
                    "--shapes: %.1000s:%d: %s B = %lld, N = %lld (%s) needs "
                    "%.3g GiB of buffers, more than 80%% of the %.3g "
                    "GiB available",
                    set->path, s->line, rowops_op_name(s->op), (long long)s->B,
                    (long long)s->N, rowops_dtype_name(s->dtype),
                    need / (1 << 30), avail / (1 << 30));
                free(keep);
                return -1;
            }
            if (dev->cuda && need > 0.8 * dev->gpu.free_bytes) {
                snprintf(err, len,
                         "--shapes: %.1000s:%d: %s B = %lld, N = %lld (%s) "
                         "needs %.3g GiB of GPU buffers, more than 80%% of the "
                         "%.3g GiB free on %s",
                         set->path, s->line, rowops_op_name(s->op),
                         (long long)s->B, (long long)s->N,
                         rowops_dtype_name(s->dtype), need / (1 << 30),
                         dev->gpu.free_bytes / (1 << 30), dev->gpu.name);
                return -1;
            }
            ++cl->n;
        }
        free(keep);
    }
    if (cl->n == 0 && dtype_ok == 0) {
        snprintf(err, len,
                 "--dtype: no shape of the selected sets has the "
                 "selected dtypes");
        return -1;
    }
    if (cl->n == 0) {
        snprintf(err, len,
                 "--quick: every shape of the selected sets%s has more "
                 "than 2^22 elements (B x N), the quick run's limit: run "
                 "without --quick",
                 plan->dtype_mask ? " (of the selected dtypes)" : "");
        return -1;
    }
    return 0;
}

static void free_cases(case_list *cl)
{
    for (int i = 0; i < cl->nsets; ++i)
        opcost_shape_set_free(&cl->sets[i]);
    free(cl->sets);
    free(cl->cases);
}

/* How many points the run measures again (--replicates; auto: a tenth of
 * them, 2 to 12, never more than there are). */
static size_t replicate_count(const opcost_plan *plan, size_t npoints)
{
    size_t k =
        plan->replicates >= 0 ? (size_t)plan->replicates : (npoints + 9) / 10;
    if (plan->replicates < 0)
        k = k < 2 ? 2 : k > 12 ? 12 : k;
    return k < npoints ? k : npoints;
}

/* Whether two rows are the same (point, path, variant). */
static int same_row(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->distribution, b->distribution) && !strcmp(a->op, b->op) &&
           a->B == b->B && a->N == b->N && !strcmp(a->dtype, b->dtype) &&
           !strcmp(a->layout, b->layout) && !strcmp(a->path, b->path) &&
           !strcmp(a->variant, b->variant);
}

/* The run's run-to-run noise: points spread evenly over the run measured
 * a second time at its end (a separate set of rows, not written), the
 * 95th percentile of the log ratios of their rows' medians
 * (opcost_run_noise_q95). Repetitions of one point take a second or two,
 * while the host's speed wanders over minutes (other tenants, clocks):
 * measured here, two back-to-back runs put 50 % of medians outside
 * intervals from repetitions alone. Returns the pairs used. */
static size_t measure_run_noise(const point_context *ctx, const case_list *cl,
                                const opcost_budget *budget, size_t k,
                                run_out *out, size_t *points, double *noise)
{
    const opcost_plan *plan = ctx->run_plan;
    *noise = NAN;
    *points = 0;
    /* the points measured (a budget may have cut some), spread evenly */
    size_t *kept = malloc((cl->n ? cl->n : 1) * sizeof *kept);
    size_t nkept = 0;
    for (size_t i = 0; kept && i < cl->n; ++i)
        if (!budget || !opcost_budget_is_cut(budget, i))
            kept[nkept++] = i;
    k = k < nkept ? k : nkept;
    /* without the model paths: a model point takes tens of seconds, and
     * the op's rows say the run's noise as well */
    opcost_plan lean = *plan;
    lean.npaths = 0;
    for (int p = 0; p < plan->npaths; ++p)
        if (!plan->paths[p]->model)
            lean.paths[lean.npaths++] = plan->paths[p];
    point_context lean_ctx = *ctx;
    lean_ctx.run_plan = &lean;
    lean_ctx.wait_left_s = NULL; /* the run's own points may wait */
    lean_ctx.plan = NULL;        /* each at its rounds' budget */
    ctx = &lean_ctx;
    run_out again;
    memset(&again, 0, sizeof again);
    char err[1024];
    for (size_t j = 0; j < k && !opcost_interrupted(); ++j) {
        const size_t i =
            kept[(size_t)(((double)j + 0.5) * (double)nkept / (double)k)];
        opcost_nvtx_push(OPCOST_NVTX_DISTRIBUTION, cl->cases[i].distribution);
        const int failed = point_measure(ctx, &cl->cases[i], (int64_t)i, &again,
                                         NULL, NULL, err, sizeof err);
        opcost_nvtx_pop(OPCOST_NVTX_DISTRIBUTION);
        if (failed)
            break;
        ++*points;
    }
    double *lr = malloc((again.nrows ? again.nrows : 1) * sizeof *lr);
    size_t n = 0;
    for (size_t a = 0; lr && a < again.nrows; ++a) {
        const opcost_result *r2 = &again.rows[a];
        if (r2->status != OPCOST_STATUS_OK || !(r2->median_us > 0))
            continue;
        for (size_t b = 0; b < out->nrows; ++b) {
            const opcost_result *r1 = &out->rows[b];
            if (r1->status == OPCOST_STATUS_OK && r1->median_us > 0 &&
                same_row(r1, r2)) {
                lr[n++] = log(r2->median_us / r1->median_us);
                break;
            }
        }
    }
    *noise = lr ? opcost_run_noise_q95(lr, n) : NAN;
    free(lr);
    free(kept);
    free(again.rows);
    free(again.samples);
    return n;
}

/* Every ok row: the run's noise, and an interval at least as wide. */
static void apply_run_noise(run_out *out, double noise)
{
    for (size_t r = 0; r < out->nrows; ++r) {
        opcost_result *row = &out->rows[r];
        if (row->status != OPCOST_STATUS_OK)
            continue;
        row->run_noise_rel = noise;
        row->ci95_rel = opcost_ci95_with_run_noise(row->ci95_reps_rel, noise);
    }
}

static int profiler_active(void *ctx)
{
    (void)ctx;
    return rowops_bridge_profiler_active();
}

int opcost_find_device(opcost_plan *plan, run_device *dev,
                       const opcost_run_hooks *hooks, char *err, size_t len)
{
    memset(dev, 0, sizeof *dev);
    if (plan->device_given && !plan->cuda)
        return 0;
    char why[512];
    const int found = rowops_bridge_cuda_info(&dev->gpu, why, sizeof why) == 0;
    if (plan->cuda && !found) {
        snprintf(err, len, "--device cuda: no usable CUDA device: %s", why);
        return -1;
    }
    dev->cuda = found;
    if (!found)
        return 0;
    /* settled again for the GPU; a --baseline among the CPU's default
     * paths but not the GPU's is no error: the run goes on unpaired */
    char unpaired[256];
    opcost_plan_settle(plan, 1, unpaired, sizeof unpaired);
    /* CUPTI and torch.profiler never at once: refused while it records */
    const opcost_cupti_options opt = {profiler_active, NULL, NULL};
    if (opcost_cupti_open(&dev->cupti, &opt, dev->cupti_why,
                          sizeof dev->cupti_why)) {
        dev->cupti = NULL;
        say(hooks, 1, "%s: attribution falls back to the differential split",
            dev->cupti_why);
    }
    if (opcost_nvml_open(&dev->nvml, NULL, why, sizeof why)) {
        dev->nvml = NULL;
        say(hooks, 1, "%s: sm_clock_mhz and throttle_reasons stay empty", why);
    }
    return 0;
}

void opcost_close_device(run_device *dev)
{
    opcost_cupti_close(dev->cupti);
    opcost_nvml_close(dev->nvml);
    dev->cupti = NULL;
    dev->nvml = NULL;
}

/* The ceiling the rows are compared with: the CPU's STREAM probe, or a
 * large device-to-device copy on the GPU (bytes read + written, 16 times
 * the L2, at least 1 GiB, best of 9). */
static int measure_ceiling(const opcost_plan *plan, const run_device *dev,
                           opcost_ceiling *c, char *err, size_t len)
{
    if (!dev->cuda)
        return opcost_ceiling_measure(plan->threads, plan->llc_bytes, c, err,
                                      len);
    memset(c, 0, sizeof *c);
    size_t bytes = (size_t)(16 * dev->gpu.l2_bytes);
    bytes = bytes < ((size_t)1 << 30) ? (size_t)1 << 30 : bytes;
    if ((double)bytes * 2 > 0.5 * dev->gpu.free_bytes)
        bytes = (size_t)(0.25 * dev->gpu.free_bytes);
    c->llc_bytes = (size_t)dev->gpu.l2_bytes;
    snprintf(c->llc_source, sizeof c->llc_source, "L2 of %.*s",
             (int)sizeof dev->gpu.name - 1, dev->gpu.name);
    c->array_bytes = bytes;
    c->trials = 9;
    c->best_kernel = "d2d_copy";
    return rowops_bridge_cuda_copy_gbps(bytes, c->trials, &c->best_gbps, err,
                                        len);
}

/* The CPU ceilings: probed at the start and at the end of the run; in
 * between, every point's paired probe (bench/measure/probe.h) measures its
 * op's mix at its level, on its own buffers, and the best of those joins
 * the ceilings. Each row's frac_of_peak_best divides by the best of all.
 * The host's bandwidth moves under a run (other tenants: here 41.5 GB/s at
 * one run's start, 67.3 at its end): a row measured in a fast moment beat
 * probes taken only at the start and the end (frac_of_peak 1.06 to 1.17,
 * 2026-12-01), which the paired probes, taken at the rows' own moments,
 * see. */

typedef struct probe_range {
    double lo, hi; /* the paired probes' DRAM fused medians over the run */
    int n;
} probe_range;

/* The better DRAM ceiling of the two mixes: both read as many bytes as
 * they write, and streamed they met the same ceiling within 4-8 % (Zen 5:
 * rows 109-116, fused 108-118 GB/s), so either says what the host can do
 * where the other was last probed in a slow spell. 0: none measured. */
static double dram_best(const opcost_ceiling *c)
{
    double best = 0;
    /* not the in-place mix: its write-backs fall partly after its calls */
    for (int m = OPCOST_MIX_ROWS; m <= OPCOST_MIX_FUSED; ++m) {
        const double g = c->mix[OPCOST_LEVEL_DRAM][m].gbps;
        best = g > best ? g : best;
    }
    return best;
}

/* The run's full DRAM bandwidth: what it saw itself (own, remembered for
 * the next run) and what earlier runs on this machine saw (recalled). */
typedef struct full_bandwidth {
    double own, recalled;
    double gbps; /* the better: what points are classed against */
} full_bandwidth;

static void learn_full(full_bandwidth *fb, double g)
{
    fb->own = g > fb->own ? g : fb->own;
    fb->gbps = fb->own > fb->recalled ? fb->own : fb->recalled;
}

static void note_probe(opcost_ceiling *c, probe_range *pr, full_bandwidth *fb,
                       const point_probe *p)
{
    if (!p->measured)
        return;
    /* a cold call of less than twice the LLC is partly served by the
     * caches: not a DRAM figure (bandwidth_state.h) */
    const int dram_sized = opcost_bw_dram_sized(p->bytes, c->llc_bytes);
    if (p->level != OPCOST_LEVEL_DRAM || dram_sized)
        opcost_ceiling_merge_mix(c, p->level, p->mix, p->streaming,
                                 p->best_gbps);
    if (dram_sized && p->full_gbps > 0)
        learn_full(fb, p->full_gbps);
    /* the drift: points whose calls stream (a small call's probe is
     * all overhead) */
    if (p->level != OPCOST_LEVEL_DRAM || p->mix != OPCOST_MIX_FUSED ||
        p->bytes < OPCOST_STREAMING_BYTES)
        return;
    const double g = p->median_gbps;
    pr->lo = !(g >= pr->lo) ? g : pr->lo;
    pr->hi = !(g <= pr->hi) ? g : pr->hi;
    ++pr->n;
}

static void probe_again(const opcost_plan *plan, const opcost_run_hooks *hooks,
                        opcost_ceiling *c, full_bandwidth *fb)
{
    opcost_ceiling again;
    char err[512];
    if (opcost_ceiling_measure(plan->threads, plan->llc_bytes, &again, err,
                               sizeof err)) {
        say(hooks, 1, "ceiling probe at the end: %s", err);
        return;
    }
    opcost_ceiling_merge(c, &again);
    learn_full(fb, dram_best(&again));
}

/* ---- the run's phases */

/* One run on its settled device. */
typedef struct run_state {
    const opcost_plan *plan;
    run_device *dev;
    const opcost_run_hooks *hooks;
    opcost_point_measurer measurer;
    opcost_hostinfo host;
    case_list cl;
    char out_path[4096];
    char claim[4200];  /* the default name's claim, removed at the end */
    char locked[4096]; /* the results path its lock is on (outpath.h) */
    int lock_fd;       /* -1: none */
    opcost_ceiling ceiling;
    probe_range probes;
    opcost_journal *journal;
    run_out out;
    point_context ctx;
    double wait_left_s;  /* of plan->full_bandwidth_wait_s */
    full_bandwidth full; /* the run's full DRAM bandwidth so far */
    int64_t start;       /* the first point's */
    int64_t run_start;   /* the run's: what its time budget counts */
    opcost_run_budget budget;
    int pilots; /* the model stacks run in this process: piloted */
    double replicates_s;
} run_state;

/* The default results name, results/<run_id><suffix>.csv, claimed: two
 * runs started in the same second had the same run_id, and the second
 * to finish replaced the first's results. A run takes the name only
 * when no results file has it and it could create the claim
 * results/.<name>.claim exclusively; else its run_id gets "-2", "-3",
 * ... (the claim is removed when the run ends). */
static void claim_run_id(run_state *st)
{
    const opcost_plan *plan = st->plan;
    char base[sizeof st->host.run_id];
    snprintf(base, sizeof base, "%s", st->host.run_id);
    for (int k = 1; k < 1000; ++k) {
        if (k > 1)
            snprintf(st->host.run_id, sizeof st->host.run_id, "%.56s-%d", base,
                     k);
        snprintf(st->out_path, sizeof st->out_path, "%s/%s%s.csv",
                 plan->results_dir, st->host.run_id, st->measurer.suffix);
        snprintf(st->claim, sizeof st->claim, "%s/.%s%s.claim",
                 plan->results_dir, st->host.run_id, st->measurer.suffix);
        struct stat sb;
        if (lstat(st->out_path, &sb) == 0)
            continue;
        const int fd =
            open(st->claim,
                 O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd >= 0) {
            close(fd);
            return;
        }
        if (errno != EEXIST && errno != ELOOP)
            break; /* an unwritable results/: the destination check says */
    }
    st->claim[0] = '\0';
}

/* The results file and its sidecar are none of the shape files the run
 * reads (run --out good.csv --shapes good.csv replaced the shapes with
 * results). */
static int out_not_shapes(const opcost_plan *plan, const char *what,
                          const char *out, const char *side, char *err,
                          size_t len)
{
    for (int i = 0; i < plan->nshapes; ++i) {
        char path[4096], e[1024];
        if (opcost_shape_set_resolve(plan->shapes[i], plan->shapes_dir, path,
                                     sizeof path, e, sizeof e))
            continue; /* load_cases said why already */
        const char *paths[] = {path};
        const char *names[] = {"a --shapes file"};
        if (opcost_output_not_input(what, out, paths, names, 1, err, len) ||
            opcost_output_not_input(what, side, paths, names, 1, err, len))
            return -1;
    }
    return 0;
}

/* Phase 1: the host, the points, a destination that can be written, the
 * ceilings, the journal. 0, or the exit status with the reason said. */
static int open_run(run_state *st)
{
    const opcost_plan *plan = st->plan;
    run_device *dev = st->dev;
    const opcost_run_hooks *h = st->hooks;
    char err[2048];
    opcost_hostinfo_get(&st->host, OPCOST_SOURCE_DIR);
    if (dev->cuda)
        snprintf(st->host.gpu, sizeof st->host.gpu, "%.*s",
                 (int)sizeof dev->gpu.name - 1, dev->gpu.name);
    if (rowops_bridge_set_threads(plan->threads, err, sizeof err)) {
        say(h, 1, "--threads: %s", err);
        return 1;
    }
    if (point_pin_threads(plan, dev->pinning, sizeof dev->pinning) < 0)
        say(h, 0, "--threads: %s", dev->pinning);
    opcost_code_pages cp;
    const int placed = opcost_code_to_huge_pages(NULL, &cp);
    opcost_code_pages_say(&cp, placed, dev->code, sizeof dev->code);
    if (load_cases(plan, dev, &st->cl, err, sizeof err)) {
        say(h, 1, "%s", err);
        return 2; /* bad input */
    }
    if (plan->out)
        snprintf(st->out_path, sizeof st->out_path, "%s", plan->out);
    else
        claim_run_id(st);
    /* Refuse an unwritable destination now, not after the run: the
     * results file and its sidecar, regular files or new names only. */
    char side[4096];
    const char *what = plan->out ? "--out" : "the results file";
    if (opcost_samples_path(st->out_path, side, sizeof side, err, sizeof err) ||
        opcost_output_path_check(what, st->out_path, err, sizeof err) ||
        opcost_output_path_check(what, side, err, sizeof err) ||
        out_not_shapes(plan, what, st->out_path, side, err, sizeof err)) {
        say(h, 1, "%s", err);
        return 2;
    }
    /* another run writing the same file: refused now, not replaced at the
     * end by whichever finishes last */
    if (opcost_output_lock(what, st->out_path, &st->lock_fd, err, sizeof err)) {
        say(h, 1, "%s", err);
        return 2;
    }
    snprintf(st->locked, sizeof st->locked, "%s", st->out_path);
    if (measure_ceiling(plan, dev, &st->ceiling, err, sizeof err)) {
        say(h, 1, "ceiling probe: %s", err);
        return 1;
    }
    dev->rotate_bytes = st->ceiling.llc_bytes;
    st->probes = (probe_range){NAN, NAN, 0};
    if (h && h->started)
        h->started(h->ctx, plan, &st->host, &st->ceiling, dev, st->cl.n,
                   st->out_path);
    if (opcost_journal_open(&st->journal, st->out_path, err, sizeof err)) {
        say(h, 1, "%s", err);
        return 2;
    }
    st->wait_left_s = plan->full_bandwidth_wait_s;
    st->full = (full_bandwidth){0, 0, 0};
    if (!dev->cuda)
        st->full.recalled = opcost_host_bandwidth_recall(plan->threads);
    learn_full(&st->full, dram_best(&st->ceiling));
    st->ctx = (point_context){plan,         &st->host,        dev,
                              &st->ceiling, &st->wait_left_s, &st->full.gbps,
                              NULL};
    return 0;
}

/* Says what a model pilot measured. */
static void say_pilot(run_state *st, int g, int narrow,
                      const opcost_model_pilot *m)
{
    const opcost_case *lo = &st->cl.cases[st->budget.group_span[g][0]];
    const opcost_case *hi = &st->cl.cases[st->budget.group_span[g][1]];
    const char *what = narrow ? "the narrower model's stack" : "model stack";
    if (!m->available) {
        /* the own model's rows say why where it has none here */
        if (narrow)
            say(st->hooks, 0, "%s pilot, %s %s: not timed (%s)", what,
                lo->distribution, rowops_dtype_name(lo->dtype), m->why);
        return;
    }
    char compile[80] = "";
    if (isfinite(m->compile_s))
        snprintf(compile, sizeof compile, "; a compiled path's compile %.1f s",
                 m->compile_s);
    say(st->hooks, 0,
        "%s pilot, %s %s: a call %.1f ms at %lld tokens, %.1f ms at %lld%s "
        "(%.1f s)",
        what, lo->distribution, rowops_dtype_name(lo->dtype),
        1e3 * (m->a_s + m->per_token_s * (double)lo->B), (long long)lo->B,
        1e3 * (m->a_s + m->per_token_s * (double)hi->B), (long long)hi->B,
        compile, m->seconds);
}

/* Phase 1b: the time budget's plan over the points (budget.h), and the
 * model stacks piloted where they run in this process. 0, or 1 when
 * memory ran out. */
static int open_budget(run_state *st, int sides)
{
    const double gbps =
        st->dev->cuda ? st->ceiling.best_gbps : dram_best(&st->ceiling);
    if (opcost_run_budget_open(&st->budget, st->plan, st->cl.cases, st->cl.n,
                               gbps, st->ceiling.llc_bytes, st->dev->cuda,
                               opcost_seconds_since(st->run_start), sides)) {
        say(st->hooks, 1, "out of memory (the time budget)");
        return 1;
    }
    for (int g = 0; st->pilots && g < st->budget.ngroups; ++g) {
        opcost_model_pilot m;
        opcost_run_budget_pilot(&st->budget, st->plan, st->cl.cases,
                                st->dev->rotate_bytes, g, 0, &m);
        say_pilot(st, g, 0, &m);
    }
    st->start = opcost_now_ns();
    return 0;
}

/* The plan for point i (budget.h), with the narrower model piloted first
 * where the plan asks for it. */
static void plan_point(run_state *st, size_t i, opcost_point_plan *point_plan)
{
    opcost_budget *b = st->budget.b;
    const double elapsed = opcost_seconds_since(st->run_start);
    opcost_budget_plan_point(b, i, elapsed, point_plan);
    const int g = st->budget.points[i].model_group;
    if (st->pilots && opcost_budget_wants_narrow(b, g)) {
        opcost_model_pilot m;
        opcost_run_budget_pilot(&st->budget, st->plan, st->cl.cases,
                                st->dev->rotate_bytes, g, 1, &m);
        say_pilot(st, g, 1, &m);
        opcost_budget_plan_point(b, i, opcost_seconds_since(st->run_start),
                                 point_plan);
    }
}

/* Phase 2: every point, journaled as it ends; the CPU ceilings probed
 * again as opcost_probe_due says. After an interrupt the remaining
 * points get skipped rows. 0, or 1 when memory ran out. */
static int measure_points(run_state *st)
{
    const case_list *cl = &st->cl;
    const opcost_run_hooks *h = st->hooks;
    char err[2048];
    int rc = 0;
    const char *distribution = NULL;
    opcost_nvtx_push(OPCOST_NVTX_RUN, "run");
    for (size_t i = 0; i < cl->n && rc == 0; ++i) {
        if (cl->cases[i].distribution != distribution) {
            if (distribution)
                opcost_nvtx_pop(OPCOST_NVTX_DISTRIBUTION);
            distribution = cl->cases[i].distribution;
            opcost_nvtx_push(OPCOST_NVTX_DISTRIBUTION, distribution);
        }
        if (opcost_interrupted()) {
            if (point_skip(&st->ctx, &cl->cases[i],
                           "run interrupted (SIGINT or SIGTERM) before this "
                           "point: not measured",
                           &st->out))
                rc = 1;
            continue;
        }
        opcost_point_plan point_plan;
        plan_point(st, i, &point_plan);
        opcost_point_cost cost;
        memset(&cost, 0, sizeof cost);
        cost.model_sigma = NAN;
        const int64_t t0 = opcost_now_ns();
        if (point_plan.cut) {
            if (point_skip(&st->ctx, &cl->cases[i], point_plan.why, &st->out))
                rc = 1;
        } else {
            /* the full-bandwidth hold, as much as the plan leaves time for */
            double hold = point_plan.hold_s < st->wait_left_s
                              ? point_plan.hold_s
                              : st->wait_left_s;
            const double allowed = hold;
            point_context pc = st->ctx;
            pc.plan = &point_plan;
            pc.wait_left_s = &hold;
            point_probe probed[POINT_PROBES] = {{0}};
            if (st->measurer.measure(st->measurer.ctx, &pc, &cl->cases[i],
                                     (int64_t)i, &st->out, probed, &cost, err,
                                     sizeof err)) {
                say(h, 1, "%s", err);
                rc = 1;
            }
            st->wait_left_s -= allowed - hold;
            for (int k = 0; k < POINT_PROBES && !st->dev->cuda; ++k)
                note_probe(&st->ceiling, &st->probes, &st->full, &probed[k]);
        }
        cost.total_s = opcost_seconds_since(t0);
        opcost_budget_point_done(st->budget.b, i, &cost);
        opcost_journal_add(st->journal, st->out.rows, st->out.nrows,
                           st->out.samples, st->out.nsamples);
        if (h && h->progress) {
            const double elapsed = opcost_seconds_since(st->run_start);
            h->progress(h->ctx, i + 1, cl->n, elapsed,
                        opcost_budget_left_s(st->budget.b, elapsed));
        }
    }
    if (distribution)
        opcost_nvtx_pop(OPCOST_NVTX_DISTRIBUTION);
    opcost_nvtx_pop(OPCOST_NVTX_RUN);
    return rc;
}

/* Phase 3 (after a complete run): the run-to-run noise from points
 * measured again, the ceilings probed once more and every row divided by
 * the best of all probes, each interval widened to the noise. */
static void settle_rows(run_state *st, int complete)
{
    const opcost_plan *plan = st->plan;
    run_out *out = &st->out;
    opcost_run_settled s = {.noise = NAN, .ceiling = &st->ceiling};
    const size_t replicates =
        opcost_budget_replicates(st->budget.b, replicate_count(plan, st->cl.n),
                                 opcost_seconds_since(st->run_start));
    if (complete && !opcost_interrupted() && replicates > 0) {
        const int64_t t0 = opcost_now_ns();
        opcost_nvtx_push(OPCOST_NVTX_RUN, "run noise");
        s.noise_pairs =
            measure_run_noise(&st->ctx, &st->cl, st->budget.b, replicates, out,
                              &s.noise_points, &s.noise);
        opcost_nvtx_pop(OPCOST_NVTX_RUN);
        st->replicates_s = opcost_seconds_since(t0);
    }
    if (!st->dev->cuda) {
        if (!opcost_interrupted())
            probe_again(plan, st->hooks, &st->ceiling, &st->full);
        for (size_t r = 0; r < out->nrows; ++r) {
            opcost_result *row = &out->rows[r];
            /* the mix its point chose (an in-place path's: in place) */
            point_set_ceiling(row, &st->ceiling, 0,
                              strstr(row->ceiling_kind, "fused_in_place") !=
                                  NULL);
            point_row_settle_state(row, st->full.gbps);
            s.classed_rows += row->probe_state[0] != '\0';
            s.reduced_rows += row->probe_state[0] &&
                              strcmp(row->probe_state,
                                     opcost_bw_state_name(OPCOST_BW_FULL)) != 0;
        }
        s.waited_s = plan->full_bandwidth_wait_s - st->wait_left_s;
        s.full_gbps = st->full.gbps;
        s.recalled_gbps = st->full.recalled;
        if (complete)
            opcost_host_bandwidth_remember(plan->threads, st->full.own);
        s.cpu_ceilings = 1;
        s.probes = st->probes.n;
        s.probe_lo_gbps = st->probes.lo;
        s.probe_hi_gbps = st->probes.hi;
    }
    if (s.noise_points)
        apply_run_noise(out, s.noise);
    if (st->measurer.settle)
        st->measurer.settle(st->measurer.ctx, out);
    opcost_budget_finish(st->budget.b, st->replicates_s,
                         opcost_seconds_since(st->run_start));
    opcost_budget_summary budget;
    opcost_budget_summarize(st->budget.b, &budget);
    s.budget = &budget;
    if (st->hooks && st->hooks->settled)
        st->hooks->settled(st->hooks->ctx, &s);
}

/* Phase 4: the results and their samples written (never lost: the
 * temporary directory when the destination fails), the journal closed.
 * Returns rc, or 1 when writing failed. */
static int write_run(run_state *st, int rc)
{
    run_out *out = &st->out;
    const opcost_run_hooks *h = st->hooks;
    char err[2048];
    opcost_journal_hold(st->journal);
    /* the CSV and its sidecar as one pair (a full disk leaves the files at
     * --out as they were); failing that, the pair in /tmp; failing that,
     * the journal, which holds every measured row and sample, kept */
    int written = opcost_run_files_write(st->out_path, out->rows, out->nrows,
                                         out->samples, out->nsamples, err,
                                         sizeof err) == 0;
    if (!written) {
        say(h, 1, "%s", err);
        rc = 1;
        char fallback[4096];
        snprintf(fallback, sizeof fallback, "/tmp/opcost-%s.csv",
                 st->host.run_id);
        written = opcost_run_files_write(fallback, out->rows, out->nrows,
                                         out->samples, out->nsamples, err,
                                         sizeof err) == 0;
        if (written) {
            snprintf(st->out_path, sizeof st->out_path, "%s", fallback);
            say(h, 1, "wrote %s and its sidecar instead", fallback);
        } else {
            say(h, 1, "%s", err);
        }
    }
    if (written) {
        opcost_journal_close(st->journal);
    } else {
        char kept[4300];
        if (opcost_journal_keep(st->journal, kept, sizeof kept) == 0)
            say(h, 1,
                "the measured rows and samples are kept in %s and its "
                "sidecar (as each point finished: without the run's "
                "settling)",
                kept);
        else
            say(h, 1, "the measured rows and samples are kept in %s and %s",
                kept, "the journal of its sidecar");
    }
    st->journal = NULL;
    if (written && h && h->finished)
        h->finished(h->ctx, out->rows, out->nrows, st->out_path,
                    opcost_seconds_since(st->run_start));
    return rc;
}

static int measure_here(void *ctx, const point_context *pc,
                        const opcost_case *c, int64_t point_seed, run_out *out,
                        point_probe *probe, opcost_point_cost *cost, char *err,
                        size_t len)
{
    (void)ctx;
    return point_measure(pc, c, point_seed, out, probe, cost, err, len);
}

int opcost_pipeline_run(const opcost_plan *plan, run_device *dev,
                        const opcost_run_hooks *hooks,
                        const opcost_point_measurer *measurer)
{
    static const opcost_point_measurer here = {NULL, measure_here, NULL, "", 1};
    run_state *st = calloc(1, sizeof *st);
    if (!st) {
        say(hooks, 1, "out of memory");
        return 1;
    }
    st->run_start = opcost_now_ns();
    st->lock_fd = -1;
    st->plan = plan;
    st->dev = dev;
    st->hooks = hooks;
    st->measurer = measurer ? *measurer : here;
    st->pilots = measurer == NULL;
    int rc = open_run(st);
    if (rc == 0)
        rc = open_budget(st, st->measurer.sides > 0 ? st->measurer.sides : 1);
    if (rc == 0) {
        rc = measure_points(st);
        settle_rows(st, rc == 0);
        rc = write_run(st, rc) || opcost_interrupted();
    }
    if (st->claim[0])
        unlink(st->claim);
    opcost_output_unlock(st->locked, st->lock_fd);
    opcost_run_budget_close(&st->budget);
    free(st->out.rows);
    free(st->out.samples);
    free_cases(&st->cl);
    free(st);
    return rc;
}
