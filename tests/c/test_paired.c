/* The paired estimator (bench/stats/paired.h) on synthetic rounds, no
 * timing: a host whose speed drifts 2x, heavy-tailed noise (Student's t
 * with 3 degrees of freedom and interrupt-like spikes), noise correlated
 * between neighbouring rounds (AR(1), rho 0.6), members measured in a
 * shuffled order within each round. The paired ratio must recover a 3 %
 * effect inside an interval narrower than 1 %, where an unpaired estimate
 * of the same samples (Welch on their logs) cannot; without an effect the
 * verdict is `same`; and over many such series the 95 % interval covers
 * the truth about 95 % of the time (the correlation is what a naive
 * interval misses). */
#include "c_samples.h"
#include "paired.h"
#include "significance.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

typedef struct rng {
    uint64_t s;
} rng;

static double uniform(rng *r)
{
    r->s ^= r->s >> 12;
    r->s ^= r->s << 25;
    r->s ^= r->s >> 27;
    return ((double)((r->s * 2685821657736338717ull) >> 11) + 0.5) /
           9007199254740992.0;
}

static double normal(rng *r)
{
    return sqrt(-2 * log(uniform(r))) * cos(2 * PI * uniform(r));
}

/* Student's t with 3 degrees of freedom: heavy tails, finite variance. */
static double t3(rng *r)
{
    double chi = 0;
    for (int i = 0; i < 3; ++i) {
        const double z = normal(r);
        chi += z * z;
    }
    return normal(r) / sqrt(chi / 3);
}

/* The host's speed: a 2x swing over about 170 rounds and a slower wander;
 * t in rounds. */
static double drift(double t)
{
    return exp(log(2.0) * (0.5 + 0.5 * sin(2 * PI * t / 170.0)) +
               0.2 * sin(2 * PI * t / 1100.0 + 1.0));
}

/* One member's noise in log: AR(1) over the rounds, t3 innovations, and
 * one sample in 20 hit by a spike (an interrupt: only ever slower). */
typedef struct noise {
    double e;
} noise;

static double next_noise(noise *n, rng *r)
{
    n->e = 0.6 * n->e + 0.02 * t3(r);
    return n->e + (uniform(r) < 0.05 ? 0.3 * uniform(r) : 0.0);
}

/* n rounds of members A (100 us) and B (100 us x effect), each round in a
 * random order half a round apart; a[] and b[] their samples in us. */
static void simulate(size_t n, double effect, uint64_t seed, double *a,
                     double *b)
{
    rng r = {seed * 0x9E3779B97F4A7C15ull | 1};
    noise na = {0}, nb = {0};
    for (size_t i = 0; i < n; ++i) {
        const int a_first = uniform(&r) < 0.5;
        const double ta = (double)i + (a_first ? 0.0 : 0.5);
        const double tb = (double)i + (a_first ? 0.5 : 0.0);
        a[i] = 100.0 * drift(ta) * exp(next_noise(&na, &r));
        b[i] = 100.0 * effect * drift(tb) * exp(next_noise(&nb, &r));
    }
}

static void log_ratios(const double *a, const double *b, size_t n, double *d)
{
    for (size_t i = 0; i < n; ++i)
        d[i] = log(b[i] / a[i]);
}

static void test_effect_recovered(void)
{
    enum { N = 600 };
    static double a[N], b[N], d[N];
    simulate(N, 1.03, 7, a, b);
    log_ratios(a, b, N, d);
    opcost_paired e;
    C_CHECK(opcost_paired_estimate(d, N, 1, &e) == 0);
    const double lo = e.ratio / (1 + e.ci95_rel),
                 hi = e.ratio * (1 + e.ci95_rel);
    printf("paired: ratio %.4f, interval %.4f..%.4f (+-%.2f %%), block %zu, "
           "lag-1 %.2f\n",
           e.ratio, lo, hi, 100 * e.ci95_rel, e.block, e.lag1);
    C_EXPECT(lo <= 1.03 && 1.03 <= hi, "1.03 outside %.4f..%.4f", lo, hi);
    C_EXPECT(e.ci95_rel < 0.01, "interval +-%.2f %% is not below 1 %%",
             100 * e.ci95_rel);
    C_EXPECT(e.lag1 > 0.3, "the correlation was not seen: lag-1 %.2f", e.lag1);
    C_EXPECT(e.block > 9, "block %zu rounds: no longer than n^(1/3)", e.block);
    C_EXPECT(opcost_paired_verdict(&e, 0.02, e.p, 0.05) ==
                 OPCOST_VERDICT_SLOWER,
             "verdict %s, want slower",
             opcost_verdict_name(opcost_paired_verdict(&e, 0.02, e.p, 0.05)));

    /* unpaired: the same samples as two groups (Welch on their logs) */
    opcost_welch w;
    C_CHECK(opcost_welch_log(a, N, b, N, &w) == 0);
    const double uhalf = expm1(opcost_t975((size_t)w.df) * w.se);
    printf("unpaired: ratio %.4f +-%.2f %%\n", w.ratio, 100 * uhalf);
    C_EXPECT(uhalf > 0.01,
             "the unpaired interval +-%.2f %% is below 1 %%: the drift "
             "did not show",
             100 * uhalf);
    C_EXPECT(uhalf > 2 * e.ci95_rel,
             "unpaired +-%.2f %% is not at least twice paired +-%.2f %%",
             100 * uhalf, 100 * e.ci95_rel);
}

