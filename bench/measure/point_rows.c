/* The rows of a point: the one function that builds a row and the ones
 * that fill it (its statistics from a member's samples, its paired ratio
 * and fraction of peak, its ceiling), shared by a run's points
 * (point.c) and opcost ab's (bench/ab/ab_coordinator.c). */
#define _POSIX_C_SOURCE 200809L
#include "point_rows.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

static int reserve_samples(run_out *o, size_t n)
{
    if (o->nsamples + n <= o->capsamples)
        return 0;
    size_t cap = o->capsamples ? o->capsamples : 4096;
    while (cap < o->nsamples + n)
        cap *= 2;
    opcost_sample *s = realloc(o->samples, cap * sizeof *s);
    if (!s)
        return -1;
    o->samples = s;
    o->capsamples = cap;
    return 0;
}

/* What every row of a point says of the run, the point, its path and
 * variant (w: the point's workload, NULL where none was made). */
static void fill_identity(opcost_result *row, const point_context *ctx,
                          const opcost_case *c, const opcost_workload *w,
                          const opcost_path *path,
                          const opcost_variant *variant)
{
    const opcost_plan *run_plan = ctx->run_plan;
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
    snprintf(row->device, sizeof row->device, "%s",
             run_plan->cuda ? "cuda" : "cpu");
    row->threads = run_plan->threads;
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
    /* a model path moves its weights and activations, not the op's bytes */
    row->bytes = path->model ? OPCOST_INT_NA : opcost_case_bytes(c);
}

void point_row_status(opcost_result *row, opcost_status s, const char *note)
{
    row->status = s;
    snprintf(row->note, sizeof row->note, "%s", note);
}

void point_row_note(opcost_result *row, const char *text)
{
    const size_t u = strlen(row->note);
    snprintf(row->note + u, sizeof row->note - u, "%s%s", u ? "; " : "", text);
}

double point_median(const double *x, size_t n)
{
    opcost_summary s;
    char e[64];
    return n && !opcost_summarize(x, n, &s, e, sizeof e) ? s.median : NAN;
}

/* The ceiling (bench/ceiling/ceiling.h): the op's mix at the level its
 * working set (the bytes one call touches) falls into, DRAM when cold; on
 * a GPU the device-to-device copy. */
