#include "report.h"
#include "bandwidth_state.h"
#include "paired.h"
#include "path.h"
#include "report_budget.h"
#include "report_estimate.h"
#include "report_model.h"
#include "report_peers.h"
#include "rowops_bridge.h"
#include "stats.h"
#include "timer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void opcost_report_header(FILE *f, const opcost_plan *plan,
                          const opcost_hostinfo *host, const opcost_ceiling *c,
                          const rowops_bridge_cuda_device *gpu,
                          const char *pinning, const char *code, size_t points,
                          const char *out_path)
{
    fprintf(f, "opcost run %s\n", host->run_id);
    if (gpu)
        fprintf(f,
                "  device      cuda:%d: %s, sm_%d, %d SMs, L2 %.0f MiB, "
                "%.1f of %.1f GiB free; host %s (%s)\n",
                gpu->index, gpu->name, gpu->arch, gpu->sm_count,
                gpu->l2_bytes / (1 << 20), gpu->free_bytes / (1 << 30),
                gpu->total_bytes / (1 << 30), host->host, host->cpu);
    else
        fprintf(f, "  device      cpu: %s, %d threads; host %s\n", host->cpu,
                plan->threads, host->host);
    if (pinning && pinning[0])
        fprintf(f, "  threads     %s\n", pinning);
    if (code && code[0])
        fprintf(f, "  code        %s\n", code);
    fprintf(f, "  software    torch %s, git %s\n",
            rowops_bridge_torch_version(), host->git_sha);
    fprintf(f,
            "  timer       CLOCK_MONOTONIC, resolution %lld ns measured "
            "(clock_getres %lld ns)\n",
            (long long)opcost_timer_resolution_ns(),
            (long long)opcost_timer_getres_ns());
    fprintf(f, "  shapes     ");
    for (int i = 0; i < plan->nshapes; ++i)
        fprintf(f, " %s", plan->shapes[i]);
    fprintf(f, "%s: %zu shapes\n", plan->quick ? " (--quick subset)" : "",
            points);
    fprintf(f, "  paths      ");
    for (int i = 0; i < plan->npaths; ++i)
        fprintf(f, " %s", plan->paths[i]->name);
    fprintf(f, "; variants");
    for (int i = 0; i < plan->nvariants; ++i)
        fprintf(f, " %s", plan->variants[i]->name);
    fprintf(
        f,
        "\n  timing      rounds: every path, variant and the paired "
        "probe one sample per round, in a shuffled order, one untimed "
        "call before each sample; a point stops once every paired "
        "ratio's 95%% interval is within %.1f%% or after %.1f ms per "
        "member and repetition (%d repetitions); paired with %s%s%s, "
        "verdicts beyond +-%.1f%%; samples of >= %.0f us; inputs %s (LLC "
        "%.0f MiB: %s)\n",
        plan->noise_target * 100, plan->rep_budget_s * 1e3, plan->reps,
        plan->baseline_path ? plan->baseline_path->name : "none",
        plan->baseline_path && plan->baseline_path->takes_variants ? "/" : "",
        plan->baseline_path && plan->baseline_path->takes_variants
            ? plan->baseline_variant->name
            : "",
        plan->threshold * 100, plan->target_sample_us,
        plan->cold ? gpu ? "rotated beyond the L2" : "rotated beyond the LLC"
                   : "warm (one set)",
        (double)c->llc_bytes / (1 << 20), c->llc_source);
    if (gpu) {
        fprintf(f,
                "  ceiling     %.1f GB/s (%s: a device-to-device copy of "
                "%.0f MiB, bytes read + written, best of %d)\n",
                c->best_gbps, c->best_kernel,
                (double)c->array_bytes / (1 << 20), c->trials);
        fprintf(f, "  output      %s\n\n", out_path);
        fflush(f);
        return;
    }
    fprintf(f, "  ceiling     %.1f GB/s (%s), %d threads, arrays of %.0f MiB:",
            c->best_gbps, c->best_kernel, c->threads,
            (double)c->array_bytes / (1 << 20));
    for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k)
        if (c->k[k].available)
            fprintf(f, " %s %.1f", c->k[k].name, c->k[k].gbps);
    fprintf(f,
            "\n              (bytes read + written by the source; ordinary "
            "stores also read each destination line: copy %.1f, triad "
            "%.1f GB/s counting it)\n",
            c->k[OPCOST_CEILING_COPY].wa_gbps,
            c->k[OPCOST_CEILING_TRIAD].wa_gbps);
    /* what each row divides by: its op's mix at its working set's level */
    fprintf(f, "  op mixes   ");
    for (int l = OPCOST_LEVELS - 1; l >= 0; --l)
        for (int m = 0; m < OPCOST_MIXES; ++m)
            if (isfinite(c->mix[l][m].gbps))
                fprintf(f, " %s %s %.1f%s", opcost_level_name(l),
                        opcost_mix_name(m), c->mix[l][m].gbps,
                        l == OPCOST_LEVEL_DRAM ? " (nt/plain best)" : "");
    fprintf(f,
            " GB/s\n              (rows mix: 1 read + 1 write; fused: 2 "
            "reads + 2 writes; cache levels at half their size, L2 %.1f "
            "MiB over the threads)\n",
            (double)c->level_bytes[OPCOST_LEVEL_L2] / (1 << 20));
    fprintf(f, "  output      %s\n\n", out_path);
    fflush(f);
}

