#include "significance.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>

/* Continued fraction of the incomplete beta (modified Lentz). */
static double betacf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0);
    d = 1.0 / (fabs(d) < tiny ? tiny : d);
    double h = d;
    for (int m = 1; m <= 300; ++m) {
        const int m2 = 2 * m;
        double aa = m * (b - m) * x / ((a + m2 - 1) * (a + m2));
        d = 1.0 + aa * d;
        d = 1.0 / (fabs(d) < tiny ? tiny : d);
        c = 1.0 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        h *= d * c;
        aa = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1));
        d = 1.0 + aa * d;
        d = 1.0 / (fabs(d) < tiny ? tiny : d);
        c = 1.0 + aa / c;
        c = fabs(c) < tiny ? tiny : c;
        const double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-15)
            break;
    }
    return h;
}

double opcost_betainc(double a, double b, double x)
{
    if (x <= 0)
        return 0;
    if (x >= 1)
        return 1;
    const double ln =
        lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x);
    const double front = exp(ln);
    /* the fraction converges fast on the side of the mean */
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * betacf(a, b, x) / a;
    return 1.0 - front * betacf(b, a, 1.0 - x) / b;
}

double opcost_t_two_sided_p(double t, double df)
{
    if (isnan(t) || !(df > 0))
        return NAN;
    if (isinf(t))
        return 0;
    return opcost_betainc(df / 2.0, 0.5, df / (df + t * t));
}

static void log_mean_var(const double *x, size_t n, double *mean, double *var)
{
    double s = 0, ss = 0;
    for (size_t i = 0; i < n; ++i)
        s += log(x[i]);
    *mean = s / (double)n;
    for (size_t i = 0; i < n; ++i) {
        const double d = log(x[i]) - *mean;
        ss += d * d;
    }
    *var = ss / (double)(n - 1);
}

int opcost_welch_log(const double *base, size_t nb, const double *new_,
                     size_t nn, opcost_welch *out)
{
    if (nb < 2 || nn < 2)
        return -1;
    for (size_t i = 0; i < nb; ++i)
        if (!(base[i] > 0))
            return -1;
    for (size_t i = 0; i < nn; ++i)
        if (!(new_[i] > 0))
            return -1;
    double mb, vb, mn, vn;
    log_mean_var(base, nb, &mb, &vb);
    log_mean_var(new_, nn, &mn, &vn);
    out->ratio = exp(mn - mb);
    const double sb = vb / (double)nb, sn = vn / (double)nn;
    out->se = sqrt(sb + sn);
    if (sb + sn == 0) {
        out->t = mn == mb ? 0 : (mn > mb ? INFINITY : -INFINITY);
        out->df = (double)(nb + nn - 2);
        out->p = mn == mb ? 1.0 : 0.0;
        return 0;
    }
    out->t = (mn - mb) / sqrt(sb + sn);
    /* Welch-Satterthwaite degrees of freedom */
    out->df = (sb + sn) * (sb + sn) /
              (sb * sb / (double)(nb - 1) + sn * sn / (double)(nn - 1));
    out->p = opcost_t_two_sided_p(out->t, out->df);
    return 0;
}

double opcost_between_run_sigma(const double *log_ratios, size_t n)
{
    if (n < 8)
        return 0;
    double *x = malloc(n * sizeof *x);
    if (!x)
        return 0;
    for (size_t i = 0; i < n; ++i)
        x[i] = log_ratios[i];
    const double m = opcost_median_inplace(x, n);
    for (size_t i = 0; i < n; ++i)
        x[i] = fabs(log_ratios[i] - m);
    const double mad = opcost_median_inplace(x, n);
    free(x);
    return 1.4826 * mad;
}

double opcost_p_with_run_noise(double log_ratio, double se, double df,
                               double sigma_between)
{
    const double var = se * se + sigma_between * sigma_between;
    if (var == 0)
        return log_ratio == 0 ? 1.0 : 0.0;
    return opcost_t_two_sided_p(log_ratio / sqrt(var), df);
}

typedef struct ranked {
    double p;
    size_t i;
} ranked;

static int by_p(const void *a, const void *b)
{
    const double x = ((const ranked *)a)->p, y = ((const ranked *)b)->p;
    return x < y ? -1 : x > y;
}

/* The non-NAN entries of p in increasing order (their count in *k), or
 * NULL when memory ran out: every p is then set to 1, so nothing is
 * claimed from an adjustment that was not made. */
static ranked *rank_p(double *p, size_t m, size_t *k)
{
    ranked *r = malloc((m ? m : 1) * sizeof *r);
    *k = 0;
    if (!r) {
        for (size_t i = 0; i < m; ++i)
            p[i] = isnan(p[i]) ? p[i] : 1.0;
        return NULL;
    }
    for (size_t i = 0; i < m; ++i)
        if (!isnan(p[i]))
            r[(*k)++] = (ranked){p[i], i};
    qsort(r, *k, sizeof *r, by_p);
    return r;
}

void opcost_holm(double *p, size_t m)
{
    size_t k;
    ranked *r = rank_p(p, m, &k);
    double running = 0;
    for (size_t j = 0; r && j < k; ++j) {
        double adj = (double)(k - j) * r[j].p;
        adj = adj > 1 ? 1 : adj;
        running = adj > running ? adj : running; /* monotone step-down */
        p[r[j].i] = running;
    }
    free(r);
}

void opcost_bh(double *p, size_t m)
{
    size_t k;
    ranked *r = rank_p(p, m, &k);
    double running = 1;
    for (size_t j = k; r && j-- > 0;) {
        const double adj = (double)k / (double)(j + 1) * r[j].p;
        running = adj < running ? adj : running; /* monotone step-up */
        p[r[j].i] = running;
    }
    free(r);
}
