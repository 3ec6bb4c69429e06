#define _POSIX_C_SOURCE 200809L
#include "run.h"
#include "attribution.h"
#include "attribution_pass.h"
#include "ceiling.h"
#include "cupti_tracer.h"
#include "hostinfo.h"
#include "journal.h"
#include "nvml_clock.h"
#include "nvtx_ranges.h"
#include "outpath.h"
#include "report.h"
#include "results_csv.h"
#include "rowops_bridge.h"
#include "stats.h"
#include "timer.h"
#include "timing.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

/* The device a run measures on: the CPU, or the GPU it found. */
typedef struct run_device {
    int cuda;
    rowops_bridge_cuda_device gpu;
    size_t rotate_bytes; /* inputs rotate over twice this: LLC, or L2 */
    /* GPU: the attribution pass's tracer (NULL: unavailable, why says
     * why) and the clock reader (NULL: unavailable) */
    opcost_cupti *cupti;
    char cupti_why[256];
    opcost_nvml *nvml;
} run_device;

/* Growable arrays of rows and samples. */
typedef struct run_out {
    opcost_result *rows;
    size_t nrows, caprows;
    opcost_sample *samples;
    size_t nsamples, capsamples;
} run_out;

static opcost_result *new_row(run_out *o)
{
    if (o->nrows == o->caprows) {
        const size_t cap = o->caprows ? 2 * o->caprows : 64;
        opcost_result *r = realloc(o->rows, cap * sizeof *r);
        if (!r)
            return NULL;
        o->rows = r;
        o->caprows = cap;
    }
    return &o->rows[o->nrows++];
}

