/* The significance test of `opcost compare`: Welch's t-test on the
 * logarithms of per-repetition medians, and the corrections for many tests
 * (Holm's step-down, Benjamini and Hochberg's step-up).
 *
 * The run-to-run part of the noise is added to each pair's variance
 * (opcost_between_run_sigma), so identical runs on a noisy machine are not
 * flagged while a change larger than that noise still is.
 *
 * Why not a rank test: with 5 repetitions a side, Mann-Whitney's smallest
 * two-sided p-value is 2 / C(10, 5) = 0.0079, so after Holm's correction
 * over even ten comparisons nothing could ever be significant. A
 * repetition median is a median of many samples, close to normal; its
 * logarithm makes a ratio symmetric, so the test is on the ratio of
 * typical times. */
#ifndef OPCOST_SIGNIFICANCE_H
#define OPCOST_SIGNIFICANCE_H

#include <stddef.h>

/* Regularized incomplete beta I_x(a, b), a, b > 0, x in [0, 1]. */
double opcost_betainc(double a, double b, double x);

/* Two-sided p-value of Student's t with df degrees of freedom. */
double opcost_t_two_sided_p(double t, double df);

typedef struct opcost_welch {
    double ratio; /* exp(mean log new - mean log base): new / base */
    double se;    /* standard error of log(ratio) within the runs */
    double t, df, p;
} opcost_welch;

/* Welch's test of log(new) against log(base); each side needs >= 2
 * positive values. Returns 0, or -1 when a side is too small. When both
 * sides have zero variance the p-value is 0 for different means, 1 for
 * equal ones. */
int opcost_welch_log(const double *base, size_t nb, const double *new_,
                     size_t nn, opcost_welch *out);

/* Run-to-run noise: repetitions within one run share the machine's state
 * of that run, so two runs of the same code differ by more than their
 * repetitions suggest. Its scale is estimated robustly from all the pairs
 * of a comparison (most of which did not change): 1.4826 x the median
 * absolute deviation of their log ratios; 0 with fewer than 8 pairs. */
double opcost_between_run_sigma(const double *log_ratios, size_t n);

/* Two-sided p-value of a log ratio with within-run standard error se and
 * df degrees of freedom, its variance widened by the between-run sigma. */
double opcost_p_with_run_noise(double log_ratio, double se, double df,
                               double sigma_between);

/* Holm's step-down adjustment of m p-values, in place (NAN entries are
 * left out and stay NAN; where memory runs out, the others become 1:
 * nothing is claimed). */
void opcost_holm(double *p, size_t m);

/* Benjamini and Hochberg's step-up adjustment of m p-values, in place
 * (NAN entries are left out and stay NAN): the adjusted p-values below
 * alpha are a set of discoveries of which at most a fraction alpha is
 * expected to be false (for independent or positively dependent tests).
 * Where every null holds (an A/A) that is the chance of any discovery, as
 * with Holm's; where a change moves many of the tests, it finds far more
 * of them than Holm's, which guards each one as if it were alone. */
void opcost_bh(double *p, size_t m);

#endif
