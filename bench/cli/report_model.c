/* The console's model section: what swapping the norm does to a model's
 * time (the model paths, bench/paths/model_route.h), per distribution
 * and dtype. */
#include "report_model.h"
#include "paired.h"
#include "registry.h"
#include "report_estimate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int opcost_report_is_model(const char *path)
{
    const opcost_path *p = opcost_path_find(path);
    return p && p->model;
}

/* Rows of one model group: same distribution and dtype. */
static int same_model_group(const opcost_result *a, const opcost_result *b)
{
    return opcost_report_is_model(a->path) && opcost_report_is_model(b->path) &&
           !strcmp(a->distribution, b->distribution) &&
           !strcmp(a->dtype, b->dtype);
}

/* The row of path at row p's point, timed; NULL if none. */
static const opcost_result *at_point(const opcost_result *rows, size_t n,
                                     const opcost_result *p, const char *path)
{
    for (size_t i = 0; i < n; ++i)
        if (same_model_group(&rows[i], p) && rows[i].B == p->B &&
            !strcmp(rows[i].path, path) && rows[i].status == OPCOST_STATUS_OK)
            return &rows[i];
    return NULL;
}

/* A timed model row's paired ratio as an estimate (n = 0: none). */
static opcost_paired estimate_of(const opcost_result *x)
{
    return x ? opcost_report_row_estimate(x) : (opcost_paired){0};
}

/* path's expected time over its baseline's across the group's timed
 * shapes, weighted by freq times the baseline's median (0), or -1 when a
 * timed shape has no paired ratio or nothing was timed. Its coverage:
 * the freq of those shapes over the group's. */
static int weighted(const opcost_result *rows, size_t n, size_t g,
                    const char *path, opcost_paired *out, double *coverage)
{
    double *a = malloc((n ? n : 1) * sizeof *a);
    opcost_paired *r = malloc((n ? n : 1) * sizeof *r);
    size_t k = 0;
    double all = 0, timed = 0;
    int rc = a && r ? 0 : -1;
    for (size_t i = 0; i < n && rc == 0; ++i) {
        const opcost_result *x = &rows[i];
        if (!same_model_group(&rows[g], x) || strcmp(x->path, path))
            continue;
        all += atof(x->freq);
        if (x->status != OPCOST_STATUS_OK)
            continue;
        const opcost_result *b = at_point(rows, n, x, x->paired_with);
        r[k] = estimate_of(x);
        if (!b || !r[k].n) {
            rc = -1;
            break;
        }
        timed += atof(x->freq);
        a[k++] = atof(x->freq) * b->median_us;
    }
    if (rc == 0 && (!k || opcost_paired_weighted(a, r, k, out)))
        rc = -1;
    *coverage = all > 0 ? timed / all : NAN;
    free(a);
    free(r);
    return rc;
}

/* The norm's share of path's call, weighted as its time is (freq times
 * its median) over the timed shapes. */
static double share(const opcost_result *rows, size_t n, size_t g,
                    const char *path)
{
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *x = &rows[i];
        if (!same_model_group(&rows[g], x) || strcmp(x->path, path) ||
            x->status != OPCOST_STATUS_OK || !isfinite(x->norm_share))
            continue;
        num += atof(x->freq) * x->median_us * x->norm_share;
        den += atof(x->freq) * x->median_us;
    }
    return den > 0 ? num / den : NAN;
}

/* A share as "12.3%", or "-" where none was measured (on a GPU, where
 * CPU scopes time no kernels). */
static void share_text(double s, char *buf, size_t len)
{
    if (isfinite(s))
        snprintf(buf, len, "%5.1f%%", 100 * s);
    else
        snprintf(buf, len, "-");
}

/* a / b of two estimates against the same baseline, the interval their
 * half-widths combined in quadrature: conservative, as the two share the
 * baseline's samples (their errors correlate positively). */
static double quotient(const opcost_paired *a, const opcost_paired *b,
                       char *buf, size_t len)
{
    const double ha = 1.96 * a->se, hb = 1.96 * b->se;
    const double half = sqrt(ha * ha + hb * hb); /* in log */
    snprintf(buf, len, "x%.3f +-%.1f%%", a->ratio / b->ratio,
             100 * expm1(half));
    return half;
}

static void ratio_text(int rc, const opcost_paired *p, char *buf, size_t len)
{
    if (rc)
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "x%.3f +-%.1f%%", p->ratio, 100 * p->ci95_rel);
}

/* One mode's line: the stack as shipped, the norm's share in it and in
 * the rowops stack, rowops / shipped, torch / shipped, rowops / torch
 * (and, compiled, decomposed / shipped and rowops / decomposed). */