void opcost_report_progress(FILE *f, size_t done, size_t total,
                            double elapsed_s, double left_s)
{
    /* a terminal gets one line rewritten; a log the first point's line
     * (the first estimate from measured costs) and one per tenth */
    if (isatty(fileno(f)))
        fprintf(f, "\r  [%zu/%zu points] %.0f s elapsed, ~%.0f s left   ", done,
                total, elapsed_s, left_s);
    else if (done == 1 || done == total ||
             done * 10 / total != (done - 1) * 10 / total)
        fprintf(f, "  [%zu/%zu points] %.0f s elapsed, ~%.0f s left\n", done,
                total, elapsed_s, left_s);
    fflush(f);
}

void opcost_report_settled(FILE *f, const opcost_run_settled *s)
{
    if (s->budget)
        opcost_report_budget(f, s->budget);
    if (s->cpu_ceilings && s->probes)
        fprintf(f,
                "paired probes: dram fused from %.1f to %.1f GB/s over the "
                "run's %d cold points of the fused op moving >= 16 MiB a call "
                "(%+.0f %%: the host's drift, cancelled in each row's paired "
                "frac_of_peak)\n",
                s->probe_lo_gbps, s->probe_hi_gbps, s->probes,
                100 * (s->probe_hi_gbps / s->probe_lo_gbps - 1));
    if (s->classed_rows)
        fprintf(f,
                "bandwidth states: %zu of %zu rows streaming from DRAM have "
                "their frac_of_peak at reduced bandwidth, below %.0f %% of "
                "%.1f GB/s (probe_state; %s); %.1f s held for full "
                "bandwidth\n",
                s->reduced_rows, s->classed_rows, 100 * OPCOST_FULL_BANDWIDTH,
                s->full_gbps,
                s->recalled_gbps > 0 && s->recalled_gbps >= s->full_gbps
                    ? "the full bandwidth this machine showed in an "
                      "earlier run"
                    : "the full bandwidth seen in this run",
                s->waited_s);
    if (s->cpu_ceilings)
        fprintf(f,
                "ceilings: the best of the probes at the start and the end "
                "and the paired probes: dram rows %.1f, fused %.1f GB/s "
                "(frac_of_peak_best divides by them)\n",
                s->ceiling->mix[OPCOST_LEVEL_DRAM][OPCOST_MIX_ROWS].gbps,
                s->ceiling->mix[OPCOST_LEVEL_DRAM][OPCOST_MIX_FUSED].gbps);
    if (!s->noise_points)
        return;
    if (isnan(s->noise))
        fprintf(f,
                "run-to-run noise: not known (%zu rows of %zu points "
                "measured again, %d needed); intervals from the "
                "repetitions alone\n",
                s->noise_pairs, s->noise_points, OPCOST_RUN_NOISE_MIN_PAIRS);
    else
        fprintf(f,
                "run-to-run noise: 95 %% of the rows of %zu points "
                "measured again at the end (%zu pairs) moved by less than "
                "x%.3f (run_noise_rel %.3f); every interval is at least "
                "+%.1f %%\n",
                s->noise_points, s->noise_pairs, exp(s->noise), s->noise,
                100 * expm1(s->noise));
}

