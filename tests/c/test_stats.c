/* Summary statistics and stopping rules against values computed offline:
 * numpy 2.4.6 for percentiles/mean/std (np.percentile's default "linear"
 * method, np.std(ddof=1)), and exact binomial(n, 1/2) tails from Python's
 * math.comb for the confidence-interval ranks. */
#include "c_samples.h"
#include "stats.h"
#include "stop.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NEAR(got, want)                                                        \
    (fabs((got) - (want)) <= 1e-12 * (fabs(want) > 1 ? fabs(want) : 1))

typedef struct expected {
    const char *name;
    const double *x;
    size_t n;
    double median, p90, mean, stddev, min, max;
    size_t j, k; /* CI ranks, 0 when none */
    double lo, hi, rel;
} expected;

static void check_summary(const expected *e)
{
    opcost_summary s;
    char err[256];
    C_EXPECT(opcost_summarize(e->x, e->n, &s, err, sizeof err) == 0, "%s: %s",
             e->name, err);
    C_EXPECT(s.n == e->n, "%s: n", e->name);
    C_EXPECT(NEAR(s.median, e->median), "%s: median %.17g want %.17g", e->name,
             s.median, e->median);
    C_EXPECT(NEAR(s.p90, e->p90), "%s: p90 %.17g want %.17g", e->name, s.p90,
             e->p90);
    C_EXPECT(NEAR(s.mean, e->mean), "%s: mean %.17g want %.17g", e->name,
             s.mean, e->mean);
    if (isnan(e->stddev))
        C_EXPECT(isnan(s.stddev), "%s: stddev %g want NAN", e->name, s.stddev);
    else
        C_EXPECT(NEAR(s.stddev, e->stddev), "%s: stddev %.17g want %.17g",
                 e->name, s.stddev, e->stddev);
    C_EXPECT(s.min == e->min && s.max == e->max, "%s: min/max", e->name);
    C_EXPECT(s.ci95_lo_rank == e->j && s.ci95_hi_rank == e->k,
             "%s: ranks %zu,%zu want %zu,%zu", e->name, s.ci95_lo_rank,
             s.ci95_hi_rank, e->j, e->k);
    if (e->j == 0) {
        C_EXPECT(s.ci95_method == OPCOST_CI_NONE && isnan(s.ci95_lo) &&
                     isnan(s.ci95_hi) && isnan(s.ci95_rel),
                 "%s: no interval expected", e->name);
    } else {
        C_EXPECT(s.ci95_lo == e->lo && s.ci95_hi == e->hi,
                 "%s: interval [%g, %g] want [%g, %g]", e->name, s.ci95_lo,
                 s.ci95_hi, e->lo, e->hi);
        C_EXPECT(NEAR(s.ci95_rel, e->rel), "%s: ci95_rel %.17g want %.17g",
                 e->name, s.ci95_rel, e->rel);
    }
}

