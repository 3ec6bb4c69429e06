#include "rounds.h"
#include "timer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* How many members a round holds at most (a point's paths x variants, the
 * probe; in opcost ab up to 8 processes of each of two builds of them:
 * 16 x 64 + 1). */
#define MAX_MEMBERS 2048
/* A member takes part in every 2^MAX_SHIFT-th round at the rarest. */
#define MAX_SHIFT 6
/* Intervals are re-estimated when the rounds have grown by a quarter. */
#define CHECK_GROWTH 1.25

static const char *const stop_names[OPCOST_ROUNDS_STOP_COUNT] = {
    "target", "budget", "rounds", "interrupted", "failed"};

const char *opcost_rounds_stop_name(opcost_rounds_stop s)
{
    return (unsigned)s < OPCOST_ROUNDS_STOP_COUNT ? stop_names[s] : "?";
}

static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static double monotonic_s(void)
{
    return (double)opcost_now_ns() * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A member's cost: the shorter of its first two samples (its calibration
 * may have timed a compilation), else what the caller said. */
static double cost_of(const opcost_member *m)
{
    if (m->n >= 2)
        return m->us[0] < m->us[1] ? m->us[0] : m->us[1];
    return m->cost_us;
}

/* Every member's stride: 1, or the power of two that keeps a slow
 * member's share of a round near slow_factor times the median member's
 * (costs per sample, so a member's batch counts). */
static void set_strides(opcost_member *m, int nm, double slow_factor)
{
    double cost[MAX_MEMBERS];
    int k = 0;
    for (int i = 0; i < nm; ++i)
        if (!m[i].failed && cost_of(&m[i]) > 0)
            cost[k++] = cost_of(&m[i]);
    qsort(cost, (size_t)k, sizeof *cost, cmp_double);
    const double median = k ? cost[k / 2] : 0;
    for (int i = 0; i < nm; ++i) {
        int stride = 1;
        if (median > 0 && slow_factor > 0)
            while (stride < (1 << MAX_SHIFT) &&
                   cost_of(&m[i]) >= slow_factor * median * 2 * stride)
                stride *= 2;
        m[i].stride = stride;
    }
}

/* This round's order: a shuffle of the members, then each group gathered
 * at its first member's place (the groups' order and the order within a
 * group both stay random). */
static void shuffle_round(const opcost_member *m, int nm, int *order,
                          uint64_t *rng)
{
    int shuffled[MAX_MEMBERS], taken[MAX_MEMBERS];
    for (int i = 0; i < nm; ++i)
        shuffled[i] = i, taken[i] = 0;
    for (int i = nm - 1; i > 0; --i) {
        const int j = (int)(rng_next(rng) % (uint64_t)(i + 1));
        const int t = shuffled[i];
        shuffled[i] = shuffled[j];
        shuffled[j] = t;
    }
    int k = 0;
    for (int i = 0; i < nm; ++i) {
        const int x = shuffled[i];
        if (taken[x])
            continue;
        order[k++] = x;
        taken[x] = 1;
        for (int j = i + 1; m[x].group > 0 && j < nm; ++j)
            if (!taken[shuffled[j]] && m[shuffled[j]].group == m[x].group) {
                order[k++] = shuffled[j];
                taken[shuffled[j]] = 1;
            }
    }
}

static int take_sample(opcost_member *m, int64_t round)
{
    if (m->n == m->cap) {
        const size_t cap = m->cap ? 2 * m->cap : 256;
        double *us = realloc(m->us, cap * sizeof *us);
        if (us)
            m->us = us;
        double *dev = us ? realloc(m->device_us, cap * sizeof *dev) : NULL;
        if (dev)
            m->device_us = dev;
        int64_t *r = dev ? realloc(m->round, cap * sizeof *r) : NULL;
        if (r)
            m->round = r;
        if (!r)
            return -1;
        m->cap = cap;
    }
    double us = NAN, dev = NAN;
    if (m->sample(m->ctx, &us, &dev, m->error, sizeof m->error)) {
        m->failed = 1;
        return 0;
    }
    m->us[m->n] = us;
    m->device_us[m->n] = dev;
    m->round[m->n] = round;
    ++m->n;
    return 0;
}

int opcost_member_ratio(const opcost_member *a, const opcost_member *b,
                        uint64_t seed, opcost_paired *out)
{
    return opcost_members_ratio(&a, 1, &b, 1, seed, out);
}

int opcost_members_ratio(const opcost_member *const *a, int na,
                         const opcost_member *const *b, int nb, uint64_t seed,
                         opcost_paired *out)
{
    enum { MAX_SIDE = OPCOST_COMBINATION_MAX / 2 };
    const opcost_member *m[2 * MAX_SIDE];
    double w[2 * MAX_SIDE];
    if (na < 1 || nb < 1 || na > MAX_SIDE || nb > MAX_SIDE) {
        opcost_paired_estimate(NULL, 0, seed, out);
        return -1;
    }
    for (int i = 0; i < na + nb; ++i) {
        m[i] = i < na ? a[i] : b[i - na];
        w[i] = i < na ? 1.0 / na : -1.0 / nb;
    }
    return opcost_members_combination(m, w, na + nb, seed, out);
}