/* Rows of one group: same distribution, op, dtype and layout. */
static int same_group(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->distribution, b->distribution) && !strcmp(a->op, b->op) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->layout, b->layout);
}

/* A path's expected cost in a group: sum freq * median / sum freq, and per
 * token sum freq * median / sum freq * B. NAN unless every shape was
 * timed. */
/* A row the time budget cut (--time-budget: its whole point, every path's
 * row): the group's figures are over the other shapes, and say so. */
static int budget_cut(const opcost_result *r)
{
    return r->status == OPCOST_STATUS_SKIPPED &&
           !strncmp(r->note, "budget:", 7);
}

static void expected(const opcost_result *rows, size_t n, size_t first,
                     const char *path, const char *variant, double *per_call,
                     double *per_token, int *shapes, int *cut)
{
    opcost_wmean call = {0}, b = {0};
    int missing = 0;
    *shapes = *cut = 0;
    for (size_t i = first; i < n; ++i) {
        if (!same_group(&rows[first], &rows[i]) || strcmp(rows[i].path, path) ||
            strcmp(rows[i].variant, variant))
            continue;
        const double freq = atof(rows[i].freq);
        if (budget_cut(&rows[i])) {
            ++*cut;
            continue;
        }
        ++*shapes;
        if (rows[i].status != OPCOST_STATUS_OK) {
            missing = 1;
            continue;
        }
        opcost_wmean_add(&call, freq, rows[i].median_us);
        opcost_wmean_add(&b, freq, (double)rows[i].B);
    }
    /* per token: sum freq * median / sum freq * B, the ratio of the means */
    *per_call = missing ? NAN : opcost_wmean_value(&call);
    *per_token = missing ? NAN : *per_call / opcost_wmean_value(&b);
}

/* Whether row r is the member a paired_with names ("path" or
 * "path/variant") at row p's point. */
static int is_member(const opcost_result *r, const opcost_result *p,
                     const char *name)
{
    const char *slash = strchr(name, '/');
    const size_t n = slash ? (size_t)(slash - name) : strlen(name);
    return same_group(r, p) && r->B == p->B && r->N == p->N &&
           strlen(r->path) == n && !strncmp(r->path, name, n) &&
           !strcmp(r->variant, slash ? slash + 1 : "auto") &&
           r->status == OPCOST_STATUS_OK;
}

/* A path's paired expected cost over its baseline's in a group: R = sum
 * a_i r_i / sum a_i (a_i: the shape's freq times its baseline's median,
 * r_i: the paired ratio), its interval combined from the rows' (each a 95 %
 * half-width in log; opcost_paired_weighted). *baseline names what the
 * rows are paired with. -1 unless every shape has a paired ratio against
 * the same baseline. */