static void test_no_effect_same(void)
{
    enum { N = 600 };
    static double a[N], b[N], d[N];
    simulate(N, 1.0, 11, a, b);
    log_ratios(a, b, N, d);
    opcost_paired e;
    C_CHECK(opcost_paired_estimate(d, N, 1, &e) == 0);
    const opcost_verdict v = opcost_paired_verdict(&e, 0.02, e.p, 0.05);
    printf("no effect: ratio %.4f +-%.2f %%: %s\n", e.ratio, 100 * e.ci95_rel,
           opcost_verdict_name(v));
    C_EXPECT(v == OPCOST_VERDICT_SAME, "verdict %s, want same",
             opcost_verdict_name(v));
}

/* Over 300 series without an effect, the interval covers 1 about 95 % of
 * the time; an interval that treated the rounds as independent (block 1)
 * would cover far less with this correlation. */
static void test_coverage(void)
{
    enum { N = 300, SERIES = 300 };
    static double a[N], b[N], d[N];
    int covered = 0;
    double naive_covered = 0;
    for (int k = 0; k < SERIES; ++k) {
        simulate(N, 1.0, 1000 + (uint64_t)k, a, b);
        log_ratios(a, b, N, d);
        opcost_paired e;
        C_CHECK(opcost_paired_estimate(d, N, (uint64_t)k, &e) == 0);
        covered += fabs(e.log_ratio) <= e.half;
        /* the naive interval: the standard error of independent rounds */
        double m = 0, ss = 0;
        for (size_t i = 0; i < N; ++i)
            m += d[i];
        m /= N;
        for (size_t i = 0; i < N; ++i)
            ss += (d[i] - m) * (d[i] - m);
        const double se = sqrt(ss / (N - 1) / N);
        naive_covered += fabs(m) <= 1.96 * se;
    }
    const double cov = (double)covered / SERIES;
    const double naive = naive_covered / SERIES;
    printf("coverage of the 95 %% interval over %d series: %.3f (naive "
           "independent-rounds interval: %.3f)\n",
           SERIES, cov, naive);
    C_EXPECT(cov >= 0.90 && cov <= 0.995, "coverage %.3f", cov);
    C_EXPECT(naive < cov - 0.1, "naive %.3f is not below %.3f", naive, cov);
}

static void test_logs_by_round(void)
{
    const int64_t ra[] = {0, 1, 1, 3, 4, 6};
    const double a[] = {1, 2, 99, 4, 8, 16};
    const int64_t rb[] = {1, 2, 3, 4, 5};
    const double b[] = {4, 5, 2, 8, 9};
    double out[5];
    const size_t n = opcost_paired_logs(ra, a, 6, rb, b, 5, out);
    C_EXPECT(n == 3, "pairs %zu, want 3 (rounds 1, 3, 4)", n);
    C_EXPECT(fabs(out[0] - log(2.0 / 4)) < 1e-15, "round 1: %g", out[0]);
    C_EXPECT(fabs(out[1] - log(2.0)) < 1e-15, "round 3: %g", out[1]);
    C_EXPECT(fabs(out[2]) < 1e-15, "round 4: %g", out[2]);
}