void point_set_ceiling(opcost_result *row, const opcost_ceiling *c, int gpu,
                       int in_place)
{
    row->working_set_bytes = row->bytes;
    if (gpu) {
        row->ceiling_gbps = c->best_gbps;
        snprintf(row->ceiling_kind, sizeof row->ceiling_kind, "dram d2d_copy");
    } else {
        rowops_op op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
        rowops_op_from_name(row->op, &op); /* a row's op is in the table */
        const opcost_mix mix = !rowops_op_info_of(op)->fused ? OPCOST_MIX_ROWS
                               : in_place ? OPCOST_MIX_FUSED_IN_PLACE
                                          : OPCOST_MIX_FUSED;
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
    row->frac_of_peak_best = row->gbps / row->ceiling_gbps;
}

/* A timed row's statistics from its member's samples, which go to out:
 * the samples pooled (median and the rest), and cut into run_plan->reps blocks
 * of consecutive rounds (the sidecar's repetitions), whose medians give
 * the interval of another run's median (ci95_reps_rel). -1: out of
 * memory. */
int point_row_samples(const opcost_plan *run_plan, opcost_result *row,
                      const opcost_member *m, run_out *out)
{
    opcost_summary s;
    char e[128];
    if (opcost_summarize(m->us, m->n, &s, e, sizeof e)) {
        point_row_status(row, OPCOST_STATUS_ERROR, e);
        return 0;
    }
    const size_t blocks =
        (size_t)run_plan->reps < m->n ? (size_t)run_plan->reps : m->n;
    double med[1000];
    if (reserve_samples(out, m->n))
        return -1;
    const int64_t point = (int64_t)(row - out->rows);
    for (size_t b = 0; b < blocks; ++b) {
        const size_t lo = b * m->n / blocks, hi = (b + 1) * m->n / blocks;
        med[b] = point_median(m->us + lo, hi - lo);
        for (size_t i = lo; i < hi; ++i)
            out->samples[out->nsamples++] = (opcost_sample){
                point, (int64_t)b, (int64_t)(i - lo), m->us[i], m->round[i]};
    }
    row->reps = (int64_t)blocks;
    row->n_samples = (int64_t)s.n;
    row->median_us = s.median;
    row->min_us = s.min;
    row->p90_us = s.p90;
    row->mean_us = s.mean;
    row->stddev_us = s.stddev;
    /* the interval a run like this one's median falls in, from the
     * blocks (apply_run_noise widens it to the run's noise at the end);
     * the pooled samples' own interval beside it */
    row->ci95_rel = row->ci95_reps_rel = opcost_reps_ci95_rel(med, blocks);
    row->ci95_pooled_rel = s.ci95_rel;
    if (!isnan(m->device_us[0]))
        row->device_us = point_median(m->device_us, m->n);
    if (row->bytes != OPCOST_INT_NA)
        row->gbps = (double)row->bytes / (s.median * 1e-6) / 1e9;
    return 0;
}

/* A variant slot's variant: the selected one, or "auto" for a path that
 * takes no variants; a variant of the other device has no row under
 * --variants all, nor has a path at a point it does not apply to (a model
 * path at the op's other points). */
int point_row_ids(const opcost_plan *run_plan, const opcost_case *c,
                  point_row_id *ids)
{
    int n = 0;
    for (int p = 0; p < run_plan->npaths; ++p) {
        const opcost_path *path = run_plan->paths[p];
        if (path->applies && !path->applies(c))
            continue;
        const int nv = path->takes_variants ? run_plan->nvariants : 1;
        for (int v = 0; v < nv; ++v) {
            const opcost_variant *var = path->takes_variants
                                            ? run_plan->variants[v]
                                            : &opcost_variant_auto;
            if (!path->takes_variants || !run_plan->variants_all ||
                opcost_plan_variant_runs(run_plan, var))
                ids[n++] = (point_row_id){path, var};
        }
    }
    return n;
}

opcost_result *point_row(run_out *out, const point_context *ctx,
                         const opcost_case *c, const opcost_workload *w,
                         const opcost_path *path, const opcost_variant *variant)
{
    opcost_result *row = new_row(out);
    if (row)
        fill_identity(row, ctx, c, w, path, variant);
    return row;
}

int point_skip(const point_context *ctx, const opcost_case *c, const char *note,
               run_out *out)
{
    point_row_id ids[POINT_ROWS_MAX];
    const int n = point_row_ids(ctx->run_plan, c, ids);
    for (int i = 0; i < n; ++i) {
        opcost_result *row =
            point_row(out, ctx, c, NULL, ids[i].path, ids[i].variant);
        if (!row)
            return -1;
        point_row_status(row, OPCOST_STATUS_SKIPPED, note);
    }
    return 0;
}

void point_member_name(const opcost_path *path, const opcost_variant *variant,
                       char *buf, size_t len)
{
    if (variant == &opcost_variant_auto)
        snprintf(buf, len, "%s", path->name);
    else
        snprintf(buf, len, "%s/%s", path->name, variant->name);
}

int point_row_ratio(const opcost_plan *run_plan, opcost_result *row,
                    const opcost_member *m, const opcost_member *base,
                    const char *base_name, opcost_paired *e)
{
    return point_row_ratio_of(run_plan, row, &m, 1, &base, 1, base_name, e);
}

int point_row_ratio_of(const opcost_plan *run_plan, opcost_result *row,
                       const opcost_member *const *m, int nm,
                       const opcost_member *const *base, int nb,
                       const char *base_name, opcost_paired *e)
{
    if (opcost_members_ratio(m, nm, base, nb, run_plan->seed, e)) {
        char note[300];
        snprintf(note, sizeof note,
                 "no paired ratio: %zu rounds shared with %.128s, %d needed",
                 e->n, base_name, OPCOST_PAIRED_MIN);
        point_row_note(row, note);
        return -1;
    }
    snprintf(row->paired_with, sizeof row->paired_with, "%s", base_name);
    row->ratio = e->ratio;
    row->ratio_ci95_rel = e->ci95_rel;
    row->p_value = e->p;
    row->rounds = (int64_t)e->n;
    snprintf(row->verdict, sizeof row->verdict, "%s",
             opcost_verdict_name(
                 opcost_paired_verdict(e, run_plan->threshold, e->p, 0.05)));
    return 0;
}

/* probe_state, and a note where rounds were left out or the fraction
 * rests on a contended host. */
static void row_state(opcost_result *row, const opcost_bw_split *p)
{
    snprintf(row->probe_state, sizeof row->probe_state, "%s",
             opcost_bw_state_name(p->state));
    char note[400] = "";
    const double pct = 100 * OPCOST_FULL_BANDWIDTH;
    if (p->state == OPCOST_BW_FULL && p->reduced)
        snprintf(note, sizeof note,
                 "frac_of_peak from the %zu probe rounds at full bandwidth "
                 "(%.1f GB/s; >= %.0f %% of %.1f), %zu at reduced bandwidth "
                 "(%.1f GB/s) left out",
                 p->full, p->full_gbps, pct, p->reference_gbps, p->reduced,
                 p->reduced_gbps);
    else if (p->state == OPCOST_BW_REDUCED)
        snprintf(note, sizeof note,
                 "frac_of_peak at reduced bandwidth: the DRAM probe ran at "
                 "%.1f GB/s, below %.0f %% of %.1f, in %zu of %zu rounds (a "
                 "contended host; the fraction at full bandwidth differs)",
                 p->reduced_gbps, pct, p->reference_gbps, p->reduced,
                 p->full + p->reduced);
    else if (p->state == OPCOST_BW_MIXED)
        snprintf(note, sizeof note,
                 "frac_of_peak over both bandwidth states: %zu probe rounds "
                 "at full bandwidth (%.1f GB/s), %zu at reduced (%.1f), too "
                 "few of either",
                 p->full, p->full_gbps, p->reduced, p->reduced_gbps);
    if (note[0])
        point_row_note(row, note);
}

void point_row_frac(const opcost_plan *run_plan, opcost_result *row,
                    const opcost_bw_split *probe, const opcost_member *m,
                    int64_t moved)
{
    point_row_frac_of(run_plan, row, probe, &m, 1, moved);
}

void point_row_frac_of(const opcost_plan *run_plan, opcost_result *row,
                       const opcost_bw_split *probe,
                       const opcost_member *const *m, int nm, int64_t moved)
{
    const opcost_member *used = &probe->used;
    row->probe_gbps =
        (double)moved / (point_median(used->us, used->n) * 1e-6) / 1e9;
    opcost_paired e;
    if (row->bytes == OPCOST_INT_NA)
        return;
    if (opcost_members_ratio(&used, 1, m, nm, run_plan->seed, &e)) {
        char note[160];
        snprintf(note, sizeof note,
                 "no paired frac_of_peak: %zu rounds shared with the probe, "
                 "%d needed",
                 e.n, OPCOST_PAIRED_MIN);
        point_row_note(row, note);
        return;
    }
    const double frac = e.ratio * (double)row->bytes / (double)moved;
    if (frac / (1 + e.ci95_rel) > 1) {
        /* the probe is no ceiling here: on an H200 the fused op's probe (two
         * copies, two launches) read 2x the op at B = 64 */
        char note[200];
        snprintf(note, sizeof note,
                 "no paired frac_of_peak: the probe ran slower than the op "
                 "(%.2f +-%.1f%%), so something other than bandwidth bounds "
                 "it at this size (on a GPU: its launches)",
                 frac, 100 * e.ci95_rel);
        point_row_note(row, note);
        return;
    }
    row->frac_of_peak = frac;
    row->frac_of_peak_ci95_rel = e.ci95_rel;
    row_state(row, probe);
}

void point_row_settle_state(opcost_result *row, double full_gbps)
{
    if (strcmp(row->probe_state, opcost_bw_state_name(OPCOST_BW_FULL)) ||
        !(row->probe_gbps < OPCOST_FULL_BANDWIDTH * full_gbps))
        return;
    snprintf(row->probe_state, sizeof row->probe_state, "%s",
             opcost_bw_state_name(OPCOST_BW_REDUCED));
    char note[300];
    snprintf(note, sizeof note,
             "frac_of_peak at reduced bandwidth: its probe's %.1f GB/s is "
             "below %.0f %% of the run's full DRAM bandwidth, %.1f GB/s",
             row->probe_gbps, 100 * OPCOST_FULL_BANDWIDTH, full_gbps);
    point_row_note(row, note);
}