static int paired_expected(const opcost_result *rows, size_t n, size_t first,
                           const char *path, const char *variant,
                           opcost_paired *out, const char **baseline)
{
    size_t k = 0, cap = 0;
    for (size_t i = first; i < n; ++i)
        cap += same_group(&rows[first], &rows[i]);
    double *a = malloc((cap ? cap : 1) * sizeof *a);
    opcost_paired *r = malloc((cap ? cap : 1) * sizeof *r);
    int rc = a && r ? 0 : -1;
    *baseline = NULL;
    for (size_t i = first; i < n && rc == 0; ++i) {
        const opcost_result *x = &rows[i];
        if (!same_group(&rows[first], x) || strcmp(x->path, path) ||
            strcmp(x->variant, variant) || budget_cut(x))
            continue;
        if (x->status != OPCOST_STATUS_OK || !x->paired_with[0] ||
            !isfinite(x->ratio) || !isfinite(x->ratio_ci95_rel) ||
            (*baseline && strcmp(*baseline, x->paired_with))) {
            rc = -1;
            break;
        }
        *baseline = x->paired_with;
        const opcost_result *b = NULL;
        for (size_t j = first; j < n && !b; ++j)
            if (is_member(&rows[j], x, x->paired_with))
                b = &rows[j];
        if (!b) {
            rc = -1;
            break;
        }
        a[k] = atof(x->freq) * b->median_us;
        r[k++] = opcost_report_row_estimate(x);
    }
    if (rc == 0 && (!k || opcost_paired_weighted(a, r, k, out)))
        rc = -1;
    free(a);
    free(r);
    return rc;
}

/* Whether two model rows were not timed for the same reason: the same
 * note, or both beyond the token limit (their notes name their B). */
static int same_model_reason(const opcost_result *a, const opcost_result *b)
{
    const int la = strstr(a->note, "--model-max-tokens") != NULL;
    const int lb = strstr(b->note, "--model-max-tokens") != NULL;
    return la || lb ? la && lb : !strcmp(a->note, b->note);
}

