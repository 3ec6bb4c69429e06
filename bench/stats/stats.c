#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* z with Phi(-z) = 0.025. */
#define Z975 1.959963984540054

opcost_ci_method opcost_median_ci95_ranks(size_t n, size_t *j, size_t *k,
                                          double *coverage)
{
    size_t rj = 0;
    double cov = NAN;
    opcost_ci_method method = OPCOST_CI_NONE;
    if (n >= 6 && n <= OPCOST_CI_EXACT_MAX_N) {
        /* P(X <= i) by the pmf recurrence from 2^-n, which stays a normal
         * double up to n = 1022; keep the largest j with
         * 2 P(X <= j - 1) <= 0.05. */
        double pmf = ldexp(1.0, -(int)n), cdf = pmf;
        size_t i = 0;
        while (2.0 * cdf <= 0.05) {
            pmf = pmf * (double)(n - i) / (double)(i + 1);
            ++i;
            cdf += pmf;
        }
        /* Here P(X <= i) is the first tail above 0.025: j - 1 = i - 1. */
        rj = i;
        cov = 1.0 - 2.0 * (cdf - pmf);
        method = OPCOST_CI_EXACT;
    } else if (n > OPCOST_CI_EXACT_MAX_N) {
        /* P(X <= j - 1) ~ Phi((j - 1/2 - n/2) / (sqrt(n)/2)) <= 0.025. */
        const double half = 0.5 * sqrt((double)n);
        rj = (size_t)floor(0.5 * (double)n + 0.5 - Z975 * half);
        const double zj = ((double)rj - 0.5 - 0.5 * (double)n) / half;
        cov = 1.0 - erfc(-zj / sqrt(2.0));
        method = OPCOST_CI_NORMAL;
    }
    if (j)
        *j = rj;
    if (k)
        *k = rj ? n + 1 - rj : 0;
    if (coverage)
        *coverage = cov;
    return method;
}

double opcost_percentile_sorted(const double *sorted, size_t n, double p)
{
    if (!sorted || n == 0 || !(p >= 0.0 && p <= 100.0))
        return NAN;
    const double h = (double)(n - 1) * p / 100.0;
    const size_t lo = (size_t)floor(h);
    if (lo + 1 >= n)
        return sorted[n - 1];
    const double t = h - (double)lo;
    return sorted[lo] + t * (sorted[lo + 1] - sorted[lo]);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int check_samples(const double *x, size_t n, const opcost_summary *out,
                         char *err, size_t errlen)
{
    if (!out) {
        snprintf(err, errlen, "out: must not be NULL");
        return -1;
    }
    if (n == 0 || !x) {
        snprintf(err, errlen, "samples: need at least 1 sample (got n = %zu)",
                 n);
        return -1;
    }
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(x[i])) {
            snprintf(err, errlen,
                     "samples[%zu] = %g: every sample must be "
                     "finite",
                     i, x[i]);
            return -1;
        }
    }
    return 0;
}

static double median_sorted(const double *s, size_t n)
{
    /* halves first: two samples near DBL_MAX must not average to Inf */
    return n % 2 ? s[n / 2] : 0.5 * s[n / 2 - 1] + 0.5 * s[n / 2];
}

double opcost_median_inplace(double *x, size_t n)
{
    if (n == 0)
        return NAN;
    qsort(x, n, sizeof *x, cmp_double);
    return median_sorted(x, n);
}

void opcost_wmean_add(opcost_wmean *m, double w, double x)
{
    if (!(w > 0))
        return;
    if (w > m->wmax) {
        m->wsum = m->wmax > 0 ? m->wsum * (m->wmax / w) : 0.0;
        m->wmax = w;
    }
    const double r = w / m->wmax;
    m->wsum += r;
    m->mean += r / m->wsum * (x - m->mean);
}

double opcost_wmean_value(const opcost_wmean *m)
{
    return m->wsum > 0 ? m->mean : NAN;
}

static double rel_half_width(double lo, double hi, double median)
{
    return median == 0.0 ? NAN : (hi - lo) / 2.0 / fabs(median);
}

int opcost_summarize_inplace(double *x, size_t n, opcost_summary *out,
                             char *err, size_t errlen)
{
    if (check_samples(x, n, out, err, errlen))
        return -1;
    qsort(x, n, sizeof *x, cmp_double);
    opcost_summary s = {.n = n};
    s.min = x[0];
    s.max = x[n - 1];
    s.median = median_sorted(x, n);
    s.p90 = opcost_percentile_sorted(x, n, 90.0);
    /* Two passes: the mean first, then squared deviations (accurate even
     * when the spread is tiny compared with the mean). */
    double sum = 0.0;
    for (size_t i = 0; i < n; ++i)
        sum += x[i];
    s.mean = sum / (double)n;
    double ss = 0.0;
    for (size_t i = 0; i < n; ++i)
        ss += (x[i] - s.mean) * (x[i] - s.mean);
    s.stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : NAN;
    s.ci95_method = opcost_median_ci95_ranks(n, &s.ci95_lo_rank,
                                             &s.ci95_hi_rank, &s.ci95_coverage);
    if (s.ci95_method == OPCOST_CI_NONE) {
        s.ci95_lo = s.ci95_hi = s.ci95_rel = NAN;
    } else {
        s.ci95_lo = x[s.ci95_lo_rank - 1];
        s.ci95_hi = x[s.ci95_hi_rank - 1];
        s.ci95_rel = rel_half_width(s.ci95_lo, s.ci95_hi, s.median);
    }
    *out = s;
    return 0;
}

