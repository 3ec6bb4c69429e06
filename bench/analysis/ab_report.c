#include "ab_report.h"
#include "results_csv.h"
#include "significance.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int is_new(const opcost_result *r)
{
    return !strcmp(r->side, "new");
}

/* A new row, or one of no side: a point the run skipped before either
 * side measured it (a signal, the budget): a point of its group that has
 * no pair, never left out as if the group had fewer points. */
static int is_point(const opcost_result *r)
{
    return is_new(r) || !r->side[0];
}

/* One group: distribution, op, dtype, layout, path, variant. */
static int same_group(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->distribution, b->distribution) && !strcmp(a->op, b->op) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->layout, b->layout) &&
           !strcmp(a->path, b->path) && !strcmp(a->variant, b->variant);
}

/* The base twin of a new row: the same point, path and variant. */
static const opcost_result *twin(const opcost_result *rows, size_t n,
                                 const opcost_result *x)
{
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *b = &rows[i];
        if (!strcmp(b->side, "base") && same_group(b, x) && b->B == x->B &&
            b->N == x->N && !strcmp(b->weight_dtype, x->weight_dtype))
            return b;
    }
    return NULL;
}

/* A new row that is not ok (wrong, error, skipped) where its base twin
 * was: the new build broke it, a regression whatever the times say. */
static int broke(const opcost_result *base, const opcost_result *new_)
{
    return base && base->status == OPCOST_STATUS_OK &&
           new_->status != OPCOST_STATUS_OK;
}

/* The entry a row's note names ("entered through X", up to ':' or ';'),
 * into out ("" if none). */
static void entry_of(const opcost_result *r, char *out, size_t len)
{
    static const char key[] = "entered through ";
    const char *at = strstr(r->note, key);
    out[0] = '\0';
    if (!at)
        return;
    at += sizeof key - 1;
    const size_t n = strcspn(at, ":;");
    snprintf(out, len, "%.*s", (int)n, at);
}

/* The first new row of key's group whose entry differs from its base
 * twin's (eager-python through rowops._fast on one side, torch.ops on the
 * other: a difference of the builds, which read 12-23 % apart at small B
 * in an A/A), with both entries; NULL if none. A side that names none (a
 * build from before the rows said it: a nightly's base) makes no claim. */
static const opcost_result *entry_differs(const opcost_result *rows, size_t n,
                                          const opcost_result *key,
                                          char *base_entry, char *new_entry,
                                          size_t len)
{
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *r = &rows[i];
        if (!is_new(r) || !same_group(r, key))
            continue;
        const opcost_result *b = twin(rows, n, r);
        if (!b)
            continue;
        entry_of(b, base_entry, len);
        entry_of(r, new_entry, len);
        if (base_entry[0] && new_entry[0] && strcmp(base_entry, new_entry))
            return r;
    }
    return NULL;
}

/* A row's interval as a normal one's standard error (its ci95_rel is a
 * 95 % half-width in log). */
static opcost_paired as_paired(const opcost_result *r)
{
    opcost_paired e;
    memset(&e, 0, sizeof e);
    e.n = r->rounds == OPCOST_INT_NA ? 0 : (size_t)r->rounds;
    e.ratio = r->ratio;
    e.log_ratio = log(r->ratio);
    e.se = log1p(r->ratio_ci95_rel) / 1.959963984540054;
    e.df = 1e6;
    return e;
}