static void test_edges(void)
{
    double d[OPCOST_PAIRED_MIN] = {0};
    opcost_paired e;
    C_CHECK(opcost_paired_estimate(d, OPCOST_PAIRED_MIN - 1, 1, &e) == -1);
    C_CHECK(isnan(e.ratio) && e.n == OPCOST_PAIRED_MIN - 1);
    C_CHECK(opcost_paired_verdict(&e, 0.02, e.p, 0.05) == OPCOST_VERDICT_NONE);
    /* identical pairs: ratio exactly 1, no spread, same */
    C_CHECK(opcost_paired_estimate(d, OPCOST_PAIRED_MIN, 1, &e) == 0);
    C_CHECK(e.ratio == 1 && e.ci95_rel == 0 && e.p == 1);
    C_CHECK(opcost_paired_verdict(&e, 0.02, e.p, 0.05) == OPCOST_VERDICT_SAME);
    d[3] = NAN;
    C_CHECK(opcost_paired_estimate(d, OPCOST_PAIRED_MIN, 1, &e) == -1);
    /* a wide interval across the band's edges, not significant: unsure */
    double w[40];
    rng r = {12345};
    for (int i = 0; i < 40; ++i)
        w[i] = 0.2 * normal(&r);
    C_CHECK(opcost_paired_estimate(w, 40, 1, &e) == 0);
    C_EXPECT(opcost_paired_verdict(&e, 0.02, e.p, 0.05) ==
                 OPCOST_VERDICT_UNSURE,
             "ratio %.3f +-%.1f %%: %s", e.ratio, 100 * e.ci95_rel,
             opcost_verdict_name(opcost_paired_verdict(&e, 0.02, e.p, 0.05)));
    /* names round-trip */
    for (int v = 0; v < OPCOST_VERDICT_COUNT; ++v) {
        opcost_verdict got;
        C_CHECK(opcost_verdict_from_name(opcost_verdict_name(v), &got) == 0 &&
                got == (opcost_verdict)v);
    }
    opcost_verdict got;
    C_CHECK(opcost_verdict_from_name("maybe", &got) == -1);
}

/* The weighted ratio: two points, the second three times the weight, each
 * with its own standard error: the delta method by hand. */
static void test_weighted(void)
{
    opcost_paired r[2];
    memset(r, 0, sizeof r);
    r[0] = (opcost_paired){.n = 50, .ratio = 1.1, .se = 0.01, .df = 9};
    r[1] = (opcost_paired){.n = 50, .ratio = 0.9, .se = 0.02, .df = 20};
    const double a[2] = {1, 3};
    opcost_paired w;
    C_CHECK(opcost_paired_weighted(a, r, 2, &w) == 0);
    const double num = 1.1 + 3 * 0.9;
    C_EXPECT(fabs(w.ratio - num / 4) < 1e-15, "ratio %g", w.ratio);
    const double s0 = 1.1 / num, s1 = 2.7 / num;
    const double se = sqrt(s0 * s0 * 1e-4 + s1 * s1 * 4e-4);
    C_EXPECT(fabs(w.se - se) < 1e-15, "se %g want %g", w.se, se);
    C_EXPECT(w.df == 9, "df %g", w.df);
    C_EXPECT(fabs(w.ci95_rel - expm1(opcost_t975(9) * se)) < 1e-15, "ci %g",
             w.ci95_rel);
    r[1].ratio = NAN;
    C_CHECK(opcost_paired_weighted(a, r, 2, &w) == -1 && isnan(w.ratio));
}

/* Points whose ratios scatter beyond their intervals (two processes'
 * placements, opcost ab): the excess scatter is found; none where the
 * intervals explain the spread; a change shared by every point, or one
 * growing smoothly with the size, is not scatter; too few points give
 * none. */
