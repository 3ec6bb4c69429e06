/* The significance test of `opcost compare`: Welch's t-test on the
 * logarithms of per-repetition medians, and Holm's step-down correction.
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
    double t, df, p;
} opcost_welch;

/* Welch's test of log(new) against log(base); each side needs >= 2
 * positive values. Returns 0, or -1 when a side is too small. When both
 * sides have zero variance the p-value is 0 for different means, 1 for
 * equal ones. */
int opcost_welch_log(const double *base, size_t nb, const double *new_,
                     size_t nn, opcost_welch *out);

/* Holm's step-down adjustment of m p-values, in place (NAN entries are
 * left out and stay NAN). */
void opcost_holm(double *p, size_t m);

#endif