int opcost_summarize(const double *x, size_t n, opcost_summary *out, char *err,
                     size_t errlen)
{
    if (check_samples(x, n, out, err, errlen))
        return -1;
    double *copy = malloc(n * sizeof *copy);
    if (!copy) {
        snprintf(err, errlen, "samples: cannot allocate a copy of %zu values",
                 n);
        return -1;
    }
    memcpy(copy, x, n * sizeof *copy);
    const int rc = opcost_summarize_inplace(copy, n, out, err, errlen);
    free(copy);
    return rc;
}

/* ---- Selection: the k-th smallest (0-based) of x[0..n-1], reordering x so
 * that x[0..k-1] <= x[k] <= x[k+1..n-1]. Three-way partitioning keeps ties
 * (common in timings at the clock's resolution) linear. */
static void swap_d(double *a, double *b)
{
    const double t = *a;
    *a = *b;
    *b = t;
}

double opcost_select_kth(double *x, size_t n, size_t k)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        const double a = x[lo], b = x[lo + (hi - lo) / 2], c = x[hi - 1];
        const double p = a < b ? (b < c ? b : (a < c ? c : a))
                               : (a < c ? a : (b < c ? c : b));
        size_t lt = lo, i = lo, gt = hi;
        while (i < gt) {
            if (x[i] < p)
                swap_d(&x[lt++], &x[i++]);
            else if (x[i] > p)
                swap_d(&x[i], &x[--gt]);
            else
                ++i;
        }
        if (k < lt)
            hi = lt;
        else if (k >= gt)
            lo = gt;
        else
            return p;
    }
    return x[k];
}

double opcost_median_ci95_rel(const double *x, size_t n, double *scratch)
{
    size_t j, k;
    if (opcost_median_ci95_ranks(n, &j, &k, NULL) == OPCOST_CI_NONE)
        return NAN;
    memcpy(scratch, x, n * sizeof *scratch);
    const size_t m = (n - 1) / 2; /* lower middle, 0-based */
    double median = opcost_select_kth(scratch, n, m);
    if (n % 2 == 0) {
        double next = scratch[m + 1];
        for (size_t i = m + 2; i < n; ++i)
            next = scratch[i] < next ? scratch[i] : next;
        median = 0.5 * (median + next);
    }
    /* j - 1 <= m < k - 1, so each bound lies on its side of the middle. */
    const double lo =
        j - 1 == m ? scratch[m] : opcost_select_kth(scratch, m, j - 1);
    const double hi =
        opcost_select_kth(scratch + m + 1, n - m - 1, k - 1 - (m + 1));
    return rel_half_width(lo, hi, median);
}

double opcost_t975(size_t df)
{
    static const double table[31] = {
        NAN,   12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
        2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
        2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
    if (df <= 30)
        return table[df];
    /* t = z + (z^3 + z) / (4 df) + (5 z^5 + 16 z^3 + 3 z) / (96 df^2) */
    const double z = 1.959963984540054, v = (double)df;
    return z + (z * z * z + z) / (4 * v) +
           (5 * pow(z, 5) + 16 * z * z * z + 3 * z) / (96 * v * v);
}

double opcost_run_noise_q95(const double *log_ratios, size_t n)
{
    double *a = malloc((n ? n : 1) * sizeof *a);
    if (!a)
        return NAN;
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (isfinite(log_ratios[i]))
            a[k++] = fabs(log_ratios[i]);
    double q = NAN;
    if (k >= OPCOST_RUN_NOISE_MIN_PAIRS) {
        qsort(a, k, sizeof *a, cmp_double);
        /* nearest rank: the smallest value with >= 95 % at or below it */
        const size_t rank = (size_t)ceil(0.95 * (double)k);
        q = a[rank - 1];
    }
    free(a);
    return q;
}

double opcost_ci95_with_run_noise(double ci_reps, double noise)
{
    const double h = isnan(noise) ? NAN : expm1(noise);
    if (isnan(h))
        return ci_reps;
    return isnan(ci_reps) || h > ci_reps ? h : ci_reps;
}

double opcost_reps_ci95_rel(const double *rep_medians, size_t r)
{
    if (r < 2)
        return NAN;
    double mean = 0;
    for (size_t i = 0; i < r; ++i) {
        if (!(rep_medians[i] > 0) || !isfinite(rep_medians[i]))
            return NAN;
        mean += log(rep_medians[i]);
    }
    mean /= (double)r;
    double ss = 0;
    for (size_t i = 0; i < r; ++i) {
        const double d = log(rep_medians[i]) - mean;
        ss += d * d;
    }
    const double sd = sqrt(ss / (double)(r - 1));
    return expm1(opcost_t975(r - 1) * sd * sqrt(2.0 / (double)r));
}
