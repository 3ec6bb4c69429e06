/* Accurate long sums: the blocked summation every CPU kernel that reduces a
 * row (or, for the weight gradient, a column over rows) uses.
 *
 * A plain running sum in float32 loses everything past 2^24 terms (a row
 * of ones stops growing at 16777216) and its error grows with the number
 * of terms; blocked summation bounds it independently of N: each float32
 * (float64 for float64 inputs) partial sum adds at most
 * ROWOPS_SUM_LANE_TERMS terms, and the block sums are then added in double,
 * compensated (Neumaier), so the total's relative error over nonnegative
 * terms is at most about (ROWOPS_SUM_LANE_TERMS + log2 of the lanes
 * combined + 2) units of the accumulation dtype's rounding, whatever N.
 * That keeps rstd within the bound of docs/operators.md (Contract: accuracy)
 * while the hot loops still run on float32 vectors; the double work is once per
 * block. */
#ifndef ROWOPS_SUM_H
#define ROWOPS_SUM_H

#include <math.h>
#include <stdint.h>

/* Terms per float32 (float64) partial sum: per vector lane in the SIMD
 * kernels, per partial in the scalar ones. */
#define ROWOPS_SUM_LANE_TERMS 128

/* The contract's bound (docs/operators.md, Contract: accuracy) on rstd's
 * relative error, in units of the accumulation dtype's epsilon (2^-23, or 2^-52
 * for float64), for every N up to 2^31: the blocked sum contributes at most
 * about (ROWOPS_SUM_LANE_TERMS + 7) / 4 of them (half its relative error,
 * through the square root), the mean, eps, square root and reciprocal a
 * few more. */
#define ROWOPS_RSTD_BOUND_EPS 64

/* A compensated double sum of block sums. */
typedef struct rowops_sum {
    double s, c;
} rowops_sum;

static inline void rowops_sum_add(rowops_sum *a, double v)
{
    const double t = a->s + v;
    a->c += fabs(a->s) >= fabs(v) ? (a->s - t) + v : (v - t) + a->s;
    a->s = t;
}

/* The sum. An infinite or NaN sum is returned as it is (its compensation
 * is meaningless: Inf - Inf). */
static inline double rowops_sum_value(const rowops_sum *a)
{
    return isfinite(a->s) ? a->s + a->c : a->s;
}

/* End of the block that starts at i: at most `block` elements, not past n. */
static inline int64_t rowops_sum_block_end(int64_t i, int64_t block, int64_t n)
{
    return n - i > block ? i + block : n;
}

#endif