static void test_excess_scatter(void)
{
    enum { K = 56 };
    rng r = {12345};
    double lr[K], se[K];
    /* se 0.5 %, placement scatter 1.5 % */
    for (int i = 0; i < K; ++i) {
        se[i] = 0.005;
        lr[i] = 0.015 * normal(&r) + se[i] * normal(&r);
    }
    const double tau = opcost_paired_excess_scatter(lr, se, K);
    C_EXPECT(tau > 0.010 && tau < 0.022, "tau %.4f, 0.015 put in", tau);
    /* the same with every point 3 % slower: the same tau */
    double shifted[K];
    for (int i = 0; i < K; ++i)
        shifted[i] = lr[i] + log(1.03);
    C_EXPECT(fabs(opcost_paired_excess_scatter(shifted, se, K) - tau) < 1e-12,
             "a shared change is not scatter");
    /* a change growing from 0 to 5 % over the sizes, no scatter */
    for (int i = 0; i < K; ++i)
        shifted[i] = log1p(0.05 * i / (K - 1)) + se[i] * normal(&r);
    const double trend = opcost_paired_excess_scatter(shifted, se, K);
    C_EXPECT(trend < 0.003, "a smooth trend is not scatter: tau %.4f", trend);
    /* no placement scatter: the intervals explain the spread */
    for (int i = 0; i < K; ++i)
        lr[i] = se[i] * normal(&r);
    const double none = opcost_paired_excess_scatter(lr, se, K);
    C_EXPECT(none < 0.003, "no scatter put in: tau %.4f", none);
    C_EXPECT(
        isnan(opcost_paired_excess_scatter(lr, se, OPCOST_SCATTER_MIN - 1)),
        "fewer than %d points: no estimate", OPCOST_SCATTER_MIN);
    lr[3] = NAN;
    C_EXPECT(isnan(opcost_paired_excess_scatter(lr, se, K)),
             "a NAN entry: no estimate");
}

/* The spread between two processes of one build: their log ratios are 0
 * but for where each process's memory landed. */
static void test_excess_spread(void)
{
    enum { K = 40 };
    rng r = {777};
    double d[K], se[K];
    for (int i = 0; i < K; ++i) {
        se[i] = 0.005;
        d[i] = 0.015 * normal(&r) + se[i] * normal(&r);
    }
    const double tau = opcost_paired_excess_spread(d, se, K);
    C_EXPECT(tau > 0.010 && tau < 0.022, "tau %.4f, 0.015 put in", tau);
    /* one process 2 % faster at every point: an offset they share counts
     * (the scatter about the median would not see it) */
    for (int i = 0; i < K; ++i)
        d[i] = log(1.02) + se[i] * normal(&r);
    const double offset = opcost_paired_excess_spread(d, se, K);
    C_EXPECT(offset > 0.015, "a shared offset is spread: tau %.4f", offset);
    C_EXPECT(opcost_paired_excess_scatter(d, se, K) < 0.004,
             "... which the scatter does not see");
    for (int i = 0; i < K; ++i)
        d[i] = se[i] * normal(&r);
    const double none = opcost_paired_excess_spread(d, se, K);
    C_EXPECT(none < 0.003, "no spread put in: tau %.4f", none);
    C_EXPECT(isnan(opcost_paired_excess_spread(d, se, OPCOST_SPREAD_MIN - 1)),
             "fewer than %d contrasts: no estimate", OPCOST_SPREAD_MIN);
    se[5] = 0;
    C_EXPECT(isnan(opcost_paired_excess_spread(d, se, K)),
             "an se of 0: no estimate");
}

/* A point's own processes: one of them 15 % off there alone is its own
 * spread; contrasts within their errors are none; bad entries give none. */
static void test_point_excess(void)
{
    const double se[2] = {0.01, 0.01};
    const double off[2] = {log(1 / 1.15), 0.004};
    const double own = opcost_paired_point_excess(off, se, 2);
    C_EXPECT(own > 0.09 && own < 0.11,
             "one process 15 %% off: its own spread %.4f", own);
    const double within[2] = {0.005, -0.008};
    C_EXPECT(opcost_paired_point_excess(within, se, 2) == 0,
             "within their own errors: none");
    const double wider[2] = {0.02, -0.015};
    const double w = opcost_paired_point_excess(wider, se, 2);
    C_EXPECT(fabs(w - sqrt((0.02 * 0.02 + 0.015 * 0.015 - 2e-4) / 2)) < 1e-12,
             "2-sigma contrasts: sqrt(mean(d^2 - se^2)) = %.5f", w);
    const double bad[2] = {NAN, 0.01};
    C_EXPECT(opcost_paired_point_excess(bad, se, 2) == 0, "a NAN: none");
    C_EXPECT(opcost_paired_point_excess(off, se, 0) == 0, "no contrasts: none");
}

int main(void)
{
    test_excess_scatter();
    test_excess_spread();
    test_point_excess();
    test_effect_recovered();
    test_no_effect_same();
    test_coverage();
    test_logs_by_round();
    test_edges();
    test_weighted();
    return c_report("test_paired");
}
