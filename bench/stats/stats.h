/* Summary statistics of a sample array: median, percentiles, the median's
 * distribution-free interval, weighted means (the rules that stop a
 * repetition: bench/measure/stop.h).
 *
 * Percentiles use linear interpolation between the closest ranks (numpy's
 * default, method="linear"): for sorted x[0..n-1] and p in [0, 100],
 * h = (n - 1) p / 100 and the value is x[floor h] + (h - floor h) *
 * (x[floor h + 1] - x[floor h]).
 *
 * The 95% confidence interval of the median is distribution-free: the
 * number X of samples below the true median is binomial(n, 1/2), so the
 * order statistics x_(j) <= median < x_(k) (1-based ranks) hold with
 * probability P(j <= X < k). We take the symmetric k = n + 1 - j with the
 * largest j whose coverage is still >= 0.95. No such interval exists for
 * n < 6 (even [x_(1), x_(n)] covers only 1 - 2^(1-n)).
 *
 * The benchmark's median_us is the median of all samples of all
 * repetitions pooled (see results/README.md): summarise the concatenation. */
#ifndef OPCOST_STATS_H
#define OPCOST_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exact binomial sums up to this n; the normal approximation beyond. */
#define OPCOST_CI_EXACT_MAX_N 1000

typedef enum opcost_ci_method {
    OPCOST_CI_NONE = 0, /* n < 6: no distribution-free 95% interval */
    OPCOST_CI_EXACT,    /* exact binomial(n, 1/2) tail sums */
    OPCOST_CI_NORMAL    /* normal approximation with continuity correction */
} opcost_ci_method;

typedef struct opcost_summary {
    size_t n;
    double median, min, max, p90, mean;
    double stddev;           /* sample standard deviation (n - 1); NAN if n=1 */
    double ci95_lo, ci95_hi; /* x_(j), x_(k); NAN when no interval */
    /* (ci95_hi - ci95_lo) / 2 / |median|; NAN when no interval or the
     * median is 0. */
    double ci95_rel;
    size_t ci95_lo_rank, ci95_hi_rank; /* j < k, 1-based; 0 when none */
    double ci95_coverage;              /* P(j <= X < k); NAN when none */
    opcost_ci_method ci95_method;
} opcost_summary;

/* Ranks j < k (1-based) of the median's 95% interval for n samples and
 * their coverage. Returns the method; OPCOST_CI_NONE (j = k = 0, coverage
 * NAN) when n < 6. Any pointer may be NULL. */
opcost_ci_method opcost_median_ci95_ranks(size_t n, size_t *j, size_t *k,
                                          double *coverage);

/* Percentile p in [0, 100] of sorted[0..n-1] (numpy "linear"); NAN when
 * n = 0 or p is outside [0, 100]. */
double opcost_percentile_sorted(const double *sorted, size_t n, double p);

/* The median of x[0..n-1], sorting x in place; NAN for n = 0. */
double opcost_median_inplace(double *x, size_t n);

/* Summary of x[0..n-1] (left unchanged). Every sample must be finite and
 * n >= 1. Returns 0, or -1 with a message in err. */
int opcost_summarize(const double *x, size_t n, opcost_summary *out, char *err,
                     size_t errlen);

/* The same, sorting x in place instead of allocating a copy. */
int opcost_summarize_inplace(double *x, size_t n, opcost_summary *out,
                             char *err, size_t errlen);

/* ---- Intervals from repetitions. A run's median varies between runs by
 * more than its pooled samples say (the machine's state drifts between
 * and within processes); the repetitions' medians see part of that. */

/* Student's t quantile t(0.975, df) for df >= 1 (a table to 30, then the
 * Cornish-Fisher expansion around the normal); NAN for df = 0. */
double opcost_t975(size_t df);

/* The relative half-width of a 95% prediction interval for the median of
 * another run like this one, from this run's r repetition medians (all
 * > 0): exp(t975(r - 1) * s * sqrt(2 / r)) - 1, s the sample standard
 * deviation of their logarithms (both runs' means vary by s^2 / r). NAN
 * when r < 2. */
double opcost_reps_ci95_rel(const double *rep_medians, size_t r);

/* The run-to-run noise of a point's median, from points measured twice in
 * one run minutes apart: the 95th percentile (nearest rank) of
 * |log(second / first)| over their rows, so that 95 % of them moved by
 * less than a factor exp(noise). About zero (a shift of the whole host
 * between the two measurements is part of what the next run sees), and
 * no normal assumption: the ratios are heavy-tailed (here the 95th
 * percentile of |log ratio| between two runs was 0.59 where 1.96 x
 * 1.4826 x their median gives 0.36). NAN with fewer than
 * OPCOST_RUN_NOISE_MIN_PAIRS finite ratios. */
double opcost_run_noise_q95(const double *log_ratios, size_t n);
#define OPCOST_RUN_NOISE_MIN_PAIRS 8

/* A row's interval for another run's median: the wider of its
 * repetitions' own (ci_reps) and exp(noise) - 1 of the run noise (as
 * opcost_run_noise_q95 gives it); either may be NAN (not known), both:
 * NAN. */
double opcost_ci95_with_run_noise(double ci_reps, double noise);

/* ---- Weighted means (a distribution's expected cost per call: sum freq *
 * x / sum freq). Weights are kept relative to the largest so far and the
 * mean is updated incrementally, so no finite positive weights or values
 * overflow it (two shapes of freq 1e308 gave 0 with plain sums). */
typedef struct opcost_wmean {
    double mean;
    double wsum; /* in units of wmax */
    double wmax;
} opcost_wmean;

/* Adds x with weight w; weights that are not > 0 are ignored. */
void opcost_wmean_add(opcost_wmean *m, double w, double x);

/* The mean; NAN when no weight was added. */
double opcost_wmean_value(const opcost_wmean *m);

/* The k-th smallest (0-based, k < n) of x[0..n-1], reordering x so that
 * x[0..k-1] <= x[k] <= x[k+1..n-1]; linear on average, ties included. */
double opcost_select_kth(double *x, size_t n, size_t k);

/* ci95_rel of x[0..n-1] by selection, without a full sort; scratch holds
 * n doubles. NAN when n < 6 or the median is 0. */
double opcost_median_ci95_rel(const double *x, size_t n, double *scratch);

#ifdef __cplusplus
}
#endif

#endif