void opcost_report_summary(FILE *f, const opcost_result *rows, size_t n)
{
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    fprintf(f, "Expected cost per call over each distribution (shapes weighted "
               "by freq), per token, and speedup (x: baseline / path, paired "
               "in rounds, with its 95 %% interval; native / path from the "
               "medians):\n");
    int on_copies = 0; /* kernel rows timed on contiguous copies */
    for (size_t g = 0; g < n; ++g) {
        if (done[g])
            continue;
        double ref = NAN, nat = NAN, tok;
        int shapes, cut;
        expected(rows, n, g, "reference", "auto", &ref, &tok, &shapes, &cut);
        expected(rows, n, g, "native", "auto", &nat, &tok, &shapes, &cut);
        const char *baseline = "reference";
        for (size_t i = g; i < n; ++i)
            if (same_group(&rows[g], &rows[i]) && rows[i].paired_with[0]) {
                baseline = rows[i].paired_with;
                break;
            }
        char vs[OPCOST_TEXT_MAX + 4];
        snprintf(vs, sizeof vs, "vs %s", baseline);
        fprintf(f, "\n%s  %s %s %s\n", rows[g].distribution, rows[g].op,
                rows[g].dtype, rows[g].layout);
        fprintf(f, "  %-28s %12s %12s %18s %10s\n", "path [variant]", "us/call",
                "ns/token", vs, "vs native");
        for (size_t i = g; i < n; ++i) {
            if (!same_group(&rows[g], &rows[i]))
                continue;
            done[i] = 1;
            if (opcost_report_is_model(rows[i].path))
                continue; /* the model section's */
            /* one line per (path, variant), at its first row */
            int first = 1;
            for (size_t k = g; k < i && first; ++k)
                if (same_group(&rows[g], &rows[k]) &&
                    !strcmp(rows[k].path, rows[i].path) &&
                    !strcmp(rows[k].variant, rows[i].variant))
                    first = 0;
            if (!first)
                continue;
            double call, per_token;
            int cut;
            expected(rows, n, g, rows[i].path, rows[i].variant, &call,
                     &per_token, &shapes, &cut);
            char name[64];
            const int copies =
                strstr(rows[i].dispatch_path, OPCOST_KERNEL_ON_COPIES) != NULL;
            on_copies += copies;
            if (strcmp(rows[i].variant, "auto"))
                snprintf(name, sizeof name, "%s [%s]%s", rows[i].path,
                         rows[i].variant, copies ? " (copies)" : "");
            else
                snprintf(name, sizeof name, "%s%s", rows[i].path,
                         copies ? " (copies)" : "");
            if (isnan(call)) {
                fprintf(f,
                        "  %-28s %12s   (not every shape was timed: see "
                        "the CSV's status and note)\n",
                        name, "-");
                continue;
            }
            char vs_base[48] = "-", vs_nat[32] = "-";
            opcost_paired pe;
            const char *paired_with;
            char member[OPCOST_TEXT_MAX * 2];
            if (strcmp(rows[i].variant, "auto"))
                snprintf(member, sizeof member, "%s/%s", rows[i].path,
                         rows[i].variant);
            else
                snprintf(member, sizeof member, "%s", rows[i].path);
            if (!strcmp(member, baseline))
                snprintf(vs_base, sizeof vs_base, "1 (baseline)");
            else if (!paired_expected(rows, n, g, rows[i].path, rows[i].variant,
                                      &pe, &paired_with) &&
                     !strcmp(paired_with, baseline))
                snprintf(vs_base, sizeof vs_base, "%.2fx +-%.1f%%",
                         1 / pe.ratio, 100 * pe.ci95_rel);
            else if (rows[i].paired_with[0] &&
                     strcmp(rows[i].paired_with, baseline))
                /* paired with another member (a peer: rowops' op of its
                 * form): the peer section has its ratio */
                snprintf(vs_base, sizeof vs_base, "(peers below)");
            else if (!strcmp(baseline, "reference") && !isnan(ref))
                /* files without paired ratios: the medians' ratio */
                snprintf(vs_base, sizeof vs_base, "%.2fx", ref / call);
            if (!isnan(nat))
                snprintf(vs_nat, sizeof vs_nat, "%.2fx", nat / call);
            char cuts[48] = "";
            if (cut)
                snprintf(cuts, sizeof cuts, "; %d cut for the budget", cut);
            fprintf(f, "  %-28s %12.2f %12.2f %18s %10s  (%d shape%s%s)\n",
                    name, call, per_token * 1e3, vs_base, vs_nat, shapes,
                    shapes == 1 ? "" : "s", cuts);
        }
    }
    if (on_copies)
        fprintf(f, "\n(copies): the kernel timed on contiguous copies of the "
                   "inputs, made before timing: the same bytes in the layout "
                   "it wants, not the call from the point's layout "
                   "(kernel-e2e's row is)\n");
    opcost_report_models(f, rows, n);
    opcost_report_peers(f, rows, n);
    int untimed = 0;
    for (size_t i = 0; i < n; ++i)
        if (rows[i].status != OPCOST_STATUS_OK &&
            !opcost_report_is_model(rows[i].path)) {
            if (!untimed++)
                fprintf(f, "\nNot timed:\n");
            fprintf(f, "  %-9s %s %s B=%lld N=%lld %s %s %s: %s\n",
                    opcost_status_name(rows[i].status), rows[i].distribution,
                    rows[i].op, (long long)rows[i].B, (long long)rows[i].N,
                    rows[i].dtype, rows[i].layout, rows[i].path, rows[i].note);
        }
    /* the model paths' rows not timed: one line per reason (the token
     * limit one reason, whatever the B) */
    memset(done, 0, n ? n : 1);
    for (size_t i = 0; i < n; ++i) {
        if (done[i] || rows[i].status == OPCOST_STATUS_OK ||
            !opcost_report_is_model(rows[i].path))
            continue;
        size_t count = 0;
        for (size_t j = i; j < n; ++j)
            if (!done[j] && rows[j].status == rows[i].status &&
                opcost_report_is_model(rows[j].path) &&
                same_model_reason(&rows[i], &rows[j]))
                done[j] = 1, ++count;
        if (!untimed++)
            fprintf(f, "\nNot timed:\n");
        fprintf(f, "  %-9s %zu model row%s, as %s %s %s B=%lld %s: %s\n",
                opcost_status_name(rows[i].status), count,
                count == 1 ? "" : "s", rows[i].distribution, rows[i].path,
                rows[i].dtype, (long long)rows[i].B, rows[i].layout,
                rows[i].note);
    }
    free(done);
}
