/* `opcost ab`'s verdicts (ab_verdicts.h). */
#include "ab_verdicts.h"
#include "paired.h"
#include "point_rows.h"
#include "significance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int same_kind(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->path, b->path) && !strcmp(a->variant, b->variant) &&
           !strcmp(a->op, b->op) && !strcmp(a->layout, b->layout) &&
           !strcmp(a->dtype, b->dtype) && a->N == b->N;
}

static int has_ratio(const opcost_result *r)
{
    return r->paired_with[0] && r->ratio > 0 && r->ratio_ci95_rel > 0;
}

/* A row's ratio with a variance beyond its rounds joined (of the log
 * ratio): its interval from se^2 + extra, its p-value no smaller than
 * before. */
static void join_variance(opcost_result *r, double extra)
{
    const double se = log1p(r->ratio_ci95_rel) / 1.96;
    const double wide = sqrt(se * se + extra);
    r->ratio_ci95_rel = expm1(1.96 * wide);
    const double p = opcost_t_two_sided_p(log(r->ratio) / wide, 1e6);
    r->p_value = p > r->p_value ? p : r->p_value;
}

/* With one process a side (--processes 1), what the two processes differ
 * by beyond the rounds: each allocates its own objects and outputs (the
 * framework paths'), and where they land moves its speed; one process
 * pair has one such placement for all its rounds, so no interval from
 * them can hold it. Across the points of one path, variant, op and layout
 * it shows as scatter of their ratios beyond their intervals (A/A, Zen 5
 * host: the framework paths at B <= 18 at x0.965-x0.980 with intervals of
 * 0.5-1 %). That scatter (tau, opcost_paired_excess_scatter) joins each
 * of their intervals: se^2 + tau^2, the p-value likewise. A change shared
 * by the points is not scatter (the spread is about their median). */

static void widen_by_scatter(run_out *out)
{
    const size_t n = out->nrows;
    char *done = calloc(n ? n : 1, 1);
    size_t *at = malloc((n ? n : 1) * sizeof *at);
    double *lr = malloc((n ? n : 1) * sizeof *lr);
    double *se = malloc((n ? n : 1) * sizeof *se);
    for (size_t i = 0; done && at && lr && se && i < n; ++i) {
        const opcost_result *a = &out->rows[i];
        if (done[i] || !has_ratio(a))
            continue;
        size_t k = 0;
        for (size_t j = i; j < n; ++j)
            if (!done[j] && has_ratio(&out->rows[j]) &&
                same_kind(a, &out->rows[j])) {
                done[j] = 1;
                /* in the order of B (insertion: a few dozen points) */
                size_t q = k++;
                for (; q > 0 && out->rows[at[q - 1]].B > out->rows[j].B; --q)
                    at[q] = at[q - 1];
                at[q] = j;
            }
        for (size_t m = 0; m < k; ++m) {
            lr[m] = log(out->rows[at[m]].ratio);
            se[m] = log1p(out->rows[at[m]].ratio_ci95_rel) / 1.96;
        }
        const double tau = opcost_paired_excess_scatter(lr, se, k);
        if (!(tau > 0))
            continue;
        for (size_t m = 0; m < k; ++m) {
            opcost_result *r = &out->rows[at[m]];
            join_variance(r, tau * tau);
            char note[200];
            snprintf(note, sizeof note,
                     "interval with the scatter between the two processes "
                     "over this path's %zu points of this dtype and layout: "
                     "+-%.2f%%",
                     k, 100 * expm1(1.96 * tau));
            point_row_note(r, note);
        }
    }
    free(done);
    free(at);
    free(lr);
    free(se);
}

/* With two or more processes a side: what a process's own memory moves is
 * measured, between the processes of a side less what the sides' processes
 * of one index share (the evidence's contrasts, opcost_members_cross_contrasts:
 * known to be 0 but for it). Their spread tau over the points of one path,
 * variant, op, dtype and layout (opcost_paired_excess_spread: an offset
 * all of them share counts) is sqrt(2) sigma for a process's sigma; a new
 * row's ratio is the mean of k processes over the mean of k, so its share
 * is 2 sigma^2 / k = tau^2 / k, joined to each row's interval and p-value.
 * A point whose own contrasts read wider (one process's outputs landed
 * badly at that point alone) takes its own (opcost_paired_point_excess). */
