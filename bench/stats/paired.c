#include "paired.h"
#include "significance.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A fifth of the pairs on each side is trimmed. */
#define TRIM 0.2

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

/* The trimmed mean of x[0..n-1], reordering x: the middle n - 2g order
 * statistics by two selections, summed. */
static double trimmed_mean(double *x, size_t n)
{
    const size_t g = (size_t)floor(TRIM * (double)n);
    const size_t keep = n - 2 * g;
    if (g > 0) {
        opcost_select_kth(x, n, g - 1);            /* x[0..g-1] lowest */
        opcost_select_kth(x + g, n - g, keep - 1); /* then the middle */
    }
    double s = 0;
    for (size_t i = g; i < g + keep; ++i)
        s += x[i];
    return s / (double)keep;
}

/* Lag-1 autocorrelation of d winsorized at its TRIM quantiles (one
 * outlier must not decide the block length); scratch holds n. */
static double lag1_winsorized(const double *d, size_t n, double *scratch)
{
    memcpy(scratch, d, n * sizeof *d);
    const size_t g = (size_t)floor(TRIM * (double)n);
    const double lo = opcost_select_kth(scratch, n, g);
    const double hi = opcost_select_kth(scratch, n, n - 1 - g);
    double mean = 0;
    for (size_t i = 0; i < n; ++i)
        mean += d[i] < lo ? lo : d[i] > hi ? hi : d[i];
    mean /= (double)n;
    double num = 0, den = 0;
    for (size_t i = 0; i < n; ++i) {
        const double a = (d[i] < lo ? lo : d[i] > hi ? hi : d[i]) - mean;
        den += a * a;
        if (i + 1 < n) {
            const double b = (d[i + 1] < lo   ? lo
                              : d[i + 1] > hi ? hi
                                              : d[i + 1]) -
                             mean;
            num += a * b;
        }
    }
    return den > 0 ? num / den : 0;
}

/* The block length: n^(1/3) rounds, longer as the lag-1 autocorrelation
 * rho says (for an AR(1) series the block that estimates the variance of a
 * mean best grows as (2 rho / (1 - rho^2))^(2/3) n^(1/3): Buhlmann and
 * Kunsch), at most a quarter of the rounds (four blocks at least). */
static size_t block_length(size_t n, double rho)
{
    const double base = cbrt((double)n);
    double l = ceil(base);
    if (rho > 0) {
        const double r = rho < 0.99 ? rho : 0.99;
        const double ar = ceil(pow(2 * r / (1 - r * r), 2.0 / 3.0) * base);
        l = ar > l ? ar : l;
    }
    const double cap = floor((double)n / 4);
    l = l > cap ? cap : l;
    return l < 1 ? 1 : (size_t)l;
}

static void set_nan(opcost_paired *o, size_t n)
{
    memset(o, 0, sizeof *o);
    o->n = n;
    o->log_ratio = o->se = o->lag1 = o->df = o->half = o->ratio = o->ci95_rel =
        o->p = NAN;
}

int opcost_paired_estimate(const double *d, size_t n, uint64_t seed,
                           opcost_paired *out)
{
    set_nan(out, n);
    if (n < OPCOST_PAIRED_MIN)
        return -1;
    for (size_t i = 0; i < n; ++i)
        if (!isfinite(d[i]))
            return -1;
    double *x = malloc(n * sizeof *x);
    double *stat = malloc(OPCOST_PAIRED_RESAMPLES * sizeof *stat);
    if (!x || !stat) {
        free(x);
        free(stat);
        return -1;
    }
    memcpy(x, d, n * sizeof *x);
    const double center = trimmed_mean(x, n);
    const double rho = lag1_winsorized(d, n, x);
    const size_t l = block_length(n, rho);
    uint64_t s = (seed ^ (uint64_t)n * 0x9E3779B97F4A7C15ull) | 1;
    const size_t starts = n - l + 1;
    double mean = 0;
    for (int b = 0; b < OPCOST_PAIRED_RESAMPLES; ++b) {
        for (size_t k = 0; k < n;) {
            const size_t at = (size_t)(rng_next(&s) % starts);
            for (size_t j = 0; j < l && k < n; ++j)
                x[k++] = d[at + j];
        }
        stat[b] = trimmed_mean(x, n);
        mean += stat[b];
    }
    mean /= OPCOST_PAIRED_RESAMPLES;
    double ss = 0;
    for (int b = 0; b < OPCOST_PAIRED_RESAMPLES; ++b)
        ss += (stat[b] - mean) * (stat[b] - mean);
    free(x);
    free(stat);
    out->log_ratio = center;
    out->se = sqrt(ss / (OPCOST_PAIRED_RESAMPLES - 1));
    out->block = l;
    out->lag1 = rho;
    out->df = (double)(n / l > 1 ? n / l - 1 : 1);
    out->half = opcost_t975((size_t)out->df) * out->se;
    out->ratio = exp(center);
    out->ci95_rel = expm1(out->half);
    /* all pairs equal: no spread, the ratio is what it is */
    out->p = out->se > 0   ? opcost_t_two_sided_p(center / out->se, out->df)
             : center == 0 ? 1.0
                           : 0.0;
    return 0;
}

size_t opcost_paired_logs(const int64_t *round_a, const double *a, size_t na,
                          const int64_t *round_b, const double *b, size_t nb,
                          double *out)
{
    size_t i = 0, j = 0, n = 0;
    while (i < na && j < nb) {
        if (round_a[i] < round_b[j]) {
            ++i;
        } else if (round_b[j] < round_a[i]) {
            ++j;
        } else {
            const int64_t r = round_a[i];
            if (a[i] > 0 && b[j] > 0)
                out[n++] = log(a[i] / b[j]);
            while (i < na && round_a[i] == r)
                ++i;
            while (j < nb && round_b[j] == r)
                ++j;
        }
    }
    return n;
}