static void mode_line(FILE *f, const opcost_result *rows, size_t n, size_t g,
                      const char *mode)
{
    char shipped[48], rowops[48], torch[48], decomposed[48];
    snprintf(shipped, sizeof shipped, "model-shipped-%s", mode);
    snprintf(rowops, sizeof rowops, "model-rowops-%s", mode);
    snprintf(torch, sizeof torch, "model-torch-%s", mode);
    snprintf(decomposed, sizeof decomposed, "model-decomposed-%s", mode);
    opcost_paired r, t, d;
    double cov, cov_t, cov_d;
    const int rr = weighted(rows, n, g, rowops, &r, &cov);
    const int rt = weighted(rows, n, g, torch, &t, &cov_t);
    const int rd = weighted(rows, n, g, decomposed, &d, &cov_d);
    char a[48], b[48], c[48] = "-", e[48], q[48] = "-";
    ratio_text(rr, &r, a, sizeof a);
    ratio_text(rt, &t, b, sizeof b);
    ratio_text(rd, &d, e, sizeof e);
    if (!rr && !rt)
        quotient(&r, &t, c, sizeof c);
    if (!rr && !rd)
        quotient(&r, &d, q, sizeof q);
    char s_shipped[16], s_rowops[16];
    share_text(share(rows, n, g, shipped), s_shipped, sizeof s_shipped);
    share_text(share(rows, n, g, rowops), s_rowops, sizeof s_rowops);
    fprintf(f, "  %-8s %6s %6s  %16s %16s %16s", mode, s_shipped, s_rowops, a,
            b, c);
    if (!strcmp(mode, "compiled"))
        fprintf(f, " %16s %16s", e, q);
    fprintf(f, "\n");
}

/* With vLLM's op in the stack (model-vllm-eager, where it was timed):
 * vllm / shipped, and rowops / vllm, eager. */
static void vllm_line(FILE *f, const opcost_result *rows, size_t n, size_t g)
{
    opcost_paired v, r;
    double cov, cov_r;
    if (weighted(rows, n, g, "model-vllm-eager", &v, &cov))
        return;
    char a[48], c[48] = "-";
    ratio_text(0, &v, a, sizeof a);
    if (!weighted(rows, n, g, "model-rowops-eager", &r, &cov_r))
        quotient(&r, &v, c, sizeof c);
    fprintf(f, "  %-8s vLLM's op: vllm/shipped %s, rowops/vllm %s\n", "eager",
            a, c);
}

/* Whether the group has a timed row of a model path in mode (the aoti
 * paths run only when named: their line only then). */
static int mode_timed(const opcost_result *rows, size_t n, size_t g,
                      const char *mode)
{
    char suffix[48];
    snprintf(suffix, sizeof suffix, "-%s", mode);
    const size_t k = strlen(suffix);
    for (size_t i = 0; i < n; ++i) {
        const size_t l = strlen(rows[i].path);
        if (same_model_group(&rows[g], &rows[i]) &&
            rows[i].status == OPCOST_STATUS_OK && l > k &&
            !strcmp(rows[i].path + l - k, suffix))
            return 1;
    }
    return 0;
}

/* Compiled rowops against compiled decomposed at every timed B: the
 * opaque op must not lose to Inductor's own fusion. */
static void per_b_lines(FILE *f, const opcost_result *rows, size_t n, size_t g)
{
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *x = &rows[i];
        if (!same_model_group(&rows[g], x) ||
            strcmp(x->path, "model-rowops-compiled") ||
            x->status != OPCOST_STATUS_OK)
            continue;
        const opcost_result *d =
            at_point(rows, n, x, "model-decomposed-compiled");
        const opcost_paired a = estimate_of(x), b = estimate_of(d);
        if (!a.n || !b.n)
            continue;
        char q[48];
        const double half = quotient(&a, &b, q, sizeof q);
        const double lr = log(a.ratio / b.ratio);
        fprintf(f, "    B = %-6lld compiled rowops / decomposed %s%s\n",
                (long long)x->B, q,
                lr - half > 0   ? "  (slower beyond the interval)"
                : lr + half < 0 ? "  (faster beyond the interval)"
                                : "");
    }
}

void opcost_report_models(FILE *f, const opcost_result *rows, size_t n)
{
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    int header = 0;
    for (size_t g = 0; g < n; ++g) {
        if (done[g] || !opcost_report_is_model(rows[g].path))
            continue;
        for (size_t i = g; i < n; ++i)
            if (same_model_group(&rows[g], &rows[i]))
                done[i] = 1;
        opcost_paired r;
        double cov;
        int any = 0;
        for (size_t i = g; i < n && !any; ++i)
            any = same_model_group(&rows[g], &rows[i]) &&
                  rows[i].status == OPCOST_STATUS_OK;
        if (!any)
            continue;
        if (!header++)
            fprintf(f, "\nThe op in a model (the model paths: a stack of "
                       "transformers' LlamaDecoderLayer; time ratios, x < 1 "
                       "faster, paired in rounds with their 95 %% intervals, "
                       "shapes weighted by freq times the shipped stack's "
                       "time; the norm's share of a call as shipped and with "
                       "rowops):\n");
        cov = NAN;
        if (weighted(rows, n, g, "model-rowops-eager", &r, &cov))
            weighted(rows, n, g, "model-rowops-compiled", &r, &cov);
        char covered[32] = "no paired ratio";
        if (isfinite(cov))
            snprintf(covered, sizeof covered, "%.1f %% of the calls",
                     100 * cov);
        fprintf(f, "\n%s  %s  (timed shapes: %s)\n", rows[g].distribution,
                rows[g].dtype, covered);
        fprintf(f, "  %-8s %6s %6s  %16s %16s %16s %16s %16s\n", "mode",
                "share", "rowops", "rowops/shipped", "torch/shipped",
                "rowops/torch", "decomp./shipped", "rowops/decomp.");
        mode_line(f, rows, n, g, "eager");
        vllm_line(f, rows, n, g);
        mode_line(f, rows, n, g, "compiled");
        if (mode_timed(rows, n, g, "aoti"))
            mode_line(f, rows, n, g, "aoti");
        per_b_lines(f, rows, n, g);
    }
    free(done);
}