int opcost_members_combination(const opcost_member *const *m, const double *w,
                               int k, uint64_t seed, opcost_paired *out)
{
    size_t at[OPCOST_COMBINATION_MAX] = {0}, cap = SIZE_MAX;
    if (k < 1 || k > OPCOST_COMBINATION_MAX) {
        opcost_paired_estimate(NULL, 0, seed, out);
        return -1;
    }
    for (int i = 0; i < k; ++i)
        cap = m[i]->n < cap ? m[i]->n : cap;
    double *d = malloc((cap ? cap : 1) * sizeof *d);
    if (!d) {
        opcost_paired_estimate(NULL, 0, seed, out);
        return -1;
    }
    size_t n = 0;
    for (;;) {
        /* the latest round any member is at; all brought up to it */
        int64_t r = INT64_MIN;
        int ended = 0;
        for (int i = 0; i < k && !ended; ++i) {
            ended = at[i] >= m[i]->n;
            if (!ended && m[i]->round[at[i]] > r)
                r = m[i]->round[at[i]];
        }
        int all = !ended;
        for (int i = 0; i < k && all; ++i) {
            while (at[i] < m[i]->n && m[i]->round[at[i]] < r)
                ++at[i];
            all = at[i] < m[i]->n && m[i]->round[at[i]] == r;
        }
        if (ended)
            break;
        if (!all)
            continue;
        /* round r, in every member: the first sample of each */
        double sum = 0;
        int positive = 1;
        for (int i = 0; i < k; ++i) {
            const double us = m[i]->us[at[i]];
            positive &= us > 0;
            if (us > 0)
                sum += w[i] * log(us);
            while (at[i] < m[i]->n && m[i]->round[at[i]] == r)
                ++at[i];
        }
        if (positive)
            d[n++] = sum;
    }
    const int rc = opcost_paired_estimate(d, n, seed, out);
    free(d);
    return rc;
}

int opcost_members_cross_contrasts(const opcost_member *const *base,
                                   const opcost_member *const *new_side, int k,
                                   uint64_t seed, double *d, double *se)
{
    if (k < 2 || 2 * k > OPCOST_COMBINATION_MAX)
        return -1;
    int n = 0;
    for (int j = 1; j < k; ++j) {
        /* per side: the mean log of processes 0 .. j-1 less process j's,
         * times sqrt(2j / (j + 1)) (then one difference between two
         * processes: 2 sigma^2); new's less base's, over sqrt(2) to keep
         * that scale */
        const opcost_member *m[OPCOST_COMBINATION_MAX];
        double w[OPCOST_COMBINATION_MAX];
        const double scale = sqrt((double)j / (j + 1));
        int q = 0;
        for (int i = 0; i <= j; ++i) {
            const double wi = scale * (i < j ? 1.0 / j : -1.0);
            m[q] = new_side[i];
            w[q++] = wi;
            m[q] = base[i];
            w[q++] = -wi;
        }
        opcost_paired e;
        if (opcost_members_combination(m, w, q, seed, &e) || !(e.se > 0))
            continue;
        d[n] = e.log_ratio;
        se[n++] = e.se;
    }
    return n;
}

/* The widest interval of the live pairs; INFINITY while one cannot be
 * estimated yet, NAN when there are none. */
static double widest(const opcost_member *m, const opcost_rounds_pair *pairs,
                     int np, uint64_t seed)
{
    double worst = NAN;
    for (int i = 0; i < np; ++i) {
        const opcost_member *a = &m[pairs[i].a], *b = &m[pairs[i].b];
        if (a->failed || b->failed)
            continue;
        opcost_paired e;
        const double c = opcost_member_ratio(a, b, seed + (uint64_t)i, &e)
                             ? INFINITY
                             : e.ci95_rel;
        worst = isnan(worst) || c > worst ? c : worst;
    }
    return worst;
}

/* Whether the rounds go on where they would stop (rule->hold), at most
 * rule->hold_s from the first such moment (*since); *any once they did. */
static int held(const opcost_rounds_rule *rule, double now, double *since,
                int *any)
{
    if (!rule->hold || !(rule->hold_s > 0))
        return 0;
    if (*since < 0)
        *since = now;
    if (now - *since >= rule->hold_s || !rule->hold(rule->hold_ctx))
        return 0;
    *any = 1;
    return 1;
}

/* Whether every live pair shares OPCOST_PAIRED_MIN rounds: the budget
 * stops the rounds only then (a slow member's stride leaves it fewer). */
static int pairs_estimable(const opcost_member *m, const opcost_rounds_pair *p,
                           int np)
{
    for (int i = 0; i < np; ++i) {
        const opcost_member *a = &m[p[i].a], *b = &m[p[i].b];
        if (a->failed || b->failed)
            continue;
        size_t x = 0, y = 0, shared = 0;
        while (x < a->n && y < b->n && shared < OPCOST_PAIRED_MIN) {
            if (a->round[x] < b->round[y])
                ++x;
            else if (b->round[y] < a->round[x])
                ++y;
            else
                ++shared, ++x, ++y;
        }
        if (shared < OPCOST_PAIRED_MIN)
            return 0;
    }
    return 1;
}

