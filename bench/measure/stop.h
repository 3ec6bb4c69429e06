/* The rules that decide when a repetition of timed samples has taken
 * enough: a time budget, or the 95 % interval of the median within a
 * target (bench/stats/stats.h computes it). */
#ifndef OPCOST_STOP_H
#define OPCOST_STOP_H

#include <stddef.h>

/* ---- Stopping rules.
 * After each sample the caller asks should_stop with all samples taken so
 * far in this repetition (microseconds) and the seconds elapsed since it
 * began. Returns 1 when the repetition may stop, 0 to continue, -1 on an
 * allocation failure. stopped_by then names why: "budget", "noise" or
 * "max_samples". Never stops before min_samples. */
typedef struct opcost_stop_rule opcost_stop_rule;
struct opcost_stop_rule {
    int (*should_stop)(opcost_stop_rule *self, const double *samples, size_t n,
                       double elapsed_s);
    const char *name; /* "budget" or "noise" */
    double budget_s;
    size_t min_samples;
    size_t max_samples; /* 0: no cap */
    /* noise only: stop once ci95_rel <= target_rel. The interval is
     * recomputed (O(n) selection) only after max(check_every, n / 16) new
     * samples, so a call costs O(1) amortised. */
    double target_rel;
    size_t check_every;
    /* state, reset by opcost_stop_reset */
    const char *stopped_by;
    double last_ci95_rel; /* NAN until first computed */
    size_t next_check;
    double *scratch;
    size_t scratch_cap;
};

#define OPCOST_NOISE_TARGET_DEFAULT 0.01
#define OPCOST_NOISE_MIN_SAMPLES_DEFAULT 10
#define OPCOST_NOISE_CHECK_EVERY_DEFAULT 8

/* Stop once elapsed_s >= budget_s and n >= min_samples (min_samples >= 1,
 * budget_s >= 0 and finite). Returns 0, or -1 naming the bad argument. */
int opcost_stop_budget(opcost_stop_rule *r, double budget_s, size_t min_samples,
                       char *err, size_t errlen);

/* Stop once n >= min_samples and either ci95_rel <= target_rel or
 * elapsed_s >= budget_s, whichever comes first. target_rel in (0, 1),
 * min_samples >= 6 (the fewest with an interval), check_every >= 1. */
int opcost_stop_noise(opcost_stop_rule *r, double target_rel, double budget_s,
                      size_t min_samples, size_t check_every, char *err,
                      size_t errlen);

/* Clears the state for a new repetition (keeps the scratch buffer). */
void opcost_stop_reset(opcost_stop_rule *r);

/* Frees the scratch buffer. */
void opcost_stop_free(opcost_stop_rule *r);

static inline int opcost_stop_check(opcost_stop_rule *r, const double *samples,
                                    size_t n, double elapsed_s)
{
    return r->should_stop(r, samples, n, elapsed_s);
}

#endif