static int add_samples(run_out *o, int64_t point, int64_t rep, const double *x,
                       size_t n)
{
    if (o->nsamples + n > o->capsamples) {
        size_t cap = o->capsamples ? o->capsamples : 4096;
        while (cap < o->nsamples + n)
            cap *= 2;
        opcost_sample *s = realloc(o->samples, cap * sizeof *s);
        if (!s)
            return -1;
        o->samples = s;
        o->capsamples = cap;
    }
    for (size_t i = 0; i < n; ++i)
        o->samples[o->nsamples++] =
            (opcost_sample){point, rep, (int64_t)i, x[i]};
    return 0;
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

static int load_cases(const opcost_config *cfg, const run_device *dev,
                      case_list *cl, char *err, size_t len)
{
    memset(cl, 0, sizeof *cl);
    cl->sets = calloc((size_t)cfg->nshapes, sizeof *cl->sets);
    if (!cl->sets)
        return -1;
    size_t total = 0;
    for (int i = 0; i < cfg->nshapes; ++i) {
        char path[4096], e[1024];
        if (opcost_shape_set_resolve(cfg->shapes[i], cfg->shapes_dir, path,
                                     sizeof path, e, sizeof e) ||
            opcost_shape_set_load(path, &cl->sets[i], e, sizeof e)) {
            snprintf(err, len, "--shapes: %s", e);
            return -1;
        }
        cl->nsets = i + 1;
        total += cl->sets[i].count;
    }
    cl->cases = calloc(total ? total : 1, sizeof *cl->cases);
    if (!cl->cases)
        return -1;
    const size_t llc =
        dev->cuda ? (size_t)dev->gpu.l2_bytes : opcost_llc_bytes(NULL, 0);
    const double avail = available_bytes();
    size_t dtype_ok = 0; /* rows of the selected dtypes */
    for (int i = 0; i < cl->nsets; ++i) {
        const opcost_shape_set *set = &cl->sets[i];
        char *keep = calloc(set->count, 1);
        if (!keep)
            return -1;
        if (cfg->quick)
            quick_keeps(set, keep);
        for (size_t k = 0; k < set->count; ++k) {
            const opcost_shape *s = &set->rows[k];
            if (cfg->dtype_mask && !(cfg->dtype_mask & (1u << s->dtype)))
                continue;
            ++dtype_ok;
            if (cfg->quick && !keep[k])
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
            const double need = opcost_workload_bytes(c, llc, cfg->cold);
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
                 cfg->dtype_mask ? " (of the selected dtypes)" : "");
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

/* ---- one point */

typedef struct path_slot {
    opcost_path_run run;
    size_t row_index; /* into out->rows (which may move as it grows) */
    opcost_timer_state timer;
    int timing;         /* verified and warmed up */
    double *rep_median; /* each repetition's median */
    int reps;
} path_slot;

/* Repetitions beyond cfg->reps, for the slots whose repetitions disagree:
 * up to OPCOST_EXTRA_REPS more while the interval of the next run's median
 * (opcost_reps_ci95_rel) is wider than OPCOST_REPS_AGREE_REL. */
#define OPCOST_REPS_AGREE_REL 0.05
#define OPCOST_EXTRA_REPS 3

static double slot_ci(const path_slot *s)
{
    return opcost_reps_ci95_rel(s->rep_median, (size_t)s->reps);
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The variant slot v of a path times: the selected one, or "auto" for a
 * path that takes no variants. */
static const opcost_variant *slot_variant(const opcost_config *cfg,
                                          const opcost_path *path, int v)
{
    return path->takes_variants ? cfg->variants[v] : &opcost_variant_auto;
}

/* What every row of a point says of the run, the point, its path and
 * variant (w: the point's workload, NULL where none was made). */
static void fill_identity(opcost_result *row, const opcost_config *cfg,
                          const opcost_hostinfo *host, const opcost_case *c,
                          const opcost_workload *w, const opcost_path *path,
                          const opcost_variant *variant)
{
    opcost_result_init(row);
    snprintf(row->path, sizeof row->path, "%s", path->name);
    snprintf(row->variant, sizeof row->variant, "%s", variant->name);
    snprintf(row->run_id, sizeof row->run_id, "%s", host->run_id);
    snprintf(row->timestamp_utc, sizeof row->timestamp_utc, "%s",
             host->timestamp_utc);
    snprintf(row->git_sha, sizeof row->git_sha, "%s", host->git_sha);
    snprintf(row->host, sizeof row->host, "%s", host->host);
    snprintf(row->cpu, sizeof row->cpu, "%s", host->cpu);
    snprintf(row->gpu, sizeof row->gpu, "%s", host->gpu);
    snprintf(row->torch_version, sizeof row->torch_version, "%s",
             rowops_bridge_torch_version());
    snprintf(row->device, sizeof row->device, "%s", cfg->cuda ? "cuda" : "cpu");
    row->threads = cfg->threads;
    snprintf(row->distribution, sizeof row->distribution, "%s",
             c->distribution);
    snprintf(row->op, sizeof row->op, "%s", rowops_op_name(c->op));
    row->B = c->B;
    row->N = c->N;
    snprintf(row->dtype, sizeof row->dtype, "%s", rowops_dtype_name(c->dtype));
    snprintf(row->weight_dtype, sizeof row->weight_dtype, "%s",
             c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM
                 ? rowops_dtype_name(c->weight_dtype)
                 : "");
    snprintf(row->layout, sizeof row->layout, "%s",
             opcost_layout_name(c->layout));
    snprintf(row->freq, sizeof row->freq, "%s", c->freq_text);
    row->cache_state = w ? w->cache : OPCOST_CACHE_WARM;
    row->bytes = opcost_case_bytes(c);
}

static void set_status(opcost_result *row, opcost_status s, const char *note)
{
    row->status = s;
    snprintf(row->note, sizeof row->note, "%s", note);
}

/* Verifies a prepared path on set 0 with poisoned outputs; *call_us: how
 * long that call took. */
static int verify_path(opcost_path_run *r, char *why, size_t len,
                       double *call_us)
{
    opcost_workload_poison_outputs(r->w);
    rowops_bridge_poison_outputs(1);
    const int64_t t0 = opcost_now_ns();
    int rc = r->path->run(r, 0, why, len);
    if (rc == 0 && r->w->cuda)
        rc = rowops_bridge_cuda_sync(why, len);
    *call_us = (double)(opcost_now_ns() - t0) / 1e3;
    if (rc == 0)
        rc = r->path->verify(r, 0, why, len);
    rowops_bridge_poison_outputs(0);
    return rc;
}

/* The ceiling a row's traffic is bounded by (bench/measure/ceiling.h): its op's
 * mix at the level its working set (the bytes one call touches) falls
 * into, DRAM when cold; on a GPU the device-to-device copy. Sets
 * ceiling_gbps, ceiling_kind, working_set_bytes and frac_of_peak. */
static void set_ceiling(opcost_result *row, const opcost_ceiling *c, int gpu)
{
    row->working_set_bytes = row->bytes;
    if (gpu) {
        row->ceiling_gbps = c->best_gbps;
        snprintf(row->ceiling_kind, sizeof row->ceiling_kind, "dram d2d_copy");
    } else {
        const opcost_mix mix = strcmp(row->op, "rms_norm_rows")
                                   ? OPCOST_MIX_FUSED
                                   : OPCOST_MIX_ROWS;
        opcost_level level = OPCOST_LEVEL_DRAM;
        const opcost_mix_ceiling *m =
            row->bytes == OPCOST_INT_NA
                ? NULL
                : opcost_ceiling_for(c, mix,
                                     row->cache_state == OPCOST_CACHE_COLD,
                                     (double)row->bytes, &level);
        row->ceiling_gbps = m ? m->gbps : NAN;
        row->ceiling_kind[0] = '\0';
        if (m)
            snprintf(row->ceiling_kind, sizeof row->ceiling_kind, "%s %s %s",
                     opcost_level_name(level), opcost_mix_name(mix),
                     m->gbps == m->nt_gbps ? "nt" : "plain");
    }
    row->frac_of_peak = row->gbps / row->ceiling_gbps;
}

static int stop_rule_for(opcost_stop_rule *rule, const opcost_config *cfg,
                         double call_us, int batch)
{
    char e[128];
    const double sample_us = call_us * batch;
    /* slow calls: a time budget, at least one sample per repetition;
     * fast ones: the noise target within the budget */
    if (sample_us * 6 > cfg->rep_budget_s * 1e6)
        return opcost_stop_budget(rule, cfg->rep_budget_s, 1, e, sizeof e);
    return opcost_stop_noise(rule, cfg->noise_target, cfg->rep_budget_s, 6,
                             OPCOST_NOISE_CHECK_EVERY_DEFAULT, e, sizeof e);
}

static double median_of(const double *x, size_t n)
{
    opcost_summary s;
    char e[64];
    return n && !opcost_summarize(x, n, &s, e, sizeof e) ? s.median : NAN;
}

static void summarize_row(opcost_result *row, const path_slot *slot)
{
    const opcost_timer_state *t = &slot->timer;
    opcost_summary s;
    char e[128];
    if (opcost_summarize(t->samples, t->n, &s, e, sizeof e)) {
        set_status(row, OPCOST_STATUS_ERROR, e);
        return;
    }
    row->reps = slot->reps;
    row->n_samples = (int64_t)s.n;
    row->median_us = s.median;
    row->min_us = s.min;
    row->p90_us = s.p90;
    row->mean_us = s.mean;
    row->stddev_us = s.stddev;
    /* the interval a run like this one's median falls in, from the
     * repetitions (apply_run_noise widens it to the run's noise at the
     * end); the pooled samples' own interval beside it */
    row->ci95_rel = row->ci95_reps_rel = slot_ci(slot);
    row->ci95_pooled_rel = s.ci95_rel;
    if (t->device_samples)
        row->device_us = median_of(t->device_samples, t->n);
    row->gbps = (double)row->bytes / (s.median * 1e-6) / 1e9;
}

static void append_note(opcost_result *row, const char *text)
{
    const size_t u = strlen(row->note);
    snprintf(row->note + u, sizeof row->note - u, "%s%s", u ? "; " : "", text);
}

/* The median of the path's layout conversions timed alone (differential
 * attribution): 0 when the layout needs none, NAN when they fail. */
static double conversion_median(const opcost_config *cfg, path_slot *s)
{
    if (!s->run.path->convert)
        return 0;
    char e[256];
    const int rc = s->run.path->convert(&s->run, 0, e, sizeof e);
    if (rc == 1)
        return 0; /* this layout needs no conversion */
    double us = NAN;
    opcost_timer_state t;
    memset(&t, 0, sizeof t); /* freed below even when nothing was timed */
    opcost_stop_rule r2;
    memset(&r2, 0, sizeof r2);
    opcost_nvtx_push(OPCOST_NVTX_PHASE, "convert");
    if (rc == 0 && opcost_timing_begin(&t, &s->run, OPCOST_TIME_CONVERT,
                                       cfg->target_sample_us, 0, 0) == 0) {
        stop_rule_for(&r2, cfg, t.call_us, t.batch);
        for (int rep = 0; rep < 3; ++rep)
            if (opcost_timing_repetition(&t, &r2) < 0)
                break;
        us = median_of(t.samples, t.n);
    }
    opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    opcost_timing_end(&t);
    opcost_stop_free(&r2);
    return us;
}

/* The row's parts: measured in an attribution pass with the tracer, or,
 * where it cannot run, differential (the kernel path's median and the
 * conversions timed alone), with the reason in the note. */
static void attribute_row(const opcost_config *cfg, const run_device *dev,
                          path_slot *s, opcost_result *row,
                          double kernel_median)
{
    opcost_trace_source gpu;
    const opcost_trace_source *src = &opcost_trace_record_function;
    if (dev->cuda) {
        gpu = opcost_trace_cupti(dev->cupti);
        src = dev->cupti ? &gpu : NULL;
    }
    opcost_attributed a;
    char why[256];
    snprintf(why, sizeof why, "%s", dev->cupti_why);
    opcost_parts p;
    if (src && opcost_attribution_pass(&s->run, src,
                                       opcost_attribution_calls(row->median_us),
                                       &s->timer.next_set, row->median_us, &a,
                                       why, sizeof why) == 0) {
        p = a.parts;
        snprintf(row->attribution_source, sizeof row->attribution_source, "%s",
                 opcost_attribution_source_name(src->kind));
        row->tracer_overhead = a.traced_median_us / row->median_us;
    } else {
        const int is_kernel = s->run.path->takes_variants;
        p = opcost_attribute_differential(
            row->median_us, is_kernel ? row->median_us : kernel_median,
            conversion_median(cfg, s));
        snprintf(
            row->attribution_source, sizeof row->attribution_source, "%s",
            opcost_attribution_source_name(OPCOST_ATTRIBUTION_DIFFERENTIAL));
        char note[400];
        snprintf(note, sizeof note, "%s: differential attribution", why);
        append_note(row, note);
    }
    row->kernel_us = p.kernel_us;
    row->other_kernel_us = p.other_kernel_us;
    row->conversion_us = p.conversion_us;
    row->launch_us = p.launch_us;
    row->dispatch_us = p.dispatch_us;
    row->idle_us = p.idle_us;
}

/* Whether measure_point gives (path, variant) a row: a variant of the
 * other device is left out under --variants all. */
static int has_row(const opcost_config *cfg, const opcost_path *path, int v)
{
    return !path->takes_variants || !cfg->variants_all ||
           opcost_config_variant_runs(cfg, cfg->variants[v]);
}

/* GPU: the SM clock and its event (throttle) reasons after the point was
 * timed, on every timed row of it. */
static void record_gpu_clock(const run_device *dev, run_out *out,
                             const path_slot *slots, int nslots)
{
    opcost_gpu_clock clk;
    char e[256];
    if (!dev->nvml || opcost_nvml_read(dev->nvml, (unsigned)dev->gpu.index,
                                       &clk, e, sizeof e))
        return;
    char reasons[OPCOST_TEXT_MAX] = "";
    if (clk.reasons_known)
        opcost_nvml_reasons_text(clk.reasons, reasons, sizeof reasons);
    for (int i = 0; i < nslots; ++i) {
        opcost_result *row = &out->rows[slots[i].row_index];
        if (!slots[i].timing)
            continue;
        row->sm_clock_mhz = clk.sm_mhz;
        snprintf(row->throttle_reasons, sizeof row->throttle_reasons, "%s",
                 reasons);
    }
}

static int measure_point(const opcost_config *cfg, const opcost_hostinfo *host,
                         const run_device *dev, const opcost_case *c,
                         const opcost_ceiling *ceiling, int64_t point_seed,
                         run_out *out, char *err, size_t len)
{
    opcost_workload w;
    char why[1024];
    opcost_nvtx_pushf(OPCOST_NVTX_SHAPE, "%s B=%lld N=%lld %s %s",
                      rowops_op_name(c->op), (long long)c->B, (long long)c->N,
                      rowops_dtype_name(c->dtype),
                      opcost_layout_name(c->layout));
    int made =
        opcost_workload_make(&w, c, dev->rotate_bytes, cfg->cold,
                             cfg->seed + (uint64_t)point_seed, why, sizeof why);
    if (made == 0 && dev->cuda &&
        opcost_workload_to_device(&w, dev->gpu.arch, why, sizeof why)) {
        opcost_workload_free(&w);
        made = -1;
    }
    /* one slot per (path, variant) */
    path_slot slots[OPCOST_MAX_SELECTED * OPCOST_MAX_SELECTED];
    int nslots = 0;
    for (int p = 0; p < cfg->npaths; ++p) {
        const opcost_path *path = cfg->paths[p];
        const int nv = path->takes_variants ? cfg->nvariants : 1;
        for (int v = 0; v < nv; ++v) {
            if (!has_row(cfg, path, v))
                continue;
            path_slot *s = &slots[nslots++];
            memset(s, 0, sizeof *s);
            s->rep_median = malloc((size_t)(cfg->reps + OPCOST_EXTRA_REPS) *
                                   sizeof(double));
            if (!s->rep_median) {
                snprintf(err, len, "out of memory (repetitions)");
                opcost_nvtx_pop(OPCOST_NVTX_SHAPE);
                return -1;
            }
            s->run.path = path;
            s->run.variant = slot_variant(cfg, path, v);
            s->run.w = &w;
            opcost_result *row = new_row(out);
            if (!row) {
                snprintf(err, len, "out of memory (results)");
                opcost_nvtx_pop(OPCOST_NVTX_SHAPE);
                return -1;
            }
            s->row_index = out->nrows - 1;
            fill_identity(row, cfg, host, c, made == 0 ? &w : NULL, path,
                          s->run.variant);
            if (made) {
                set_status(row, OPCOST_STATUS_ERROR, why);
                continue;
            }
            if (!opcost_config_path_runs(cfg, path)) {
                set_status(row, OPCOST_STATUS_SKIPPED,
                           dev->cuda ? "this path runs on the CPU only"
                                     : "this path runs on a GPU only "
                                       "(--device cuda)");
                continue;
            }
            opcost_nvtx_push_path(path->name, s->run.variant->name);
            const int prep = path->prepare(&s->run, why, sizeof why);
            snprintf(row->dispatch_path, sizeof row->dispatch_path, "%s",
                     s->run.dispatch_path);
            if (prep) {
                set_status(
                    row, prep > 0 ? OPCOST_STATUS_SKIPPED : OPCOST_STATUS_ERROR,
                    why);
                opcost_nvtx_pop(OPCOST_NVTX_PATH);
                continue;
            }
            double first_us;
            opcost_nvtx_push(OPCOST_NVTX_PHASE, "verify");
            const int ver = verify_path(&s->run, why, sizeof why, &first_us);
            opcost_nvtx_pop(OPCOST_NVTX_PHASE);
            snprintf(row->dispatch_path, sizeof row->dispatch_path, "%s",
                     s->run.dispatch_path);
            if (ver) {
                set_status(row,
                           ver > 0 ? OPCOST_STATUS_WRONG : OPCOST_STATUS_ERROR,
                           why);
                opcost_nvtx_pop(OPCOST_NVTX_PATH);
                continue;
            }
            const double warmup = cfg->quick ? 0.001 : 0.005;
            if (opcost_timing_begin(&s->timer, &s->run, OPCOST_TIME_RUN,
                                    cfg->target_sample_us, warmup, first_us)) {
                set_status(row, OPCOST_STATUS_ERROR, s->timer.error);
                opcost_nvtx_pop(OPCOST_NVTX_PATH);
                continue;
            }
            s->timing = 1;
            opcost_nvtx_pop(OPCOST_NVTX_PATH);
        }
    }
    /* repetitions, the path order shuffled each time */
    uint64_t rng =
        (cfg->seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)point_seed;
    int order[OPCOST_MAX_SELECTED * OPCOST_MAX_SELECTED];
    for (int i = 0; i < nslots; ++i)
        order[i] = i;
    opcost_stop_rule rule;
    memset(&rule, 0, sizeof rule);
    const int max_reps = cfg->reps + OPCOST_EXTRA_REPS;
    for (int rep = 0; rep < max_reps; ++rep) {
        /* past cfg->reps, only the slots whose repetitions disagree */
        int wanted = 0;
        for (int i = 0; i < nslots; ++i)
            wanted |= slots[i].timing &&
                      (rep < cfg->reps ||
                       !(slot_ci(&slots[i]) <= OPCOST_REPS_AGREE_REL));
        if (!wanted)
            break;
        for (int i = nslots - 1; i > 0; --i) {
            const int j = (int)(rng_next(&rng) % (uint64_t)(i + 1));
            const int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < nslots; ++i) {
            path_slot *s = &slots[order[i]];
            if (!s->timing ||
                (rep >= cfg->reps && slot_ci(s) <= OPCOST_REPS_AGREE_REL))
                continue;
            stop_rule_for(&rule, cfg, s->timer.call_us, s->timer.batch);
            const size_t before = s->timer.n;
            opcost_nvtx_push_path(s->run.path->name, s->run.variant->name);
            const long got = opcost_timing_repetition(&s->timer, &rule);
            opcost_nvtx_pop(OPCOST_NVTX_PATH);
            if (got < 0) {
                set_status(&out->rows[s->row_index], OPCOST_STATUS_ERROR,
                           s->timer.error);
                s->timing = 0;
                continue;
            }
            s->rep_median[s->reps++] =
                median_of(s->timer.samples + before, s->timer.n - before);
            if (add_samples(out, (int64_t)s->row_index, s->reps - 1,
                            s->timer.samples + before, s->timer.n - before)) {
                snprintf(err, len, "out of memory (samples)");
                opcost_nvtx_pop(OPCOST_NVTX_SHAPE);
                return -1;
            }
        }
    }
    opcost_stop_free(&rule);
    /* summaries; the kernel path's median for the differential fallback */
    double kernel_median = NAN;
    for (int i = 0; i < nslots; ++i) {
        path_slot *s = &slots[i];
        if (s->timing)
            summarize_row(&out->rows[s->row_index], s);
        set_ceiling(&out->rows[s->row_index], ceiling, dev->cuda);
        if (s->timing && s->run.path->takes_variants &&
            (isnan(kernel_median) || s->run.variant == &opcost_variant_auto))
            kernel_median = out->rows[s->row_index].median_us;
    }
    record_gpu_clock(dev, out, slots, nslots);
    for (int i = 0; i < nslots; ++i) {
        path_slot *s = &slots[i];
        opcost_result *row = &out->rows[s->row_index];
        if (s->timing && row->status == OPCOST_STATUS_OK) {
            opcost_nvtx_push_path(s->run.path->name, s->run.variant->name);
            opcost_nvtx_push(OPCOST_NVTX_PHASE, "attribute");
            attribute_row(cfg, dev, s, row, kernel_median);
            opcost_nvtx_pop(OPCOST_NVTX_PHASE);
            opcost_nvtx_pop(OPCOST_NVTX_PATH);
        }
        if (s->run.priv && s->run.path->compile_ms)
            row->compile_ms = s->run.path->compile_ms(&s->run);
        if (s->run.priv && s->run.path->annotate &&
            row->status == OPCOST_STATUS_OK)
            s->run.path->annotate(&s->run, row->note, sizeof row->note);
        if (s->run.priv)
            s->run.path->release(&s->run);
        opcost_timing_end(&s->timer);
        free(s->rep_median);
    }
    if (made == 0)
        opcost_workload_free(&w);
    opcost_nvtx_pop(OPCOST_NVTX_SHAPE);
    return 0;
}

/* How many points the run measures again (--replicates; auto: a tenth of
 * them, 2 to 12, never more than there are). */
static size_t replicate_count(const opcost_config *cfg, size_t npoints)
{
    size_t k =
        cfg->replicates >= 0 ? (size_t)cfg->replicates : (npoints + 9) / 10;
    if (cfg->replicates < 0)
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
static size_t measure_run_noise(const opcost_config *cfg,
                                const opcost_hostinfo *host,
                                const run_device *dev, const case_list *cl,
                                const opcost_ceiling *ceiling, run_out *out,
                                size_t *points, double *noise)
{
    *noise = NAN;
    *points = 0;
    const size_t k = replicate_count(cfg, cl->n);
    run_out again;
    memset(&again, 0, sizeof again);
    char err[1024];
    for (size_t j = 0; j < k && !opcost_interrupted(); ++j) {
        const size_t i =
            (size_t)(((double)j + 0.5) * (double)cl->n / (double)k);
        opcost_nvtx_push(OPCOST_NVTX_DISTRIBUTION, cl->cases[i].distribution);
        const int failed = measure_point(cfg, host, dev, &cl->cases[i], ceiling,
                                         (int64_t)i, &again, err, sizeof err);
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

/* The run's device: --device cuda needs a usable GPU (refused with the
 * reason where there is none); without --device, a GPU found is used. */
static int pick_device(opcost_config *cfg, run_device *dev, char *err,
                       size_t len)
{
    memset(dev, 0, sizeof *dev);
    if (cfg->device_given && !cfg->cuda)
        return 0;
    char why[512];
    const int found = rowops_bridge_cuda_info(&dev->gpu, why, sizeof why) == 0;
    if (cfg->cuda && !found) {
        snprintf(err, len, "--device cuda: no usable CUDA device: %s", why);
        return -1;
    }
    if (found)
        opcost_config_set_device(cfg, 1);
    dev->cuda = found;
    if (!found)
        return 0;
    /* CUPTI and torch.profiler never at once: refused while it records */
    const opcost_cupti_options opt = {profiler_active, NULL, NULL};
    if (opcost_cupti_open(&dev->cupti, &opt, dev->cupti_why,
                          sizeof dev->cupti_why)) {
        dev->cupti = NULL;
        fprintf(stderr,
                "opcost run: %s: attribution falls back to the "
                "differential split\n",
                dev->cupti_why);
    }
    if (opcost_nvml_open(&dev->nvml, NULL, why, sizeof why)) {
        dev->nvml = NULL;
        fprintf(stderr,
                "opcost run: %s: sm_clock_mhz and throttle_reasons "
                "stay empty\n",
                why);
    }
    return 0;
}

static void close_device(run_device *dev)
{
    opcost_cupti_close(dev->cupti);
    opcost_nvml_close(dev->nvml);
    dev->cupti = NULL;
    dev->nvml = NULL;
}

/* The ceiling the rows are compared with: the CPU's STREAM probe, or a
 * large device-to-device copy on the GPU (bytes read + written, 16 times
 * the L2, at least 1 GiB, best of 9). */
static int measure_ceiling(const opcost_config *cfg, const run_device *dev,
                           opcost_ceiling *c, char *err, size_t len)
{
    if (!dev->cuda)
        return opcost_ceiling_measure(cfg->threads, 0, c, err, len);
    memset(c, 0, sizeof *c);
    size_t bytes = (size_t)(16 * dev->gpu.l2_bytes);
    bytes = bytes < ((size_t)1 << 30) ? (size_t)1 << 30 : bytes;
    if ((double)bytes * 2 > 0.5 * dev->gpu.free_bytes)
        bytes = (size_t)(0.25 * dev->gpu.free_bytes);
    c->llc_bytes = (size_t)dev->gpu.l2_bytes;
    snprintf(c->llc_source, sizeof c->llc_source, "L2 of %s", dev->gpu.name);
    c->array_bytes = bytes;
    c->trials = 9;
    c->best_kernel = "d2d_copy";
    return rowops_bridge_cuda_copy_gbps(bytes, c->trials, &c->best_gbps, err,
                                        len);
}

/* The CPU ceilings are probed again every OPCOST_PROBE_EVERY points and
 * at the end; each row divides by the best of all probes. The host's
 * bandwidth moves under a run (other tenants: here 41.5 GB/s at one run's
 * start, 67.3 at its end), and a row measured in a fast moment beat
 * probes taken only at the start and the end (frac_of_peak 1.06). */
#define OPCOST_PROBE_EVERY 8

typedef struct probe_range {
    double lo, hi; /* the DRAM fused figure's range over the probes */
    int n;
} probe_range;

static void probe_again(const opcost_config *cfg, opcost_ceiling *c,
                        probe_range *pr, const char *when)
{
    opcost_ceiling again;
    char err[512];
    if (opcost_ceiling_measure(cfg->threads, 0, &again, err, sizeof err)) {
        fprintf(stderr, "opcost run: ceiling probe %s: %s\n", when, err);
        return;
    }
    const double g = again.mix[OPCOST_LEVEL_DRAM][OPCOST_MIX_FUSED].gbps;
    pr->lo = g < pr->lo ? g : pr->lo;
    pr->hi = g > pr->hi ? g : pr->hi;
    ++pr->n;
    opcost_ceiling_merge(c, &again);
}

/* The run on its settled device: every point, then the results. */
static int run_on(const opcost_config *cfg, run_device *dev)
{
    char err[2048];
    opcost_hostinfo host;
    opcost_hostinfo_get(&host, OPCOST_SOURCE_DIR);
    if (dev->cuda)
        snprintf(host.gpu, sizeof host.gpu, "%s", dev->gpu.name);
    if (rowops_bridge_set_threads(cfg->threads, err, sizeof err)) {
        fprintf(stderr, "opcost run: --threads: %s\n", err);
        return 1;
    }
    case_list cl;
    if (load_cases(cfg, dev, &cl, err, sizeof err)) {
        fprintf(stderr, "opcost run: %s\n", err);
        free_cases(&cl);
        return 2; /* bad input */
    }
    char out_path[4096];
    if (cfg->out)
        snprintf(out_path, sizeof out_path, "%s", cfg->out);
    else
        snprintf(out_path, sizeof out_path, "%s/%s.csv", cfg->results_dir,
                 host.run_id);
    /* Refuse an unwritable destination now, not after the run: the
     * results file and its sidecar, regular files or new names only. */
    char side[4096];
    const char *what = cfg->out ? "--out" : "the results file";
    if (opcost_samples_path(out_path, side, sizeof side, err, sizeof err) ||
        opcost_output_path_check(what, out_path, err, sizeof err) ||
        opcost_output_path_check(what, side, err, sizeof err)) {
        fprintf(stderr, "opcost run: %s\n", err);
        free_cases(&cl);
        return 2;
    }
    opcost_ceiling ceiling;
    if (measure_ceiling(cfg, dev, &ceiling, err, sizeof err)) {
        fprintf(stderr, "opcost run: ceiling probe: %s\n", err);
        free_cases(&cl);
        return 1;
    }
    dev->rotate_bytes = ceiling.llc_bytes;
    const double g0 = ceiling.mix[OPCOST_LEVEL_DRAM][OPCOST_MIX_FUSED].gbps;
    probe_range probes = {g0, g0, 1};
    opcost_report_header(stdout, cfg, &host, &ceiling,
                         dev->cuda ? &dev->gpu : NULL, cl.n, out_path);
    opcost_journal *journal;
    if (opcost_journal_open(&journal, out_path, err, sizeof err)) {
        fprintf(stderr, "opcost run: %s\n", err);
        free_cases(&cl);
        return 2;
    }
    run_out out;
    memset(&out, 0, sizeof out);
    const int64_t start = opcost_now_ns();
    int rc = 0;
    const char *distribution = NULL;
    opcost_nvtx_push(OPCOST_NVTX_RUN, "run");
    for (size_t i = 0; i < cl.n && rc == 0; ++i) {
        if (cl.cases[i].distribution != distribution) {
            if (distribution)
                opcost_nvtx_pop(OPCOST_NVTX_DISTRIBUTION);
            distribution = cl.cases[i].distribution;
            opcost_nvtx_push(OPCOST_NVTX_DISTRIBUTION, distribution);
        }
        if (opcost_interrupted()) {
            /* every remaining point still gets its rows: skipped */
            for (int p = 0; p < cfg->npaths; ++p) {
                const opcost_path *path = cfg->paths[p];
                const int nv = path->takes_variants ? cfg->nvariants : 1;
                for (int v = 0; v < nv; ++v) {
                    if (!has_row(cfg, path, v))
                        continue;
                    opcost_result *row = new_row(&out);
                    if (!row) {
                        rc = 1;
                        break;
                    }
                    fill_identity(row, cfg, &host, &cl.cases[i], NULL, path,
                                  slot_variant(cfg, path, v));
                    set_status(row, OPCOST_STATUS_SKIPPED,
                               "run interrupted (SIGINT or SIGTERM) before "
                               "this point: not measured");
                }
            }
            continue;
        }
        if (measure_point(cfg, &host, dev, &cl.cases[i], &ceiling, (int64_t)i,
                          &out, err, sizeof err)) {
            fprintf(stderr, "\nopcost run: %s\n", err);
            rc = 1;
        }
        opcost_journal_add(journal, out.rows, out.nrows, out.samples,
                           out.nsamples);
        if (!dev->cuda && (i + 1) % OPCOST_PROBE_EVERY == 0 && i + 1 < cl.n &&
            !opcost_interrupted())
            probe_again(cfg, &ceiling, &probes, "during the run");
        opcost_report_progress(stderr, i + 1, cl.n,
                               opcost_seconds_since(start));
    }
    if (distribution)
        opcost_nvtx_pop(OPCOST_NVTX_DISTRIBUTION);
    opcost_nvtx_pop(OPCOST_NVTX_RUN);
    if (isatty(fileno(stderr)))
        fputc('\n', stderr);
    size_t noise_points = 0, noise_pairs = 0;
    double noise = NAN;
    if (rc == 0 && !opcost_interrupted() && replicate_count(cfg, cl.n) > 0) {
        opcost_nvtx_push(OPCOST_NVTX_RUN, "run noise");
        noise_pairs = measure_run_noise(cfg, &host, dev, &cl, &ceiling, &out,
                                        &noise_points, &noise);
        opcost_nvtx_pop(OPCOST_NVTX_RUN);
    }
    /* the ceilings again at the end, then every row divided by the best
     * of all the run's probes */
    if (!dev->cuda) {
        if (!opcost_interrupted())
            probe_again(cfg, &ceiling, &probes, "at the end");
        for (size_t r = 0; r < out.nrows; ++r)
            set_ceiling(&out.rows[r], &ceiling, 0);
        printf("ceilings: %d probes over the run, dram fused from %.1f to "
               "%.1f GB/s (%+.0f %%: the host's drift); rows divide by the "
               "best, dram rows %.1f, fused %.1f GB/s\n",
               probes.n, probes.lo, probes.hi,
               100 * (probes.hi / probes.lo - 1),
               ceiling.mix[OPCOST_LEVEL_DRAM][OPCOST_MIX_ROWS].gbps,
               ceiling.mix[OPCOST_LEVEL_DRAM][OPCOST_MIX_FUSED].gbps);
    }
    if (noise_points) {
        apply_run_noise(&out, noise);
        if (isnan(noise))
            printf("run-to-run noise: not known (%zu rows of %zu points "
                   "measured again, %d needed); intervals from the "
                   "repetitions alone\n",
                   noise_pairs, noise_points, OPCOST_RUN_NOISE_MIN_PAIRS);
        else
            printf("run-to-run noise: 95 %% of the rows of %zu points "
                   "measured again at the end (%zu pairs) moved by less than "
                   "x%.3f (run_noise_rel %.3f); every interval is at least "
                   "+%.1f %%\n",
                   noise_points, noise_pairs, exp(noise), noise,
                   100 * expm1(noise));
    }
    opcost_journal_hold(journal);
    if (opcost_results_write(out_path, out.rows, out.nrows, err, sizeof err)) {
        /* never lose a run: fall back to the temporary directory */
        fprintf(stderr, "opcost run: %s\n", err);
        snprintf(out_path, sizeof out_path, "/tmp/opcost-%s.csv", host.run_id);
        fprintf(stderr, "opcost run: writing %s instead\n", out_path);
        rc = 1;
        if (opcost_results_write(out_path, out.rows, out.nrows, err,
                                 sizeof err))
            fprintf(stderr, "opcost run: %s\n", err);
    }
    if (opcost_samples_write(out_path, out.rows, out.nrows, out.samples,
                             out.nsamples, err, sizeof err)) {
        fprintf(stderr, "opcost run: raw samples: %s\n", err);
        rc = 1;
    }
    const int interrupted = opcost_interrupted();
    opcost_journal_close(journal);
    if (rc == 0 || out.nrows) {
        opcost_report_summary(stdout, out.rows, out.nrows);
        printf("\n%zu rows written to %s (%.1f s)\n", out.nrows, out_path,
               opcost_seconds_since(start));
    }
    free(out.rows);
    free(out.samples);
    free_cases(&cl);
    return rc || interrupted;
}

int opcost_run(const opcost_config *given)
{
    char err[2048];
    opcost_config settled = *given;
    run_device dev;
    if (pick_device(&settled, &dev, err, sizeof err)) {
        fprintf(stderr, "opcost run: %s\n", err);
        return 2;
    }
    const int rc = run_on(&settled, &dev);
    close_device(&dev);
    return rc;
}

int opcost_run_main(int argc, char **argv)
{
    opcost_config cfg;
    char err[1024];
    const int rc = opcost_config_parse(&cfg, argc, argv, err, sizeof err);
    if (rc > 0)
        return 0;
    if (rc < 0) {
        fprintf(stderr, "opcost run: %s\n", err);
        return 2;
    }
    return opcost_run(&cfg);
}