int opcost_ab_groups(const opcost_result *rows, size_t n, double threshold,
                     double alpha, opcost_ab_group **groups, size_t *ngroups)
{
    *groups = NULL;
    *ngroups = 0;
    opcost_ab_group *g = calloc(n ? n : 1, sizeof *g);
    double *a = malloc((n ? n : 1) * sizeof *a);
    opcost_paired *r = malloc((n ? n : 1) * sizeof *r);
    double *p = malloc((n ? n : 1) * sizeof *p);
    if (!g || !a || !r || !p) {
        free(g);
        free(a);
        free(r);
        free(p);
        return -1;
    }
    size_t ng = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!is_point(&rows[i]))
            continue;
        size_t k = 0;
        while (k < ng && !same_group(g[k].key, &rows[i]))
            ++k;
        if (k < ng)
            continue; /* counted with its group */
        opcost_ab_group *x = &g[ng++];
        x->key = &rows[i];
        size_t m = 0;
        for (size_t j = i; j < n; ++j) {
            const opcost_result *y = &rows[j];
            if (!is_point(y) || !same_group(y, x->key))
                continue;
            ++x->points;
            if (!is_new(y))
                continue; /* no side ran it: no pair */
            const opcost_result *b = twin(rows, n, y);
            x->broken += broke(b, y);
            /* an unsettled row (a journal in place of the results) has
             * no final ratio */
            if (!b || !y->paired_with[0] || opcost_result_unsettled(y) ||
                !isfinite(y->ratio) || !isfinite(y->ratio_ci95_rel) ||
                !(b->median_us > 0))
                continue;
            ++x->paired;
            a[m] = atof(y->freq) * b->median_us;
            if (!(a[m] > 0))
                a[m] = b->median_us; /* a shape set without weights */
            r[m++] = as_paired(y);
        }
        if (x->paired == x->points && m &&
            opcost_paired_weighted(a, r, m, &x->ratio) == 0)
            p[ng - 1] = x->ratio.p;
        else {
            opcost_paired_weighted(a, r, 0, &x->ratio); /* NANs */
            p[ng - 1] = NAN;
        }
    }
    opcost_holm(p, ng);
    for (size_t k = 0; k < ng; ++k) {
        g[k].p_holm = p[k];
        g[k].verdict = isnan(p[k]) ? OPCOST_VERDICT_NONE
                                   : opcost_verdict_of(g[k].ratio.ratio,
                                                       g[k].ratio.ci95_rel,
                                                       threshold, p[k], alpha);
    }
    free(a);
    free(r);
    free(p);
    *groups = g;
    *ngroups = ng;
    return 0;
}

opcost_ab_counts opcost_ab_count(const opcost_result *rows, size_t n)
{
    opcost_ab_counts c;
    memset(&c, 0, sizeof c);
    double *ci = malloc((n ? n : 1) * sizeof *ci);
    double *ratio = malloc((n ? n : 1) * sizeof *ratio);
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *r = &rows[i];
        if (!is_point(r))
            continue;
        ++c.rows;
        const opcost_result *b = is_new(r) ? twin(rows, n, r) : NULL;
        c.broken += broke(b, r);
        if (!is_new(r))
            ++c.unsided;
        else if (opcost_result_unsettled(r))
            ++c.unsettled;
        else if (isfinite(r->ratio))
            ++c.paired;
        else if (!b || b->status != OPCOST_STATUS_OK)
            ++c.base_not_ok;
        else
            ++c.new_not_ok;
        opcost_verdict v = OPCOST_VERDICT_NONE;
        opcost_verdict_from_name(r->verdict, &v);
        c.slower += v == OPCOST_VERDICT_SLOWER;
        c.faster += v == OPCOST_VERDICT_FASTER;
        c.same += v == OPCOST_VERDICT_SAME;
        c.unsure += v == OPCOST_VERDICT_UNSURE;
        c.none += v == OPCOST_VERDICT_NONE;
        if (ci && ratio && isfinite(r->ratio_ci95_rel)) {
            ci[k] = r->ratio_ci95_rel;
            ratio[k++] = r->ratio;
        }
    }
    c.median_ci95_rel = ci ? opcost_median_inplace(ci, k) : NAN;
    c.median_ratio = ratio ? opcost_median_inplace(ratio, k) : NAN;
    free(ci);
    free(ratio);
    return c;
}

