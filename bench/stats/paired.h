/* Paired ratios: two members of a measurement (two builds, two kernel
 * variants, a path and its baseline, a path and the bandwidth probe) take
 * one sample each per round, in an order shuffled per round, on the same
 * buffers. The log of the ratio within a round cancels what moves the host
 * as a whole (these hosts drift 2x in memory bandwidth over seconds); what
 * is left is each sample's own noise: heavy-tailed (a sample that met an
 * interrupt or another tenant), and correlated between neighbouring rounds
 * (a slow spell that one member felt more than the other).
 *
 * The estimator: the 20 % trimmed mean of the per-round log ratios
 * (robust to the tails: a fifth of the rounds on each side may be
 * anything), its standard error from a moving-block bootstrap (blocks of
 * neighbouring rounds keep their correlation: the block grows with the
 * measured lag-1 autocorrelation), and a 95 % interval from Student's t
 * with one degree of freedom per block less one. The verdict compares the
 * interval with a threshold band around 1 (opcost_paired_verdict). */
#ifndef OPCOST_PAIRED_H
#define OPCOST_PAIRED_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The fewest pairs an estimate is made from. */
#define OPCOST_PAIRED_MIN 8
/* Bootstrap resamples of one estimate. */
#define OPCOST_PAIRED_RESAMPLES 199

typedef struct opcost_paired {
    size_t n;         /* pairs */
    double log_ratio; /* 20 % trimmed mean of the log ratios */
    double se;        /* its standard error (moving-block bootstrap) */
    size_t block;     /* the bootstrap's block length, in rounds */
    double lag1;      /* lag-1 autocorrelation of the (winsorized) logs */
    double df;        /* of the interval: blocks - 1 */
    double half;      /* 95 % half-width of the interval of log_ratio */
    double ratio;     /* exp(log_ratio) */
    /* expm1(half): the interval is ratio / (1 + c) .. ratio * (1 + c) */
    double ci95_rel;
    double p; /* two-sided p-value of log ratio = 0 */
} opcost_paired;

/* Estimates from the per-round log ratios d[0..n-1] in round order (d is
 * not changed; non-finite entries are refused). seed makes the bootstrap
 * reproducible. Returns 0, or -1 when n < OPCOST_PAIRED_MIN, an entry is
 * not finite or memory ran out (out then holds NANs and n). */
int opcost_paired_estimate(const double *d, size_t n, uint64_t seed,
                           opcost_paired *out);

/* The per-round log ratios log(a / b) of two members' samples, each given
 * as (round, value) in increasing round order (several samples of one
 * member in one round: the first is used); rounds where only one member
 * took a sample are skipped. out has room for min(na, nb). Returns the
 * number of pairs. */
size_t opcost_paired_logs(const int64_t *round_a, const double *a, size_t na,
                          const int64_t *round_b, const double *b, size_t nb,
                          double *out);

typedef enum opcost_verdict {
    OPCOST_VERDICT_NONE = 0, /* no estimate */
    OPCOST_VERDICT_SAME,     /* the interval lies inside the band */
    OPCOST_VERDICT_FASTER,   /* significant, and below the band */
    OPCOST_VERDICT_SLOWER,   /* significant, and above the band */
    OPCOST_VERDICT_UNSURE,   /* the interval straddles the band's edge */
    OPCOST_VERDICT_COUNT
} opcost_verdict;

/* "", "same", "faster", "slower", "unsure". */
const char *opcost_verdict_name(opcost_verdict v);
/* The verdict of a name (the empty name is NONE); -1 if unknown. */
int opcost_verdict_from_name(const char *name, opcost_verdict *v);

/* The verdict of an estimate against the band [1 / (1 + threshold),
 * 1 + threshold] (a ratio of time: above is slower): same when the whole
 * interval lies inside the band; slower (faster) when p (adjusted for the
 * other tests it is one of, e.g. Holm's) is below alpha and the ratio
 * itself is beyond the band; unsure otherwise. NONE without an estimate. */
opcost_verdict opcost_paired_verdict(const opcost_paired *e, double threshold,
                                     double p, double alpha);

/* The same from a ratio and its ci95_rel (as a results row holds them). */
opcost_verdict opcost_verdict_of(double ratio, double ci95_rel,
                                 double threshold, double p, double alpha);

/* The scatter of n estimates of one kind, in the order of a size (log
 * ratios lr[i], standard errors se[i] > 0), beyond what their own errors
 * explain: the tau at which the successive differences, each divided by
 * sqrt(se_i^2 + se_i+1^2 + 2 tau^2), have the median of a standard
 * normal's |Z| (0; or found by bisection). Successive differences: a
 * change shared by the estimates, or one that varies smoothly with the
 * size, is not scatter; one estimate off on its own is. Standardized:
 * estimates of unequal precision (a narrow interval at B = 1, a wide one
 * at B = 8192) are each held to their own. NAN when n <
 * OPCOST_SCATTER_MIN or an entry is not finite. In opcost ab it is what
 * two processes differ by beyond the rounds: what each allocates and
 * where (docs/comparing.md). */
#define OPCOST_SCATTER_MIN 8
double opcost_paired_excess_scatter(const double *lr, const double *se,
                                    size_t n);

/* The spread of n estimates whose true value is 0 (d[i] with standard
 * errors se[i] > 0) beyond their own errors: the tau at which d[i] /
 * sqrt(se_i^2 + tau^2) have the median of a standard normal's |Z| (0; or
 * by bisection). About 0, not about their median: an offset all of them
 * share counts. In opcost ab the d are log ratios between two processes
 * of one build over the same rounds: what a process's own placement in
 * memory moves (docs/comparing.md). NAN when n < OPCOST_SPREAD_MIN or an
 * entry is not finite. */
#define OPCOST_SPREAD_MIN 2
double opcost_paired_excess_spread(const double *d, const double *se, size_t n);

/* One point's own spread from its n contrasts d[i], se[i] (0 each but for
 * the spread): sqrt(mean(d^2 - se^2)), 0 where that is not > 0 or an
 * entry is not finite or an se not > 0. In opcost ab a point takes it where
 * it is beyond the spread over the path's points: one process off at one
 * point alone (its outputs landed badly there; A/A on the Zen 5 host:
 * single processes 3-17 % off at single eager points). From a few
 * contrasts it scatters, so a point above the path takes it whole and one
 * below keeps the path's: conservative by design (a chi-square gate that
 * kept the path's unless the point's was beyond its 99th percentile left
 * one false `slower` in four A/A runs modelled, none without it:
 * results/experiments/20261205-ab-cross-contrasts). */
double opcost_paired_point_excess(const double *d, const double *se, size_t n);

/* An expected cost over points measured apart: R = sum a_i r_i / sum a_i
 * (a_i > 0: a point's weight times its baseline's cost, r_i its paired
 * ratio). The points' estimates are independent, so by the delta method
 * se(log R)^2 = sum (a_i r_i / sum a_j r_j)^2 se_i^2; the interval uses the
 * smallest df of the points. Points without an estimate (n == 0 or a NAN
 * ratio) make the result NAN. out->n is the number of points. */
int opcost_paired_weighted(const double *a, const opcost_paired *r, size_t n,
                           opcost_paired *out);

#ifdef __cplusplus
}
#endif

#endif