static void test_summaries(void)
{
    static const double n1[] = {5.0};
    static const double n2[] = {3.0, 1.0};
    /* Odd with a tie at the median. */
    static const double odd7[] = {10.5, 3.25, 7.0, 7.0, 1.0, 12.75, 4.5};
    /* Even with a triple tie at the middle. */
    static const double even10[] = {2.5,  9.0, 4.0, 4.0, 4.0,
                                    7.25, 1.5, 8.0, 3.0, 6.5};
    double n20[20], n100[100];
    for (int i = 0; i < 20; ++i)
        n20[i] = (double)((i * 7) % 20) * 0.5 + 10.0;
    for (int i = 0; i < 100; ++i)
        n100[i] = 100.0 + (double)((i * 37) % 101) * 0.25;
    const expected cases[] = {
        /* np.median, np.percentile(x, 90), x.mean(), x.std(ddof=1) */
        {"n1", n1, 1, 5.0, 5.0, 5.0, NAN, 5.0, 5.0, 0, 0, 0, 0, 0},
        {"n2", n2, 2, 2.0, 2.8, 2.0, 1.4142135623730951, 1.0, 3.0, 0, 0, 0, 0,
         0},
        {"odd7", odd7, 7, 7.0, 11.4, 6.571428571428571, 4.089402680797562, 1.0,
         12.75, 1, 7, 1.0, 12.75, 0.8392857142857143},
        {"even10", even10, 10, 4.0, 8.1, 4.975, 2.53434738476529, 1.5, 9.0, 2,
         9, 2.5, 8.0, 0.6875},
        {"n20", n20, 20, 14.75, 18.55, 14.75, 2.958039891549808, 10.0, 19.5, 6,
         15, 12.5, 17.0, 0.15254237288135594},
        {"n100", n100, 100, 112.375, 122.525, 112.465, 7.353452085636893, 100.0,
         125.0, 40, 61, 109.75, 115.0, 0.02335928809788654},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        check_summary(&cases[i]);

    /* All ties: zero spread, zero-width interval. */
    const double same[8] = {2, 2, 2, 2, 2, 2, 2, 2};
    opcost_summary s;
    char err[256];
    C_EXPECT(opcost_summarize(same, 8, &s, err, sizeof err) == 0, "%s", err);
    C_EXPECT(s.stddev == 0.0 && s.ci95_rel == 0.0 && s.p90 == 2.0,
             "all ties: stddev %g ci95_rel %g", s.stddev, s.ci95_rel);
    /* A median of 0 has no relative width. */
    const double zero[7] = {-3, -2, -1, 0, 1, 2, 3};
    C_EXPECT(opcost_summarize(zero, 7, &s, err, sizeof err) == 0, "%s", err);
    C_EXPECT(s.median == 0.0 && isnan(s.ci95_rel), "median 0: ci95_rel %g",
             s.ci95_rel);
    /* The in-place variant sorts its input. */
    double copy[7];
    memcpy(copy, odd7, sizeof copy);
    C_EXPECT(opcost_summarize_inplace(copy, 7, &s, err, sizeof err) == 0, "%s",
             err);
    C_EXPECT(copy[0] == 1.0 && copy[6] == 12.75 && s.median == 7.0,
             "in place: sorted and summarised");
}

static void test_bad_samples(void)
{
    opcost_summary s;
    char err[256];
    const double x[3] = {1.0, NAN, 2.0};
    C_EXPECT(opcost_summarize(x, 0, &s, err, sizeof err) == -1 &&
                 strstr(err, "samples: need at least 1 sample"),
             "n = 0: %s", err);
    C_EXPECT(opcost_summarize(x, 3, &s, err, sizeof err) == -1 &&
                 strstr(err, "samples[1]") && strstr(err, "finite"),
             "NaN sample: %s", err);
    const double y[2] = {1.0, INFINITY};
    C_EXPECT(opcost_summarize(y, 2, &s, err, sizeof err) == -1 &&
                 strstr(err, "samples[1]"),
             "inf sample: %s", err);
}

/* P(X = i) for X ~ binomial(n, 1/2), in log space. */
static long double binom_half_pmf(size_t n, size_t i)
{
    return expl(lgammal(n + 1.0L) - lgammal(i + 1.0L) -
                lgammal((long double)(n - i) + 1.0L) -
                (long double)n * logl(2.0L));
}

/* Exact ranks from Python: for n, j = the largest j with
 * 40 * sum(math.comb(n, i) for i in range(j)) <= 2**n, k = n + 1 - j;
 * coverage = 1 - 2 * sum(...) / 2**n. The same as published tables of
 * order-statistic intervals for the median (e.g. n = 100: 40th and 61st). */
static void test_ci_ranks(void)
{
    static const struct {
        size_t n, j, k;
        double coverage;
        opcost_ci_method method;
    } t[] = {
        {5, 0, 0, NAN, OPCOST_CI_NONE}, /* best [x1, x5] covers 0.9375 */
        {6, 1, 6, 0.96875, OPCOST_CI_EXACT},
        {10, 2, 9, 0.978515625, OPCOST_CI_EXACT},
        {20, 6, 15, 0.9586105346679688, OPCOST_CI_EXACT},
        {100, 40, 61, 0.9647997997822952, OPCOST_CI_EXACT},
        {1000, 469, 532, 0.9537088026395019, OPCOST_CI_EXACT},
        /* Normal approximation: exact j is 470 at n = 1001 (one rank more
         * conservative here) and 956 / 4902 at n = 2000 / 10000. */
        {1001, 469, 533, NAN, OPCOST_CI_NORMAL},
        {2000, 956, 1045, NAN, OPCOST_CI_NORMAL},
        {10000, 4902, 5099, NAN, OPCOST_CI_NORMAL},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; ++i) {
        size_t j, k;
        double cov;
        const opcost_ci_method m =
            opcost_median_ci95_ranks(t[i].n, &j, &k, &cov);
        C_EXPECT(m == t[i].method && j == t[i].j && k == t[i].k,
                 "n = %zu: ranks %zu,%zu method %d want %zu,%zu method %d",
                 t[i].n, j, k, (int)m, t[i].j, t[i].k, (int)t[i].method);
        if (m == OPCOST_CI_EXACT)
            C_EXPECT(fabs(cov - t[i].coverage) < 1e-12,
                     "n = %zu: coverage %.17g want %.17g", t[i].n, cov,
                     t[i].coverage);
        if (m == OPCOST_CI_NORMAL)
            C_EXPECT(cov >= 0.95 && cov < 0.96, "n = %zu: coverage %g", t[i].n,
                     cov);
    }
    /* Every exact n against an independent sum in log space: coverage of
     * (j, k) >= 0.95 and of (j + 1, k - 1) < 0.95. */
    for (size_t n = 6; n <= OPCOST_CI_EXACT_MAX_N; ++n) {
        size_t j, k;
        opcost_median_ci95_ranks(n, &j, &k, NULL);
        /* tail = P(X <= j - 1); tail_next = P(X <= j). */
        long double tail = 0.0L;
        for (size_t i = 0; i < j; ++i)
            tail += binom_half_pmf(n, i);
        const long double tail_next = tail + binom_half_pmf(n, j);
        C_EXPECT(k == n + 1 - j && 1 - 2 * tail >= 0.95L &&
                     1 - 2 * tail_next < 0.95L,
                 "n = %zu: ranks %zu,%zu not the tightest 95%% interval", n, j,
                 k);
    }
}

/* Selection-based ci95_rel equals the sorted summary's, ties included. */
static void test_ci_rel_selection(void)
{
    double x[301], scratch[301];
    unsigned seed = 12345;
    for (size_t n = 6; n <= 301; n += 7) {
        for (int pattern = 0; pattern < 4; ++pattern) {
            for (size_t i = 0; i < n; ++i) {
                seed = seed * 1103515245u + 12345u;
                const double r = (double)(seed >> 16 & 0x7fff);
                x[i] = pattern == 0   ? r
                       : pattern == 1 ? (double)i            /* sorted */
                       : pattern == 2 ? (double)(n - i)      /* reversed */
                                      : (double)(i % 3 + 5); /* ties */
            }
            opcost_summary s;
            char err[128];
            opcost_summarize(x, n, &s, err, sizeof err);
            const double rel = opcost_median_ci95_rel(x, n, scratch);
            C_EXPECT(rel == s.ci95_rel, "n = %zu pattern %d: %.17g vs %.17g", n,
                     pattern, rel, s.ci95_rel);
        }
    }
    C_EXPECT(isnan(opcost_median_ci95_rel(x, 5, scratch)), "n = 5: NAN");
}

static void test_budget_rule(void)
{
    opcost_stop_rule r;
    char err[256];
    C_EXPECT(opcost_stop_budget(&r, 1.0, 5, err, sizeof err) == 0, "%s", err);
    const double x[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    C_EXPECT(opcost_stop_check(&r, x, 3, 2.0) == 0, "below min_samples");
    C_EXPECT(opcost_stop_check(&r, x, 5, 0.5) == 0, "within budget");
    C_EXPECT(r.stopped_by == NULL, "still running");
    C_EXPECT(opcost_stop_check(&r, x, 5, 1.0) == 1 && r.stopped_by &&
                 !strcmp(r.stopped_by, "budget"),
             "budget spent");
    opcost_stop_reset(&r);
    r.max_samples = 4;
    C_EXPECT(opcost_stop_check(&r, x, 4, 0.0) == 1 &&
                 !strcmp(r.stopped_by, "max_samples"),
             "max_samples caps");
    opcost_stop_free(&r);

    C_EXPECT(opcost_stop_budget(&r, -1.0, 5, err, sizeof err) == -1 &&
                 strstr(err, "budget_s"),
             "negative budget: %s", err);
    C_EXPECT(opcost_stop_budget(&r, INFINITY, 5, err, sizeof err) == -1 &&
                 strstr(err, "budget_s"),
             "infinite budget: %s", err);
    C_EXPECT(opcost_stop_budget(&r, 1.0, 0, err, sizeof err) == -1 &&
                 strstr(err, "min_samples"),
             "min_samples 0: %s", err);
}

static void test_noise_rule(void)
{
    opcost_stop_rule r;
    char err[256];
    C_EXPECT(opcost_stop_noise(&r, OPCOST_NOISE_TARGET_DEFAULT, 10.0,
                               OPCOST_NOISE_MIN_SAMPLES_DEFAULT,
                               OPCOST_NOISE_CHECK_EVERY_DEFAULT, err,
                               sizeof err) == 0,
             "%s", err);
    /* Quiet samples: 100 +- 0.1%, the interval is well under 1%. */
    double quiet[64];
    for (int i = 0; i < 64; ++i)
        quiet[i] = 100.0 + 0.1 * ((i * 5) % 3 - 1);
    for (size_t n = 1; n < 10; ++n)
        C_EXPECT(opcost_stop_check(&r, quiet, n, 0.0) == 0, "n = %zu < min", n);
    C_EXPECT(opcost_stop_check(&r, quiet, 10, 0.0) == 1 &&
                 !strcmp(r.stopped_by, "noise") && r.last_ci95_rel <= 0.01,
             "quiet samples stop on noise at min_samples (%g)",
             r.last_ci95_rel);

    /* Noisy samples: never precise enough; the budget ends it. */
    double noisy[64];
    for (int i = 0; i < 64; ++i)
        noisy[i] = i % 2 ? 10.0 : 100.0;
    opcost_stop_reset(&r);
    C_EXPECT(opcost_stop_check(&r, noisy, 10, 1.0) == 0 &&
                 r.last_ci95_rel > 0.01,
             "noisy: continue within budget");
    /* Not recomputed until check_every more samples. */
    const double last = r.last_ci95_rel;
    C_EXPECT(r.next_check == 18, "next check at 18 (got %zu)", r.next_check);
    C_EXPECT(opcost_stop_check(&r, noisy, 11, 1.0) == 0 &&
                 r.last_ci95_rel == last,
             "no recompute at 11");
    C_EXPECT(opcost_stop_check(&r, noisy, 12, 10.0) == 1 &&
                 !strcmp(r.stopped_by, "budget"),
             "noisy: budget ends it");
    opcost_stop_free(&r);

    C_EXPECT(opcost_stop_noise(&r, 0.0, 1.0, 10, 8, err, sizeof err) == -1 &&
                 strstr(err, "target_rel"),
             "target 0: %s", err);
    C_EXPECT(opcost_stop_noise(&r, NAN, 1.0, 10, 8, err, sizeof err) == -1 &&
                 strstr(err, "target_rel"),
             "target NAN: %s", err);
    C_EXPECT(opcost_stop_noise(&r, 0.01, NAN, 10, 8, err, sizeof err) == -1 &&
                 strstr(err, "budget_s"),
             "budget NAN: %s", err);
    C_EXPECT(opcost_stop_noise(&r, 0.01, 1.0, 5, 8, err, sizeof err) == -1 &&
                 strstr(err, "min_samples"),
             "min_samples 5: %s", err);
    C_EXPECT(opcost_stop_noise(&r, 0.01, 1.0, 10, 0, err, sizeof err) == -1 &&
                 strstr(err, "check_every"),
             "check_every 0: %s", err);
}

/* Weighted means and medians at the ends of the double range: freq 1e308
 * on two shapes summed to Inf and printed "0.00 us/call"; two samples of
 * 1e308 had a median of Inf. */
static void test_extreme_values(void)
{
    opcost_wmean m = {0};
    C_CHECK(isnan(opcost_wmean_value(&m)));
    opcost_wmean_add(&m, 1e308, 100.0);
    opcost_wmean_add(&m, 1e308, 200.0);
    C_EXPECT(fabs(opcost_wmean_value(&m) - 150.0) < 1e-12,
             "two shapes of freq 1e308: mean %.17g, want 150",
             opcost_wmean_value(&m));
    opcost_wmean w = {0};
    const double fx[][2] = {{1, 10}, {3, 20}, {0, 1e9}, {-1, 1e9}, {4, 40}};
    for (size_t i = 0; i < 5; ++i)
        opcost_wmean_add(&w, fx[i][0], fx[i][1]);
    C_EXPECT(fabs(opcost_wmean_value(&w) - 230.0 / 8.0) < 1e-12,
             "weights 1, 3, 4 (0 and -1 ignored): %.17g, want 28.75",
             opcost_wmean_value(&w));
    opcost_wmean big = {0};
    opcost_wmean_add(&big, 1e-300, 1e308);
    opcost_wmean_add(&big, 1e300, 1e308);
    opcost_wmean_add(&big, 2, 1.7e308);
    C_EXPECT(isfinite(opcost_wmean_value(&big)) &&
                 fabs(opcost_wmean_value(&big) - 1e308) < 1e293,
             "values near DBL_MAX: %.17g", opcost_wmean_value(&big));
    double two[] = {1e308, 1e308};
    C_EXPECT(opcost_median_inplace(two, 2) == 1e308,
             "median of two 1e308: %g, want 1e308", two[0]);
    double x[] = {1e308, 1.5e308, 1e308, 1.2e308};
    opcost_summary s;
    char err[128];
    C_EXPECT(opcost_summarize(x, 4, &s, err, sizeof err) == 0 &&
                 s.median == 1.1e308,
             "summary median of samples near DBL_MAX: %g", s.median);
}

/* The repetitions' interval: t quantiles against R's qt(0.975, df), the
 * formula on hand-picked medians, and the cases with no interval. */
static void test_reps_interval(void)
{
    const struct {
        size_t df;
        double t;
    } q[] = {{1, 12.706}, {4, 2.776},   {30, 2.042},
             {40, 2.021}, {100, 1.984}, {1000, 1.962}};
    for (size_t i = 0; i < sizeof q / sizeof q[0]; ++i)
        C_EXPECT(fabs(opcost_t975(q[i].df) - q[i].t) < 2e-3, "t975(%zu) = %g",
                 q[i].df, opcost_t975(q[i].df));
    C_EXPECT(isnan(opcost_t975(0)), "t975(0) is NAN");
    /* medians e^0, e^0.1, e^-0.1: s = 0.1, r = 3:
     * exp(4.303 * 0.1 * sqrt(2/3)) - 1 */
    const double m[3] = {1.0, exp(0.1), exp(-0.1)};
    const double want = expm1(4.303 * 0.1 * sqrt(2.0 / 3.0));
    C_EXPECT(fabs(opcost_reps_ci95_rel(m, 3) - want) < 1e-9 * want,
             "three repetitions: %g, want %g", opcost_reps_ci95_rel(m, 3),
             want);
    const double same[5] = {7, 7, 7, 7, 7};
    C_EXPECT(opcost_reps_ci95_rel(same, 5) <= 1e-12, "agreeing repetitions: 0");
    C_EXPECT(isnan(opcost_reps_ci95_rel(m, 1)), "one repetition: NAN");
    const double bad[2] = {1, 0};
    C_EXPECT(isnan(opcost_reps_ci95_rel(bad, 2)), "a zero median: NAN");
    /* scale-free: the same relative spread at another scale */
    const double big[3] = {1e6, 1e6 * exp(0.1), 1e6 * exp(-0.1)};
    C_EXPECT(fabs(opcost_reps_ci95_rel(big, 3) - want) < 1e-9 * want,
             "scale-free");
}

/* The run noise: the 95th percentile (nearest rank) of |log ratio| about
 * zero (a shift of the whole run counts), non-finite ratios left out,
 * NAN below the minimum pairs; the interval is the wider of the two, NAN
 * only when both are. */
static void test_run_noise(void)
{
    /* |d| = 0.01 .. 0.19 and 0.5 (20 values): rank ceil(19) = 19 -> 0.19 */
    double d[20];
    for (int i = 0; i < 19; ++i)
        d[i] = (i % 2 ? -1 : 1) * 0.01 * (i + 1);
    d[19] = 0.5;
    C_EXPECT(fabs(opcost_run_noise_q95(d, 20) - 0.19) < 1e-12, "q95 %g",
             opcost_run_noise_q95(d, 20));
    /* 21 values: rank ceil(19.95) = 20 */
    double e[21];
    memcpy(e, d, sizeof d);
    e[20] = -0.7;
    C_EXPECT(fabs(opcost_run_noise_q95(e, 21) - 0.5) < 1e-12, "q95 of 21: %g",
             opcost_run_noise_q95(e, 21));
    /* a shift of all pairs is noise too: 0.1 + small spread */
    double shifted[8];
    for (int i = 0; i < 8; ++i)
        shifted[i] = 0.1 + 0.001 * i;
    C_EXPECT(fabs(opcost_run_noise_q95(shifted, 8) - 0.107) < 1e-12,
             "a shifted run: %g (8 pairs: the largest)",
             opcost_run_noise_q95(shifted, 8));
    const double with_nan[9] = {0.01, 0.01, 0.01, 0.01,    0.01,
                                0.01, 0.01, NAN,  INFINITY};
    C_EXPECT(isnan(opcost_run_noise_q95(with_nan, 9)), "7 finite pairs: NAN");
    C_EXPECT(isnan(opcost_run_noise_q95(d, 7)), "7 pairs: NAN");
    const double h = expm1(0.2);
    C_EXPECT(opcost_ci95_with_run_noise(0.05, 0.2) == h, "noise wider");
    C_EXPECT(opcost_ci95_with_run_noise(0.5, 0.2) == 0.5, "repetitions wider");
    C_EXPECT(opcost_ci95_with_run_noise(NAN, 0.2) == h, "no repetitions");
    C_EXPECT(opcost_ci95_with_run_noise(0.05, NAN) == 0.05, "no noise");
    C_EXPECT(isnan(opcost_ci95_with_run_noise(NAN, NAN)), "neither");
}

int main(void)
{
    test_run_noise();
    test_reps_interval();
    test_extreme_values();
    test_summaries();
    test_bad_samples();
    test_ci_ranks();
    test_ci_rel_selection();
    test_budget_rule();
    test_noise_rule();
    return c_report("test_stats");
}
