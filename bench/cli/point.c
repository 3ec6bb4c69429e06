/* One point of a run: its rows and the phases that measure them
 * (point.h). */
#define _POSIX_C_SOURCE 200809L
#include "point.h"
#include "attribution.h"
#include "attribution_pass.h"
#include "nvtx_ranges.h"
#include "stats.h"
#include "timer.h"
#include "timing.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- rows and samples */

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

/* ---- a point's slots */

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
 * variant (w: the point's workload, NULL where none was made). Only
 * point_row calls it. */
static void fill_identity(opcost_result *row, const point_context *ctx,
                          const opcost_case *c, const opcost_workload *w,
                          const opcost_path *path,
                          const opcost_variant *variant)
{
    const opcost_config *cfg = ctx->cfg;
    const opcost_hostinfo *host = ctx->host;
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

/* The ceiling (bench/measure/ceiling.h): the op's mix at the level its
 * working set (the bytes one call touches) falls into, DRAM when cold; on
 * a GPU the device-to-device copy. */
void point_set_ceiling(opcost_result *row, const opcost_ceiling *c, int gpu)
{
    row->working_set_bytes = row->bytes;
    if (gpu) {
        row->ceiling_gbps = c->best_gbps;
        snprintf(row->ceiling_kind, sizeof row->ceiling_kind, "dram d2d_copy");
    } else {
        rowops_op op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
        rowops_op_from_name(row->op, &op); /* a row's op is in the table */
        const opcost_mix mix =
            rowops_op_info_of(op)->fused ? OPCOST_MIX_FUSED : OPCOST_MIX_ROWS;
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

/* Whether a point has a row for (path, variant slot v): a variant of the
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
/* The one function that builds a row: appended to out, with the identity
 * of the run, the point, its path and its variant. NULL: out of memory. */
static opcost_result *point_row(run_out *out, const point_context *ctx,
                                const opcost_case *c, const opcost_workload *w,
                                const opcost_path *path, int v)
{
    opcost_result *row = new_row(out);
    if (row)
        fill_identity(row, ctx, c, w, path, slot_variant(ctx->cfg, path, v));
    return row;
}

/* A point's rows: one per (path, variant slot), in the order of the
 * selection; a variant of the other device is left out (has_row). */
typedef struct row_id {
    const opcost_path *path;
    int v;
} row_id;

static int point_row_ids(const opcost_config *cfg, row_id *ids)
{
    int n = 0;
    for (int p = 0; p < cfg->npaths; ++p) {
        const opcost_path *path = cfg->paths[p];
        const int nv = path->takes_variants ? cfg->nvariants : 1;
        for (int v = 0; v < nv; ++v)
            if (has_row(cfg, path, v))
                ids[n++] = (row_id){path, v};
    }
    return n;
}

int point_skip(const point_context *ctx, const opcost_case *c, const char *note,
               run_out *out)
{
    row_id ids[OPCOST_MAX_SELECTED * OPCOST_MAX_SELECTED];
    const int n = point_row_ids(ctx->cfg, ids);
    for (int i = 0; i < n; ++i) {
        opcost_result *row =
            point_row(out, ctx, c, NULL, ids[i].path, ids[i].v);
        if (!row)
            return -1;
        set_status(row, OPCOST_STATUS_SKIPPED, note);
    }
    return 0;
}

/* ---- the phases of one point */

/* A point being measured: its workload and one slot per row. */
typedef struct point {
    const point_context *ctx;
    const opcost_case *c;
    int64_t seed;
    run_out *out;
    opcost_workload w;
    int made; /* 0: w exists; else why says why not */
    char why[1024];
    path_slot slots[OPCOST_MAX_SELECTED * OPCOST_MAX_SELECTED];
    int nslots;
} point;

/* A slot's path made ready to time: prepared, verified on poisoned
 * outputs, warmed up. Otherwise its row says why (skipped, wrong, error). */
static void start_slot(point *pt, path_slot *s, opcost_result *row)
{
    const opcost_config *cfg = pt->ctx->cfg;
    char *why = pt->why;
    const size_t wl = sizeof pt->why;
    if (!opcost_config_path_runs(cfg, s->run.path)) {
        set_status(row, OPCOST_STATUS_SKIPPED,
                   pt->ctx->dev->cuda ? "this path runs on the CPU only"
                                      : "this path runs on a GPU only "
                                        "(--device cuda)");
        return;
    }
    opcost_nvtx_push_path(s->run.path->name, s->run.variant->name);
    const int prep = s->run.path->prepare(&s->run, why, wl);
    int ver = 0;
    double first_us = 0;
    if (prep == 0) {
        opcost_nvtx_push(OPCOST_NVTX_PHASE, "verify");
        ver = verify_path(&s->run, why, wl, &first_us);
        opcost_nvtx_pop(OPCOST_NVTX_PHASE);
    }
    /* what the path ran, as prepare and verify reported it */
    snprintf(row->dispatch_path, sizeof row->dispatch_path, "%s",
             s->run.dispatch_path);
    const double warmup = cfg->quick ? 0.001 : 0.005;
    if (prep)
        set_status(row, prep > 0 ? OPCOST_STATUS_SKIPPED : OPCOST_STATUS_ERROR,
                   why);
    else if (ver)
        set_status(row, ver > 0 ? OPCOST_STATUS_WRONG : OPCOST_STATUS_ERROR,
                   why);
    else if (opcost_timing_begin(&s->timer, &s->run, OPCOST_TIME_RUN,
                                 cfg->target_sample_us, warmup, first_us))
        set_status(row, OPCOST_STATUS_ERROR, s->timer.error);
    else
        s->timing = 1;
    opcost_nvtx_pop(OPCOST_NVTX_PATH);
}

/* Phase 1: the workload, then a slot and a row for every (path, variant),
 * each started. -1 when memory ran out. */
static int open_point(point *pt, char *err, size_t len)
{
    const point_context *ctx = pt->ctx;
    const opcost_config *cfg = ctx->cfg;
    pt->made = opcost_workload_make(&pt->w, pt->c, ctx->dev->rotate_bytes,
                                    cfg->cold, cfg->seed + (uint64_t)pt->seed,
                                    pt->why, sizeof pt->why);
    if (pt->made == 0 && ctx->dev->cuda &&
        opcost_workload_to_device(&pt->w, ctx->dev->gpu.arch, pt->why,
                                  sizeof pt->why)) {
        opcost_workload_free(&pt->w);
        pt->made = -1;
    }
    row_id ids[OPCOST_MAX_SELECTED * OPCOST_MAX_SELECTED];
    const int n = point_row_ids(cfg, ids);
    for (int i = 0; i < n; ++i) {
        const opcost_path *path = ids[i].path;
        path_slot *s = &pt->slots[pt->nslots++];
        s->rep_median =
            malloc((size_t)(cfg->reps + OPCOST_EXTRA_REPS) * sizeof(double));
        opcost_result *row = point_row(
            pt->out, ctx, pt->c, pt->made == 0 ? &pt->w : NULL, path, ids[i].v);
        if (!s->rep_median || !row) {
            snprintf(err, len, "out of memory (%s)",
                     row ? "repetitions" : "results");
            return -1;
        }
        s->run.path = path;
        s->run.variant = slot_variant(cfg, path, ids[i].v);
        s->run.w = &pt->w;
        s->row_index = pt->out->nrows - 1;
        if (pt->made)
            set_status(row, OPCOST_STATUS_ERROR, pt->why);
        else
            start_slot(pt, s, row);
    }
    return 0;
}

/* Whether slot s takes repetition rep: every started slot up to cfg->reps,
 * past them only those whose repetitions disagree. */
static int wants_rep(const opcost_config *cfg, const path_slot *s, int rep)
{
    return s->timing &&
           (rep < cfg->reps || !(slot_ci(s) <= OPCOST_REPS_AGREE_REL));
}

/* Phase 2: the repetitions, the slots in a new shuffled order each time;
 * each repetition's samples go to out. -1 when memory ran out. */
static int time_point(point *pt, char *err, size_t len)
{
    const opcost_config *cfg = pt->ctx->cfg;
    uint64_t rng = (cfg->seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)pt->seed;
    int order[OPCOST_MAX_SELECTED * OPCOST_MAX_SELECTED];
    for (int i = 0; i < pt->nslots; ++i)
        order[i] = i;
    opcost_stop_rule rule;
    memset(&rule, 0, sizeof rule);
    int rc = 0;
    for (int rep = 0; rep < cfg->reps + OPCOST_EXTRA_REPS && rc == 0; ++rep) {
        int wanted = 0;
        for (int i = 0; i < pt->nslots; ++i)
            wanted |= wants_rep(cfg, &pt->slots[i], rep);
        if (!wanted)
            break;
        for (int i = pt->nslots - 1; i > 0; --i) {
            const int j = (int)(rng_next(&rng) % (uint64_t)(i + 1));
            const int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int i = 0; i < pt->nslots && rc == 0; ++i) {
            path_slot *s = &pt->slots[order[i]];
            if (!wants_rep(cfg, s, rep))
                continue;
            stop_rule_for(&rule, cfg, s->timer.call_us, s->timer.batch);
            const size_t before = s->timer.n;
            opcost_nvtx_push_path(s->run.path->name, s->run.variant->name);
            const long got = opcost_timing_repetition(&s->timer, &rule);
            opcost_nvtx_pop(OPCOST_NVTX_PATH);
            if (got < 0) {
                set_status(&pt->out->rows[s->row_index], OPCOST_STATUS_ERROR,
                           s->timer.error);
                s->timing = 0;
                continue;
            }
            const double *x = s->timer.samples + before;
            const size_t n = s->timer.n - before;
            s->rep_median[s->reps++] = median_of(x, n);
            if (add_samples(pt->out, (int64_t)s->row_index, s->reps - 1, x,
                            n)) {
                snprintf(err, len, "out of memory (samples)");
                rc = -1;
            }
        }
    }
    opcost_stop_free(&rule);
    return rc;
}

/* Phase 3: each timed row's statistics and every row's ceiling; GPU clocks.
 * Returns the kernel path's median (its auto variant's where it ran), for
 * the differential attribution's fallback. */
static double summarize_point(point *pt)
{
    const point_context *ctx = pt->ctx;
    double kernel_median = NAN;
    for (int i = 0; i < pt->nslots; ++i) {
        path_slot *s = &pt->slots[i];
        opcost_result *row = &pt->out->rows[s->row_index];
        if (s->timing)
            summarize_row(row, s);
        point_set_ceiling(row, ctx->ceiling, ctx->dev->cuda);
        if (s->timing && s->run.path->takes_variants &&
            (isnan(kernel_median) || s->run.variant == &opcost_variant_auto))
            kernel_median = row->median_us;
    }
    record_gpu_clock(ctx->dev, pt->out, pt->slots, pt->nslots);
    return kernel_median;
}

/* Phase 4: each ok row's parts (attribution), its compile time and the
 * path's own note. */
static void attribute_point(point *pt, double kernel_median)
{
    for (int i = 0; i < pt->nslots; ++i) {
        path_slot *s = &pt->slots[i];
        opcost_result *row = &pt->out->rows[s->row_index];
        if (s->timing && row->status == OPCOST_STATUS_OK) {
            opcost_nvtx_push_path(s->run.path->name, s->run.variant->name);
            opcost_nvtx_push(OPCOST_NVTX_PHASE, "attribute");
            attribute_row(pt->ctx->cfg, pt->ctx->dev, s, row, kernel_median);
            opcost_nvtx_pop(OPCOST_NVTX_PHASE);
            opcost_nvtx_pop(OPCOST_NVTX_PATH);
        }
        if (s->run.priv && s->run.path->compile_ms)
            row->compile_ms = s->run.path->compile_ms(&s->run);
        if (s->run.priv && s->run.path->annotate &&
            row->status == OPCOST_STATUS_OK)
            s->run.path->annotate(&s->run, row->note, sizeof row->note);
    }
}

/* Phase 5: every path released, every timer and buffer freed (also after
 * an earlier phase ran out of memory). */
static void close_point(point *pt)
{
    for (int i = 0; i < pt->nslots; ++i) {
        path_slot *s = &pt->slots[i];
        if (s->run.priv)
            s->run.path->release(&s->run);
        opcost_timing_end(&s->timer);
        free(s->rep_median);
    }
    if (pt->made == 0)
        opcost_workload_free(&pt->w);
}

int point_measure(const point_context *ctx, const opcost_case *c,
                  int64_t point_seed, run_out *out, char *err, size_t len)
{
    /* large (a slot per selectable path x variant): not on the stack */
    point *pt = calloc(1, sizeof *pt);
    if (!pt) {
        snprintf(err, len, "out of memory (point)");
        return -1;
    }
    pt->ctx = ctx;
    pt->c = c;
    pt->seed = point_seed;
    pt->out = out;
    pt->made = -1;
    opcost_nvtx_pushf(OPCOST_NVTX_SHAPE, "%s B=%lld N=%lld %s %s",
                      rowops_op_name(c->op), (long long)c->B, (long long)c->N,
                      rowops_dtype_name(c->dtype),
                      opcost_layout_name(c->layout));
    int rc = open_point(pt, err, len);
    if (rc == 0)
        rc = time_point(pt, err, len);
    if (rc == 0)
        attribute_point(pt, summarize_point(pt));
    close_point(pt);
    opcost_nvtx_pop(OPCOST_NVTX_SHAPE);
    free(pt);
    return rc;
}