static const char *const verdict_names[OPCOST_VERDICT_COUNT] = {
    "", "same", "faster", "slower", "unsure"};

const char *opcost_verdict_name(opcost_verdict v)
{
    return (unsigned)v < OPCOST_VERDICT_COUNT ? verdict_names[v] : "?";
}

int opcost_verdict_from_name(const char *name, opcost_verdict *v)
{
    for (int i = 0; i < OPCOST_VERDICT_COUNT; ++i)
        if (!strcmp(name, verdict_names[i])) {
            *v = (opcost_verdict)i;
            return 0;
        }
    return -1;
}

opcost_verdict opcost_verdict_of(double ratio, double ci95_rel,
                                 double threshold, double p, double alpha)
{
    if (!(ratio > 0) || !isfinite(ratio) || !(ci95_rel >= 0) ||
        !isfinite(ci95_rel))
        return OPCOST_VERDICT_NONE;
    const double band = log1p(threshold), lr = log(ratio),
                 half = log1p(ci95_rel);
    if (lr - half >= -band && lr + half <= band)
        return OPCOST_VERDICT_SAME;
    if (p < alpha && lr >= band)
        return OPCOST_VERDICT_SLOWER;
    if (p < alpha && lr <= -band)
        return OPCOST_VERDICT_FASTER;
    return OPCOST_VERDICT_UNSURE;
}

opcost_verdict opcost_paired_verdict(const opcost_paired *e, double threshold,
                                     double p, double alpha)
{
    if (!e->n)
        return OPCOST_VERDICT_NONE;
    return opcost_verdict_of(e->ratio, e->ci95_rel, threshold, p, alpha);
}

int opcost_paired_weighted(const double *a, const opcost_paired *r, size_t n,
                           opcost_paired *out)
{
    set_nan(out, n);
    double num = 0, den = 0, df = INFINITY;
    for (size_t i = 0; i < n; ++i) {
        if (!(a[i] > 0) || !r[i].n || !isfinite(r[i].ratio) ||
            !isfinite(r[i].se))
            return -1;
        num += a[i] * r[i].ratio;
        den += a[i];
        df = r[i].df < df ? r[i].df : df;
    }
    if (!(den > 0))
        return -1;
    double var = 0;
    for (size_t i = 0; i < n; ++i) {
        const double share = a[i] * r[i].ratio / num;
        var += share * share * r[i].se * r[i].se;
    }
    out->ratio = num / den;
    out->log_ratio = log(out->ratio);
    out->se = sqrt(var);
    out->df = df;
    out->half = opcost_t975((size_t)df) * out->se;
    out->ci95_rel = expm1(out->half);
    out->p = out->se > 0 ? opcost_t_two_sided_p(out->log_ratio / out->se, df)
             : out->log_ratio == 0 ? 1.0
                                   : 0.0;
    return 0;
}

/* The median of the standardized |x|: with diffs, the successive
 * differences |v[i+1] - v[i]| / sqrt(se_i^2 + se_i+1^2 + 2 tau^2); else
 * the values themselves about 0, |v[i]| / sqrt(se_i^2 + tau^2). */
static double standardized_median(const double *v, const double *se, size_t n,
                                  int diffs, double tau, double *x)
{
    if (!diffs) {
        for (size_t i = 0; i < n; ++i)
            x[i] = fabs(v[i]) / sqrt(se[i] * se[i] + tau * tau);
        return opcost_median_inplace(x, n);
    }
    for (size_t i = 0; i + 1 < n; ++i)
        x[i] = fabs(v[i + 1] - v[i]) /
               sqrt(se[i] * se[i] + se[i + 1] * se[i + 1] + 2 * tau * tau);
    return opcost_median_inplace(x, n - 1);
}

/* The tau at which the standardized values have the median of a standard
 * normal's |Z| (0 when they have it without one); NAN on a value that is
 * not finite or an se that is not > 0. */
static double excess(const double *v, const double *se, size_t n, int diffs)
{
    const double half_normal_median = 0.6744897501960817;
    double widest = 0;
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(v[i]) || !isfinite(se[i]) || !(se[i] > 0))
            return NAN;
        widest = fmax(widest, diffs ? i + 1 < n ? fabs(v[i + 1] - v[i]) : 0
                                    : fabs(v[i]));
    }
    double *x = malloc(n * sizeof *x);
    if (!x)
        return NAN;
    double tau = 0;
    if (standardized_median(v, se, n, diffs, 0, x) > half_normal_median) {
        /* at 2 x the widest value (difference) every standardized one is
         * below 0.5 */
        double lo = 0, hi = 2 * widest;
        for (int it = 0; it < 60; ++it) {
            const double mid = (lo + hi) / 2;
            if (standardized_median(v, se, n, diffs, mid, x) >
                half_normal_median)
                lo = mid;
            else
                hi = mid;
        }
        tau = hi;
    }
    free(x);
    return tau;
}

double opcost_paired_excess_scatter(const double *lr, const double *se,
                                    size_t n)
{
    return n < OPCOST_SCATTER_MIN ? NAN : excess(lr, se, n, 1);
}

double opcost_paired_excess_spread(const double *d, const double *se, size_t n)
{
    return n < OPCOST_SPREAD_MIN ? NAN : excess(d, se, n, 0);
}

double opcost_paired_point_excess(const double *d, const double *se, size_t n)
{
    double excess = 0;
    if (n < 1)
        return 0;
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(d[i]) || !(se[i] > 0))
            return 0;
        excess += d[i] * d[i] - se[i] * se[i];
    }
    return excess > 0 ? sqrt(excess / (double)n) : 0;
}
