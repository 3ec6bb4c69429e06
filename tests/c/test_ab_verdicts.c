/* `opcost ab`'s verdicts over a run's pairs (bench/ab/ab_verdicts.h):
 * their significance is adjusted for the false discovery rate, so a change
 * that moves most pairs by 3 % reads slower on them (Holm's family-wise
 * correction, used before, left every one of 200 such pairs at p 0.01
 * unsure: 0.01 x 200 > 0.05), while a run where no pair moved stays as
 * strict as before: one pair at p 0.001 among 199 at 0.5 is no finding.
 * No timing: the rows are written as a run would have left them. */
#include "ab_verdicts.h"
#include "c_samples.h"
#include "significance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PAIRS 200

/* PAIRS new rows of one path, dtype and layout at B = 1 .. PAIRS, each
 * with ratio, interval and raw p-value as given (p_of(i)). */
static void fill(run_out *out, double ratio, double ci95_rel,
                 double (*p_of)(int))
{
    for (int i = 0; i < PAIRS; ++i) {
        opcost_result *r = &out->rows[i];
        memset(r, 0, sizeof *r);
        snprintf(r->op, sizeof r->op, "fused_add_rms_norm");
        snprintf(r->path, sizeof r->path, "kernel");
        snprintf(r->variant, sizeof r->variant, "auto");
        snprintf(r->layout, sizeof r->layout, "contiguous");
        snprintf(r->dtype, sizeof r->dtype, "bfloat16");
        snprintf(r->side, sizeof r->side, "new");
        snprintf(r->paired_with, sizeof r->paired_with, "base");
        r->N = 4096;
        r->B = i + 1;
        r->ratio = ratio;
        r->ratio_ci95_rel = ci95_rel;
        r->p_value = p_of(i);
    }
    out->nrows = PAIRS;
}

static size_t count(const run_out *out, const char *verdict)
{
    size_t n = 0;
    for (size_t i = 0; i < out->nrows; ++i)
        n += !strcmp(out->rows[i].verdict, verdict);
    return n;
}

static double p_broad(int i)
{
    (void)i;
    return 0.01;
}

static double p_one_among_nulls(int i)
{
    return i == 7 ? 0.001 : 0.5;
}

static double p_none(int i)
{
    return 0.2 + 0.7 * i / PAIRS;
}

static void verdicts(run_out *out)
{
    const opcost_ab_evidence ab = {1, 0.02, 0.05, NULL, 0};
    opcost_ab_verdicts(&ab, out);
}

/* Four processes a side: each new row's three contrasts (new's Helmert
 * contrasts less base's, as opcost_members_cross_contrasts gives them)
 * are +-1 % (se 0.1 %) at every point, so the path's spread tau is about
 * 1.5 % (the median |d| / sqrt(se^2 + tau^2) at a normal's 0.674) and
 * joins each interval as tau^2 / 4; a point whose own contrasts read 2 %
 * takes its own although they are within chi-square's 99th percentile
 * of the path's (the gate that let it keep the path's spread left a
 * false verdict in an A/A); one at 6 % takes its own too. */
static void test_spread_joined(run_out *out)
{
    enum { OFF2 = 9, OFF6 = 7 };
    fill(out, 1.0, 0.005, p_none);
    opcost_ab_contrast *contrasts = calloc(3 * PAIRS, sizeof *contrasts);
    C_CHECK(contrasts != NULL);
    if (!contrasts)
        return;
    size_t ncontrasts = 0;
    for (int i = 0; i < PAIRS; ++i)
        for (int j = 0; j < 3; ++j) {
            const double d = i == OFF6 ? 0.06 : i == OFF2 ? 0.02 : 0.01;
            contrasts[ncontrasts++] =
                (opcost_ab_contrast){(size_t)i, j == 1 ? -d : d, 0.001};
        }
    const opcost_ab_evidence ab = {4, 0.02, 0.05, contrasts, ncontrasts};
    opcost_ab_verdicts(&ab, out);
    const double se0 = log1p(0.005) / 1.96;
    const double tau = sqrt(pow(0.01 / 0.6744897501960817, 2) - 1e-6);
    const double own2 = sqrt(0.02 * 0.02 - 1e-6),
                 own6 = sqrt(0.06 * 0.06 - 1e-6);
    const double want[3] = {expm1(1.96 * sqrt(se0 * se0 + tau * tau / 4)),
                            expm1(1.96 * sqrt(se0 * se0 + own2 * own2 / 4)),
                            expm1(1.96 * sqrt(se0 * se0 + own6 * own6 / 4))};
    const int row[3] = {0, OFF2, OFF6};
    for (int k = 0; k < 3; ++k) {
        const opcost_result *r = &out->rows[row[k]];
        C_EXPECT(fabs(r->ratio_ci95_rel / want[k] - 1) < 0.01,
                 "B = %lld: interval +-%.3f %% (+-%.3f %% expected)",
                 (long long)r->B, 100 * r->ratio_ci95_rel, 100 * want[k]);
        C_EXPECT(strstr(r->note, k ? "at this point"
                                   : "over this path's 600 "
                                     "contrasts") != NULL,
                 "B = %lld: note %s", (long long)r->B, r->note);
    }
    C_EXPECT(count(out, "slower") == 0 && count(out, "faster") == 0,
             "an A/A with a spread: %zu slower, %zu faster",
             count(out, "slower"), count(out, "faster"));
    free(contrasts);
}

int main(void)
{
    run_out out = {0};
    out.rows = calloc(PAIRS, sizeof *out.rows);
    out.caprows = PAIRS;
    C_CHECK(out.rows != NULL);
    if (!out.rows)
        return c_report("test_ab_verdicts");

    /* every pair 3 % slower, each within +-1.5 % at p 0.01 */
    fill(&out, 1.03, 0.015, p_broad);
    verdicts(&out);
    C_EXPECT(count(&out, "slower") == PAIRS,
             "a change that moved every pair: %zu of %d slower",
             count(&out, "slower"), PAIRS);

    /* one pair at p 0.001 (x1.03) among 199 that did not move: after the
     * adjustment its p is 0.001 x 200 = 0.2, no finding */
    fill(&out, 1.03, 0.015, p_one_among_nulls);
    verdicts(&out);
    C_EXPECT(count(&out, "slower") == 0,
             "one small p among nulls is not a finding: %zu slower",
             count(&out, "slower"));
    C_EXPECT(count(&out, "unsure") == PAIRS, "all unsure: %zu",
             count(&out, "unsure"));

    /* an A/A: ratios of 1 within +-0.5 %, nothing significant */
    fill(&out, 1.0, 0.005, p_none);
    verdicts(&out);
    C_EXPECT(count(&out, "same") == PAIRS, "an A/A is the same: %zu of %d",
             count(&out, "same"), PAIRS);

    test_spread_joined(&out);

    /* the adjustment itself: p sorted .005 .01 .03 .04 (4 tests) ->
     * x4/1, x4/2, x4/3, x4/4, each the least of those at or above it */
    double p[] = {0.01, 0.04, 0.03, NAN, 0.005};
    opcost_bh(p, 5);
    C_EXPECT(fabs(p[4] - 0.02) < 1e-12 && fabs(p[0] - 0.02) < 1e-12 &&
                 fabs(p[2] - 0.04) < 1e-12 && fabs(p[1] - 0.04) < 1e-12 &&
                 isnan(p[3]),
             "Benjamini-Hochberg: %g %g %g %g %g", p[0], p[1], p[2], p[3],
             p[4]);
    free(out.rows);
    return c_report("test_ab_verdicts");
}
