/* The round, the unit of measurement. The members of a comparison (the
 * paths and kernel variants of a point, the bandwidth probe, two builds)
 * each take one sample per round, in an order shuffled anew every round,
 * on the same buffers; the log ratio of two members' samples in one round
 * cancels whatever moved the host as a whole between rounds
 * (bench/stats/paired.h estimates the ratio and its interval from them).
 * Rounds go on until the interval of every ratio the caller tracks is
 * within a target, or the budget is spent; the result says which.
 *
 * A member is anything that can take a sample: a path timed in this
 * process (bench/measure/point.c), a build timed by a worker process
 * (opcost ab). A member whose samples take many times as long as the
 * typical member's (a reference path 100x slower than the kernel) takes
 * part in every 2nd, 4th, ... round only, so that it does not hold the
 * others to its pace: its ratios rest on fewer rounds (the pair count
 * says how many). Torch-free: the tests drive it with simulated members. */
#ifndef OPCOST_ROUNDS_H
#define OPCOST_ROUNDS_H

#include "paired.h"

#include <stddef.h>
#include <stdint.h>

typedef struct opcost_member {
    const char *name;
    /* One sample: *us per call, *device_us the device's time per call on
     * a GPU (NAN elsewhere). 0, or -1 with the reason in err. */
    int (*sample)(void *ctx, double *us, double *device_us, char *err,
                  size_t len);
    void *ctx;
    /* how long one sample takes (from calibration); the rounds use the
     * first two samples once they have them */
    double cost_us;
    /* members of one group (>= 1) take their samples of a round back to
     * back, in an order shuffled per round, the groups' order shuffled
     * too: a ratio within a group spans one pair of samples, not a whole
     * round of other members (0: a group of its own) */
    int group;
    /* set by opcost_rounds_run */
    int stride; /* takes part in the rounds r with r % stride == 0 */
    int failed; /* a sample failed (error says why): no more */
    char error[512];
    size_t n, cap;     /* samples taken */
    double *us;        /* per sample */
    double *device_us; /* per sample, NAN where none */
    int64_t *round;    /* per sample: the round it was taken in */
} opcost_member;

/* A ratio the rounds must pin down: member a over member b. */
typedef struct opcost_rounds_pair {
    int a, b;
} opcost_rounds_pair;

typedef struct opcost_rounds_rule {
    double target_rel; /* stop once every pair's ci95_rel is at most this */
    /* ... or this much time was spent and every pair shares at least
     * OPCOST_PAIRED_MIN rounds */
    double budget_s;
    size_t min_rounds; /* never fewer (at least OPCOST_PAIRED_MIN) */
    size_t max_rounds; /* never more */
    /* a member whose samples take at least this many times the median
     * member's takes part in every 2^k-th round (k up to 6) */
    double slow_factor;
    int (*interrupted)(void); /* NULL: never; checked every round */
    /* where the target or the budget would stop the rounds, they go on
     * while hold(hold_ctx) says so, for at most hold_s seconds from the
     * first such moment (a point whose probe saw too few rounds at full
     * bandwidth waits for it: bandwidth_state.h); NULL: never */
    int (*hold)(void *hold_ctx);
    void *hold_ctx;
    double hold_s;
    double (*now_s)(void); /* NULL: the monotonic clock */
    uint64_t seed;         /* the order of each round */
} opcost_rounds_rule;

typedef enum opcost_rounds_stop {
    OPCOST_ROUNDS_TARGET = 0,  /* every tracked interval within the target */
    OPCOST_ROUNDS_BUDGET,      /* the time budget was spent */
    OPCOST_ROUNDS_MAX,         /* max_rounds were run */
    OPCOST_ROUNDS_INTERRUPTED, /* rule->interrupted said so */
    OPCOST_ROUNDS_FAILED,      /* every member failed */
    OPCOST_ROUNDS_STOP_COUNT
} opcost_rounds_stop;

/* "target", "budget", "rounds", "interrupted", "failed". */
const char *opcost_rounds_stop_name(opcost_rounds_stop s);

typedef struct opcost_rounds_result {
    size_t rounds;
    opcost_rounds_stop stop;
    double seconds;
    double held_s; /* of seconds: went on because hold said so */
    /* the widest interval of the tracked pairs at the end; NAN when none
     * could be estimated */
    double worst_ci95_rel;
} opcost_rounds_result;

/* Runs rounds over the members m[0..nm-1] (their samples appended, a
 * failed member left out from then on) until rule says stop; pairs[] are
 * the ratios whose intervals decide it (pairs with a failed member are
 * dropped; none at all: only the budget and max_rounds stop). 0, or -1
 * with err when memory ran out. */
int opcost_rounds_run(opcost_member *m, int nm, const opcost_rounds_pair *pairs,
                      int np, const opcost_rounds_rule *rule,
                      opcost_rounds_result *res, char *err, size_t len);

/* The paired estimate of a / b over the rounds both took a sample in. 0,
 * or -1 with out's ratio NAN (too few pairs, or memory). */
int opcost_member_ratio(const opcost_member *a, const opcost_member *b,
                        uint64_t seed, opcost_paired *out);

/* The same of the mean log of members a[0..na-1] over the mean log of
 * b[0..nb-1], over the rounds all of them took a sample in (the first of
 * each): several processes of one build against several of another, a
 * process-wide placement averaged over them. At most 64 a side. */
int opcost_members_ratio(const opcost_member *const *a, int na,
                         const opcost_member *const *b, int nb, uint64_t seed,
                         opcost_paired *out);

/* The same of any weighted sum of log times: sum w[i] log(m[i]) per round
 * over the rounds all k (1 .. OPCOST_COMBINATION_MAX) took a sample in,
 * trimmed and bootstrapped as a ratio (opcost_paired_estimate). */
#define OPCOST_COMBINATION_MAX 128
int opcost_members_combination(const opcost_member *const *m, const double *w,
                               int k, uint64_t seed, opcost_paired *out);

/* What the processes of a side differ by beyond their rounds and beyond
 * what the two sides' processes of one index share, from k processes a
 * side (process i of base and of new started one after the other): as
 * k - 1 contrasts (Helmert's), the j-th new's mean log of processes
 * 0..j-1 over its process j less base's same, scaled so that each has the
 * variance of one difference between two processes of a side (2 sigma^2
 * for a process's own sigma). What two processes of one index share
 * (A/A on Zen 4, 2026-12-05: a side's contrasts read 2-4x what the sides'
 * ratios scattered by below half the LLC) cancels in the ratio of the
 * sides' means as it does here. d[j - 1] with its standard error
 * se[j - 1]; returns how many were estimated (one whose rounds are too
 * few is left out), or -1 when k is not 2..64. */
int opcost_members_cross_contrasts(const opcost_member *const *base,
                                   const opcost_member *const *new_side, int k,
                                   uint64_t seed, double *d, double *se);

/* The samples of members m[0..k-1] as one member's, in round order (out
 * holds copies: opcost_member_free it). 0, or -1 when memory ran out or k
 * is not 0..64. */
int opcost_member_merge(const opcost_member *const *m, int k,
                        opcost_member *out);

/* Clears out, names it name and gives it room for cap samples (at least
 * one), none taken: 0, or -1 when memory ran out (nothing left to free). */
int opcost_member_alloc(opcost_member *out, const char *name, size_t cap);

/* Frees a member's samples (the member itself is the caller's). */
void opcost_member_free(opcost_member *m);

#endif