static double point_spread(const opcost_ab_evidence *ab, size_t new_row)
{
    double d[2 * OPCOST_AB_MAX_PROCESSES], se[2 * OPCOST_AB_MAX_PROCESSES];
    size_t n = 0;
    for (size_t c = 0; c < ab->ncontrasts && n < 2 * OPCOST_AB_MAX_PROCESSES;
         ++c)
        if (ab->contrasts[c].new_row == new_row) {
            d[n] = ab->contrasts[c].d;
            se[n++] = ab->contrasts[c].se;
        }
    return opcost_paired_point_excess(d, se, n);
}

static void widen_by_spread(const opcost_ab_evidence *ab, run_out *out)
{
    const size_t n = out->nrows, nc = ab->ncontrasts;
    char *done = calloc(n ? n : 1, 1);
    double *d = malloc((nc ? nc : 1) * sizeof *d);
    double *se = malloc((nc ? nc : 1) * sizeof *se);
    for (size_t i = 0; done && d && se && i < n; ++i) {
        const opcost_result *a = &out->rows[i];
        if (done[i] || !has_ratio(a) || strcmp(a->side, "new"))
            continue;
        size_t k = 0;
        for (size_t c = 0; c < nc; ++c)
            if (ab->contrasts[c].new_row < n &&
                same_kind(a, &out->rows[ab->contrasts[c].new_row])) {
                d[k] = ab->contrasts[c].d;
                se[k++] = ab->contrasts[c].se;
            }
        const double tau = opcost_paired_excess_spread(d, se, k);
        for (size_t j = i; j < n; ++j) {
            opcost_result *r = &out->rows[j];
            if (done[j] || !has_ratio(r) || !same_kind(a, r))
                continue;
            done[j] = 1;
            char note[320];
            const double own = point_spread(ab, j);
            if (isnan(tau) && !(own > 0)) {
                snprintf(note, sizeof note,
                         "no spread between the processes of a side: %zu "
                         "contrasts of this path, dtype and layout, %d "
                         "needed",
                         k, OPCOST_SPREAD_MIN);
                point_row_note(r, note);
                continue;
            }
            const double t = isnan(tau) || own > tau ? own : tau;
            join_variance(r, t * t / ab->processes);
            if (t == tau)
                snprintf(note, sizeof note,
                         "interval with the spread between the %d processes "
                         "of a side over this path's %zu contrasts of this "
                         "dtype and layout: +-%.2f%% a process",
                         ab->processes, k, 100 * expm1(1.96 * tau / sqrt(2.0)));
            else
                snprintf(note, sizeof note,
                         "interval with the spread between the %d processes "
                         "of a side at this point, more than over the "
                         "path's %zu contrasts: +-%.2f%% a process "
                         "(+-%.2f%% over the path)",
                         ab->processes, k, 100 * expm1(1.96 * t / sqrt(2.0)),
                         isnan(tau) ? 0 : 100 * expm1(1.96 * tau / sqrt(2.0)));
            point_row_note(r, note);
        }
    }
    free(done);
    free(d);
    free(se);
}

/* After the last point: every new row's interval with what the processes
 * differ by beyond the rounds (measured between the processes of a side
 * where each has two or more, else the scatter over the points), then its
 * verdict with its p-value adjusted over all pairs of the run for the
 * false discovery rate (Benjamini-Hochberg, opcost_bh). Why not Holm's
 * family-wise control, as before: a change to a kernel moves most of a
 * run's 280 pairs at once, and Holm's judged each as if it alone had
 * moved (p below 0.05 / 280 for the first): of the 224 pairs that run a
 * fast kernel made 3 % slower, 141 read slower with Holm's, 179 with
 * these (results/20261204T184113Z-slow3-400ms-ab.csv). In an A/A, where
 * no pair moved, the two are the same: any false slower is a false
 * exit 1 with chance at most alpha. */
void opcost_ab_verdicts(const opcost_ab_evidence *ab, run_out *out)
{
    if (ab->processes >= 2)
        widen_by_spread(ab, out);
    else
        widen_by_scatter(out);
    double *p = malloc((out->nrows ? out->nrows : 1) * sizeof *p);
    if (!p)
        return;
    for (size_t i = 0; i < out->nrows; ++i)
        p[i] = out->rows[i].p_value; /* NAN where no pair: left out */
    opcost_bh(p, out->nrows);
    for (size_t i = 0; i < out->nrows; ++i) {
        opcost_result *r = &out->rows[i];
        if (isnan(p[i]) || !r->paired_with[0])
            continue;
        snprintf(
            r->verdict, sizeof r->verdict, "%s",
            opcost_verdict_name(opcost_verdict_of(
                r->ratio, r->ratio_ci95_rel, ab->threshold, p[i], ab->alpha)));
    }
    free(p);
}