opcost_ab_counts opcost_ab_report(FILE *f, const opcost_result *rows, size_t n,
                                  double threshold, double alpha)
{
    opcost_ab_group *g;
    size_t ng;
    if (opcost_ab_groups(rows, n, threshold, alpha, &g, &ng))
        ng = 0;
    fprintf(f,
            "new / base, paired in rounds (x: the new build's time over "
            "the base's; +-: 95 %% interval; verdicts beyond +-%.1f %%, "
            "Holm-corrected at %.2g):\n",
            100 * threshold, alpha);
    for (size_t k = 0; k < ng; ++k) {
        const opcost_result *key = g[k].key;
        fprintf(f, "\n%s  %s %s %s  %s%s%s\n", key->distribution, key->op,
                key->dtype, key->layout, key->path,
                strcmp(key->variant, "auto") ? " " : "",
                strcmp(key->variant, "auto") ? key->variant : "");
        if (g[k].broken)
            fprintf(f,
                    "  BROKEN: %zu of %zu shapes ok in base are not ok in "
                    "new (a regression)\n",
                    g[k].broken, g[k].points);
        char be[96], ne[96];
        const opcost_result *d = entry_differs(rows, n, key, be, ne, sizeof be);
        if (d)
            fprintf(f,
                    "  ENTRY DIFFERS (B=%lld): base entered through %s, new "
                    "through %s: the builds differ, not only the code\n",
                    (long long)d->B, be, ne);
        if (g[k].verdict != OPCOST_VERDICT_NONE)
            fprintf(f,
                    "  expected cost per call: x%.4f +-%.2f%%  %s  (p_holm "
                    "%.2g, %zu shapes)\n",
                    g[k].ratio.ratio, 100 * g[k].ratio.ci95_rel,
                    opcost_verdict_name(g[k].verdict), g[k].p_holm,
                    g[k].points);
        else
            fprintf(f,
                    "  expected cost per call: no claim (%zu of %zu shapes "
                    "paired%s)\n",
                    g[k].paired, g[k].points,
                    OPCOST_AB_INCOMPLETE(&g[k]) ? ": incomplete" : "");
        for (size_t i = 0; i < n; ++i) {
            const opcost_result *r = &rows[i];
            if (!is_point(r) || !same_group(r, key))
                continue;
            const opcost_result *b = is_new(r) ? twin(rows, n, r) : NULL;
            if (isfinite(r->ratio))
                fprintf(f,
                        "    B=%-6lld N=%-6lld x%.4f +-%.2f%%  %-7s (%lld "
                        "rounds, %s)\n",
                        (long long)r->B, (long long)r->N, r->ratio,
                        100 * r->ratio_ci95_rel, r->verdict,
                        (long long)r->rounds, r->stopped_by);
            else if (is_new(r) && (!b || b->status != OPCOST_STATUS_OK))
                /* the base is what failed: say so, not the new row's ok */
                fprintf(f,
                        "    B=%-6lld N=%-6lld no pair: base %s%s%s (new "
                        "%s)\n",
                        (long long)r->B, (long long)r->N,
                        b ? opcost_status_name(b->status) : "has no row",
                        b && b->note[0] ? ": " : "", b ? b->note : "",
                        opcost_status_name(r->status));
            else
                fprintf(f, "    B=%-6lld N=%-6lld %s: %s\n", (long long)r->B,
                        (long long)r->N, opcost_status_name(r->status),
                        r->note[0] ? r->note : "no paired ratio");
        }
    }
    free(g);
    const opcost_ab_counts c = opcost_ab_count(rows, n);
    fprintf(f,
            "\n%zu points x paths: %zu slower, %zu faster, %zu same, %zu "
            "unsure, %zu without a ratio (%zu broken); median ratio x%.4f, "
            "median interval +-%.2f%%\n",
            c.rows, c.slower, c.faster, c.same, c.unsure, c.none, c.broken,
            c.median_ratio, 100 * c.median_ci95_rel);
    return c;
}