int opcost_rounds_run(opcost_member *m, int nm, const opcost_rounds_pair *pairs,
                      int np, const opcost_rounds_rule *rule,
                      opcost_rounds_result *res, char *err, size_t len)
{
    memset(res, 0, sizeof *res);
    res->worst_ci95_rel = NAN;
    if (nm < 0 || nm > MAX_MEMBERS) {
        snprintf(err, len, "members: %d, at most %d", nm, MAX_MEMBERS);
        return -1;
    }
    double (*now)(void) = rule->now_s ? rule->now_s : monotonic_s;
    const size_t min_rounds = rule->min_rounds > OPCOST_PAIRED_MIN
                                  ? rule->min_rounds
                                  : OPCOST_PAIRED_MIN;
    for (int i = 0; i < nm; ++i)
        m[i].stride = 1; /* every member in the first two rounds */
    int order[MAX_MEMBERS];
    uint64_t rng = rule->seed * 0x9E3779B97F4A7C15ull | 1;
    const double start = now();
    double hold_since = -1;
    int held_any = 0;
    size_t next_check = min_rounds;
    for (size_t r = 0;; ++r) {
        shuffle_round(m, nm, order, &rng);
        int live = 0;
        for (int i = 0; i < nm; ++i) {
            opcost_member *x = &m[order[i]];
            if (x->failed || r % (size_t)x->stride)
                continue;
            if (take_sample(x, (int64_t)r)) {
                snprintf(err, len, "out of memory (samples of %s)", x->name);
                res->rounds = r + 1;
                return -1;
            }
            live += !x->failed;
        }
        res->rounds = r + 1;
        res->seconds = now() - start;
        if (r == 1)
            set_strides(m, nm, rule->slow_factor);
        if (!live) {
            res->stop = OPCOST_ROUNDS_FAILED;
            break;
        }
        if (rule->interrupted && rule->interrupted()) {
            res->stop = OPCOST_ROUNDS_INTERRUPTED;
            break;
        }
        if (res->rounds < min_rounds)
            continue;
        if (res->rounds >= next_check) {
            const double w = widest(m, pairs, np, rule->seed);
            if (w <= rule->target_rel &&
                !held(rule, res->seconds, &hold_since, &held_any)) {
                res->stop = OPCOST_ROUNDS_TARGET;
                break;
            }
            const double grown = ceil((double)res->rounds * CHECK_GROWTH);
            next_check = (size_t)grown > res->rounds + 1 ? (size_t)grown
                                                         : res->rounds + 1;
        }
        if (res->seconds >= rule->budget_s && pairs_estimable(m, pairs, np) &&
            !held(rule, res->seconds, &hold_since, &held_any)) {
            res->stop = OPCOST_ROUNDS_BUDGET;
            break;
        }
        if (rule->max_rounds && res->rounds >= rule->max_rounds) {
            res->stop = OPCOST_ROUNDS_MAX;
            break;
        }
    }
    if (held_any) /* from the first moment it held to the end */
        res->held_s = res->seconds - hold_since;
    res->worst_ci95_rel = widest(m, pairs, np, rule->seed);
    if (isinf(res->worst_ci95_rel))
        res->worst_ci95_rel = NAN;
    return 0;
}

void opcost_member_free(opcost_member *m)
{
    free(m->us);
    free(m->device_us);
    free(m->round);
    m->us = m->device_us = NULL;
    m->round = NULL;
    m->n = m->cap = 0;
}

int opcost_member_alloc(opcost_member *out, const char *name, size_t cap)
{
    memset(out, 0, sizeof *out);
    out->name = name;
    out->cap = cap ? cap : 1;
    out->us = malloc(out->cap * sizeof *out->us);
    out->device_us = malloc(out->cap * sizeof *out->device_us);
    out->round = malloc(out->cap * sizeof *out->round);
    if (!out->us || !out->device_us || !out->round) {
        opcost_member_free(out);
        return -1;
    }
    return 0;
}

int opcost_member_merge(const opcost_member *const *m, int k,
                        opcost_member *out)
{
    memset(out, 0, sizeof *out);
    if (k < 0 || k > 64)
        return -1;
    size_t total = 0;
    for (int i = 0; i < k; ++i)
        total += m[i]->n;
    if (opcost_member_alloc(out, k ? m[0]->name : "", total))
        return -1;
    /* a k-way merge by round (k is a few processes) */
    size_t at[64] = {0};
    for (;;) {
        int next = -1;
        for (int i = 0; i < k; ++i)
            if (at[i] < m[i]->n &&
                (next < 0 || m[i]->round[at[i]] < m[next]->round[at[next]]))
                next = i;
        if (next < 0)
            break;
        const size_t j = at[next]++;
        out->us[out->n] = m[next]->us[j];
        out->device_us[out->n] = m[next]->device_us[j];
        out->round[out->n++] = m[next]->round[j];
    }
    return 0;
}
