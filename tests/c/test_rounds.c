/* The rounds (bench/measure/rounds.h) with simulated members and a
 * simulated clock, no timing: every member one sample per round in a
 * shuffled order; the stopping rules (the target met, the budget spent,
 * max rounds, an interrupt, every member failed); a slow member's stride;
 * a failing member left out while the others go on; the paired ratio
 * of two members through a 2x drift of the host; groups sampled back to
 * back. */
#include "c_samples.h"
#include "paired.h"
#include "rounds.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PI 3.14159265358979323846

/* The simulated host: a clock that moves by what the samples take, and a
 * speed that swings 2x over about 200 samples. */
static double clock_s;
static long samples_taken;

static double now_s(void)
{
    return clock_s;
}

static uint64_t rng = 88172645463325252ull;

static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((double)(rng >> 11) + 0.5) / 9007199254740992.0;
}

typedef struct sim {
    double base_us; /* its time on a host at full speed */
    double noise;   /* sd of its log noise */
    long fail_at;   /* its sample of this index fails (-1: never) */
    long taken;
    int order[4096]; /* its position in each round (of two members) */
} sim;

static int sim_sample(void *ctx, double *us, double *device_us, char *err,
                      size_t len)
{
    sim *s = ctx;
    if (s->taken == s->fail_at) {
        snprintf(err, len, "simulated failure at sample %ld", s->taken);
        return -1;
    }
    const double speed =
        exp(log(2.0) * 0.5 * (1 + sin(2 * PI * (double)samples_taken / 200)));
    const double z = sqrt(-2 * log(uniform())) * cos(2 * PI * uniform());
    *us = s->base_us * speed * exp(s->noise * z);
    *device_us = NAN;
    /* with two members in every round, its position in the round */
    if (s->taken < 4096)
        s->order[s->taken] = (int)(samples_taken % 2);
    ++s->taken;
    ++samples_taken;
    clock_s += *us * 1e-6;
    return 0;
}

static void members_of(opcost_member *m, sim *s, int n)
{
    for (int i = 0; i < n; ++i) {
        memset(&m[i], 0, sizeof m[i]);
        m[i].name = "sim";
        m[i].sample = sim_sample;
        m[i].ctx = &s[i];
        m[i].cost_us = s[i].base_us;
    }
}

static void free_members(opcost_member *m, int n)
{
    for (int i = 0; i < n; ++i)
        opcost_member_free(&m[i]);
}

static opcost_rounds_rule rule_of(double target, double budget_s)
{
    opcost_rounds_rule r;
    memset(&r, 0, sizeof r);
    r.target_rel = target;
    r.budget_s = budget_s;
    r.min_rounds = 10;
    r.max_rounds = 100000;
    r.slow_factor = 8;
    r.now_s = now_s;
    r.seed = 3;
    return r;
}

/* Two members 3 % apart through the drift: the target is met, and the
 * ratio's interval holds 1.03 while each member's own samples spread 2x. */
static void test_target(void)
{
    sim s[2] = {{100, 0.02, -1, 0, {0}}, {103, 0.02, -1, 0, {0}}};
    opcost_member m[2];
    members_of(m, s, 2);
    const opcost_rounds_pair pair = {1, 0};
    const opcost_rounds_rule rule = rule_of(0.005, 60);
    opcost_rounds_result res;
    char err[256];
    C_CHECK(opcost_rounds_run(m, 2, &pair, 1, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_TARGET, "stopped by %s",
             opcost_rounds_stop_name(res.stop));
    C_EXPECT(res.worst_ci95_rel <= 0.005, "worst interval %g",
             res.worst_ci95_rel);
    C_EXPECT(m[0].n == res.rounds && m[1].n == res.rounds,
             "%zu, %zu samples in %zu rounds", m[0].n, m[1].n, res.rounds);
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < m[0].n; ++i) {
        lo = m[0].us[i] < lo ? m[0].us[i] : lo;
        hi = m[0].us[i] > hi ? m[0].us[i] : hi;
        C_EXPECT(m[0].round[i] == (int64_t)i, "round of sample %zu: %lld", i,
                 (long long)m[0].round[i]);
    }
    opcost_paired e;
    C_CHECK(opcost_member_ratio(&m[1], &m[0], 1, &e) == 0);
    C_EXPECT(e.n == res.rounds, "pairs %zu", e.n);
    C_EXPECT(fabs(log(e.ratio / 1.03)) <= log1p(e.ci95_rel),
             "ratio %.4f +-%.2f %% misses 1.03", e.ratio, 100 * e.ci95_rel);
    C_EXPECT(hi / lo > 1.5, "the drift did not show in the samples: %.2f",
             hi / lo);
    /* the order is shuffled: each member came first in some rounds */
    int first[2] = {0, 0};
    for (size_t i = 0; i < m[0].n && i < 4096; ++i) {
        first[0] += s[0].order[i] == 0;
        first[1] += s[1].order[i] == 0;
    }
    C_EXPECT(first[0] > (int)m[0].n / 4 && first[1] > (int)m[0].n / 4,
             "first in a round: %d and %d of %zu", first[0], first[1], m[0].n);
    free_members(m, 2);
    printf("target: %zu rounds, ratio %.4f +-%.2f %%, block %zu\n", res.rounds,
           e.ratio, 100 * e.ci95_rel, e.block);
}

/* A noisy pair cannot meet a tight target: the budget stops it. */
static void test_budget(void)
{
    sim s[2] = {{100, 0.3, -1, 0, {0}}, {100, 0.3, -1, 0, {0}}};
    opcost_member m[2];
    members_of(m, s, 2);
    const opcost_rounds_pair pair = {1, 0};
    const double start = clock_s;
    const opcost_rounds_rule rule = rule_of(0.001, 0.05);
    opcost_rounds_result res;
    char err[256];
    C_CHECK(opcost_rounds_run(m, 2, &pair, 1, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_BUDGET, "stopped by %s",
             opcost_rounds_stop_name(res.stop));
    C_EXPECT(clock_s - start >= 0.05 && res.seconds >= 0.05,
             "stopped after %g s of a 0.05 s budget", res.seconds);
    C_EXPECT(res.worst_ci95_rel > 0.001, "worst %g", res.worst_ci95_rel);
    free_members(m, 2);
    /* max rounds */
    members_of(m, s, 2);
    opcost_rounds_rule r2 = rule_of(0.0001, 1e9);
    r2.max_rounds = 37;
    C_CHECK(opcost_rounds_run(m, 2, &pair, 1, &r2, &res, err, sizeof err) == 0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_MAX && res.rounds == 37,
             "max rounds: %s after %zu", opcost_rounds_stop_name(res.stop),
             res.rounds);
    free_members(m, 2);
}

/* The hold keeps the rounds going past the budget while it says so (a
 * point waiting for the host's full bandwidth), at most hold_s. */
static double hold_until_s;
static int hold_calls;
static int hold_while(void *ctx)
{
    (void)ctx;
    ++hold_calls;
    return clock_s < hold_until_s;
}

static void test_hold(void)
{
    sim s[2] = {{100, 0.3, -1, 0, {0}}, {100, 0.3, -1, 0, {0}}};
    const opcost_rounds_pair pair = {1, 0};
    opcost_rounds_result res;
    char err[256];
    /* held 0.2 s past the budget's 0.05, within a hold of 1 s */
    opcost_member m[2];
    members_of(m, s, 2);
    double start = clock_s;
    hold_until_s = start + 0.25;
    hold_calls = 0;
    opcost_rounds_rule rule = rule_of(0.001, 0.05);
    rule.hold = hold_while;
    rule.hold_s = 1;
    C_CHECK(opcost_rounds_run(m, 2, &pair, 1, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_BUDGET && hold_calls > 1 &&
                 res.seconds >= 0.25 && res.seconds < 0.26 &&
                 res.held_s > 0.19 && res.held_s < 0.21,
             "held: stop %s, %g s, held %g s, %d calls",
             opcost_rounds_stop_name(res.stop), res.seconds, res.held_s,
             hold_calls);
    free_members(m, 2);
    /* a hold that never lets go ends at hold_s */
    members_of(m, s, 2);
    start = clock_s;
    hold_until_s = INFINITY;
    rule.hold_s = 0.1;
    C_CHECK(opcost_rounds_run(m, 2, &pair, 1, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_BUDGET && res.seconds >= 0.15 &&
                 res.seconds < 0.16 && res.held_s >= 0.1 && res.held_s < 0.11,
             "held to its limit: %g s, held %g s", res.seconds, res.held_s);
    free_members(m, 2);
    /* no hold time: the budget stops it as before */
    members_of(m, s, 2);
    rule.hold_s = 0;
    C_CHECK(opcost_rounds_run(m, 2, &pair, 1, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.seconds < 0.06 && res.held_s == 0, "no hold: %g s, held %g s",
             res.seconds, res.held_s);
    free_members(m, 2);
}

/* A member 100x slower than the others takes part in every 2^k-th round
 * (from the third round on), k such that its samples take 8 to 16 times
 * the median member's per round: every 8th here. */
static void test_stride(void)
{
    sim s[3] = {{10, 0.01, -1, 0, {0}},
                {10, 0.01, -1, 0, {0}},
                {1000, 0.01, -1, 0, {0}}};
    opcost_member m[3];
    members_of(m, s, 3);
    m[2].cost_us = 1; /* a calibration that was wrong: the samples decide */
    const opcost_rounds_pair pairs[2] = {{1, 0}, {2, 0}};
    opcost_rounds_rule rule = rule_of(0.0001, 1e9);
    rule.max_rounds = 200;
    opcost_rounds_result res;
    char err[256];
    C_CHECK(opcost_rounds_run(m, 3, pairs, 2, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(m[2].stride == 8, "stride %d of a member 100x slower",
             m[2].stride);
    C_EXPECT(m[0].stride == 1 && m[1].stride == 1, "strides %d %d", m[0].stride,
             m[1].stride);
    /* rounds 0 and 1, then every 8th from round 2 on: 8, 16, ..., 192 */
    C_EXPECT(m[2].n == 26, "the slow member took %zu samples in 200 rounds",
             m[2].n);
    for (size_t i = 2; i < m[2].n; ++i)
        C_EXPECT(m[2].round[i] % 8 == 0, "round %lld",
                 (long long)m[2].round[i]);
    opcost_paired e;
    C_CHECK(opcost_member_ratio(&m[2], &m[0], 1, &e) == 0 && e.n == 26);
    free_members(m, 3);
    /* a budget spent at once still waits until the slow member shares
     * OPCOST_PAIRED_MIN rounds with the one it is paired with */
    members_of(m, s, 3);
    opcost_rounds_rule tight = rule_of(0.0001, 0);
    C_CHECK(opcost_rounds_run(m, 3, pairs, 2, &tight, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_BUDGET && m[2].n == OPCOST_PAIRED_MIN,
             "budget 0: stopped by %s, the slow member took %zu samples",
             opcost_rounds_stop_name(res.stop), m[2].n);
    C_CHECK(opcost_member_ratio(&m[2], &m[0], 1, &e) == 0);
    free_members(m, 3);
}

/* A member that fails is left out, with its error; the rest go on; when
 * every member failed the rounds stop. */
static void test_failure(void)
{
    sim s[2] = {{100, 0.01, 4, 0, {0}}, {100, 0.01, -1, 0, {0}}};
    opcost_member m[2];
    members_of(m, s, 2);
    const opcost_rounds_pair pair = {1, 0};
    opcost_rounds_rule rule = rule_of(0.0001, 1e9);
    rule.max_rounds = 30;
    opcost_rounds_result res;
    char err[256];
    C_CHECK(opcost_rounds_run(m, 2, &pair, 1, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(m[0].failed && m[0].n == 4 &&
                 strstr(m[0].error, "simulated failure at sample 4"),
             "failed %d after %zu: %s", m[0].failed, m[0].n, m[0].error);
    C_EXPECT(m[1].n == 30 && res.stop == OPCOST_ROUNDS_MAX,
             "the other took %zu, stopped by %s", m[1].n,
             opcost_rounds_stop_name(res.stop));
    free_members(m, 2);
    sim t[1] = {{100, 0.01, 2, 0, {0}}};
    members_of(m, t, 1);
    C_CHECK(opcost_rounds_run(m, 1, NULL, 0, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_FAILED && res.rounds == 3,
             "all failed: %s after %zu", opcost_rounds_stop_name(res.stop),
             res.rounds);
    free_members(m, 1);
}

static int interrupt_after;
static int interrupted(void)
{
    return --interrupt_after <= 0;
}

static void test_interrupted(void)
{
    sim s[2] = {{100, 0.01, -1, 0, {0}}, {100, 0.01, -1, 0, {0}}};
    opcost_member m[2];
    members_of(m, s, 2);
    opcost_rounds_rule rule = rule_of(0.0001, 1e9);
    rule.interrupted = interrupted;
    interrupt_after = 5;
    opcost_rounds_result res;
    char err[256];
    C_CHECK(opcost_rounds_run(m, 2, NULL, 0, &rule, &res, err, sizeof err) ==
            0);
    C_EXPECT(res.stop == OPCOST_ROUNDS_INTERRUPTED && res.rounds == 5,
             "interrupt: %s after %zu", opcost_rounds_stop_name(res.stop),
             res.rounds);
    free_members(m, 2);
}

/* Groups: six members in three groups of two (and one alone) take their
 * samples of a round back to back, every round, in both orders within a
 * group and in more than one order of the groups; before grouping, the
 * two members of a pair were a whole shuffled round apart. */
static long group_log[8 * 4096];
static long group_logged;

static int logged_sample(void *ctx, double *us, double *device_us, char *err,
                         size_t len)
{
    const int rc = sim_sample(((void **)ctx)[0], us, device_us, err, len);
    if (group_logged < (long)(sizeof group_log / sizeof *group_log))
        group_log[group_logged++] = (long)(intptr_t)((void **)ctx)[1];
    return rc;
}

static void test_groups(void)
{
    enum { NM = 7 };
    sim s[NM];
    void *ctx[NM][2];
    opcost_member m[NM];
    memset(s, 0, sizeof s);
    for (int i = 0; i < NM; ++i) {
        s[i].base_us = 50 + i;
        s[i].noise = 0.01;
        s[i].fail_at = -1;
        ctx[i][0] = &s[i];
        ctx[i][1] = (void *)(intptr_t)i;
    }
    members_of(m, s, NM);
    for (int i = 0; i < NM; ++i) {
        m[i].sample = logged_sample;
        m[i].ctx = ctx[i];
        m[i].group = i < 6 ? 1 + i / 2 : 0; /* {0,1} {2,3} {4,5} {6} */
    }
    opcost_rounds_rule rule = rule_of(0, 1e9);
    rule.max_rounds = 200;
    opcost_rounds_result res;
    char err[256];
    group_logged = 0;
    C_CHECK(opcost_rounds_run(m, NM, NULL, 0, &rule, &res, err, sizeof err) ==
            0);
    C_CHECK(res.rounds == 200 && group_logged == 200 * NM);
    long apart = 0, first_lower = 0, group_first[4] = {0};
    for (size_t r = 0; r < res.rounds; ++r) {
        const long *o = &group_log[r * NM];
        for (int k = 0; k < NM; ++k) {
            if (o[k] >= 6)
                continue;
            const long twin = o[k] ^ 1;
            /* the twin is the neighbour on one side */
            if (!(k + 1 < NM && o[k + 1] == twin) &&
                !(k > 0 && o[k - 1] == twin))
                ++apart;
        }
        for (int k = 0; k + 1 < NM; ++k)
            if (o[k] < 6 && o[k + 1] == (o[k] ^ 1))
                first_lower += o[k] < o[k + 1];
        group_first[o[0] < 6 ? o[0] / 2 : 3]++;
    }
    C_EXPECT(apart == 0, "%ld samples not next to their twin's", apart);
    /* 600 pairs: each order about half the time */
    C_EXPECT(first_lower > 200 && first_lower < 400,
             "the lower member first in %ld of 600 pairs", first_lower);
    for (int g = 0; g < 4; ++g)
        C_EXPECT(group_first[g] > 20, "group %d first in %ld of 200 rounds", g,
                 group_first[g]);
    free_members(m, NM);
}

/* Two processes a build: base's second process 4 % slower than its first
 * for its whole life (its own placement in memory), new 3 % slower than
 * base in both. One process pair alone reads x1.03 or x0.99; the mean of
 * two over the mean of two reads 1.03 in its interval, and the contrast
 * between base's processes shows the 4 %. */
static void test_processes(void)
{
    sim s[4] = {{100, 0.01, -1, 0, {0}},
                {104, 0.01, -1, 0, {0}},
                {103, 0.01, -1, 0, {0}},
                {107.12, 0.01, -1, 0, {0}}};
    opcost_member m[4];
    members_of(m, s, 4);
    for (int i = 0; i < 4; ++i)
        m[i].group = 1;
    opcost_rounds_pair pairs[2] = {{2, 0}, {3, 1}};
    opcost_rounds_rule rule = rule_of(0.005, 30);
    opcost_rounds_result res;
    char err[256];
    C_EXPECT(opcost_rounds_run(m, 4, pairs, 2, &rule, &res, err, sizeof err) ==
                 0,
             "rounds of four: %s", err);
    const opcost_member *base[2] = {&m[0], &m[1]}, *news[2] = {&m[2], &m[3]};
    opcost_paired e, cross, contrast;
    C_EXPECT(opcost_members_ratio(news, 2, base, 2, 1, &e) == 0,
             "the mean of two over the mean of two");
    C_EXPECT(fabs(e.ratio / 1.03 - 1) <= e.ci95_rel && e.ci95_rel < 0.01,
             "x%.4f +-%.2f %%, 1.03 put in", e.ratio, 100 * e.ci95_rel);
    C_EXPECT(e.n == res.rounds, "every round counts: %zu of %zu", e.n,
             res.rounds);
    C_EXPECT(opcost_member_ratio(&m[2], &m[1], 1, &cross) == 0 &&
                 fabs(cross.ratio - 0.99) < 0.005,
             "one process pair alone: x%.4f", cross.ratio);
    C_EXPECT(opcost_member_ratio(&m[0], &m[1], 1, &contrast) == 0 &&
                 fabs(contrast.ratio * 1.04 - 1) < 0.005,
             "base's processes: x%.4f, 1 / 1.04 put in", contrast.ratio);
    /* a side's samples merged: all of them, in round order */
    opcost_member all;
    C_EXPECT(opcost_member_merge(base, 2, &all) == 0, "merge");
    C_EXPECT(all.n == m[0].n + m[1].n, "%zu samples of %zu", all.n,
             m[0].n + m[1].n);
    int ordered = 1;
    for (size_t i = 1; i < all.n; ++i)
        ordered &= all.round[i - 1] <= all.round[i];
    C_EXPECT(ordered, "in round order");
    opcost_member_free(&all);
    C_EXPECT(opcost_member_merge(base, 65, &all) == -1 && all.n == 0,
             "more than 64 members: refused, nothing merged");
    free_members(m, 4);
}

/* Only the rounds every member took a sample in: one member in every
 * round, one in every second. */
static void test_members_shared_rounds(void)
{
    enum { R = 40 };
    double us_a[R], us_b[R / 2], us_c[R];
    int64_t r_a[R], r_b[R / 2], r_c[R];
    for (int i = 0; i < R; ++i) {
        r_a[i] = r_c[i] = i;
        us_a[i] = 10 * (1 + 0.001 * (i % 3));
        us_c[i] = 20 * (1 + 0.001 * (i % 5));
        if (i % 2 == 0) {
            r_b[i / 2] = i;
            us_b[i / 2] = 30;
        }
    }
    opcost_member a = {.n = R, .us = us_a, .round = r_a};
    opcost_member b = {.n = R / 2, .us = us_b, .round = r_b};
    opcost_member c = {.n = R, .us = us_c, .round = r_c};
    const opcost_member *num[2] = {&a, &b}, *den[1] = {&c};
    opcost_paired e;
    C_EXPECT(opcost_members_ratio(num, 2, den, 1, 1, &e) == 0 && e.n == R / 2,
             "%zu rounds shared by all three, %d put in", e.n, R / 2);
    C_EXPECT(fabs(e.ratio - sqrt(10.0 * 30) / 20) < 0.01,
             "x%.4f: the geometric mean of a and b over c", e.ratio);
    C_EXPECT(opcost_members_ratio(num, 0, den, 1, 1, &e) == -1,
             "no members on a side: refused");
}

/* Four processes a side in two camps, 0 and 1 alike, 2 and 3 alike, the
 * camps 10 % apart (placements that move two processes alike). On new
 * alone, each process against all the others shows the 10 %, where the
 * pairs (0, 1) and (2, 3) read 1.0 both; the same camps on both sides, by
 * process index, cancel in the ratio of the sides' means and show no
 * spread (a side's own contrasts would read the 10 % there too); four
 * alike show none. */
static void test_contrasts_all_processes(void)
{
    enum { R = 200, K = 4 };
    double us[2][K][R];
    int64_t round[R];
    for (int camps = 2; camps >= 0; --camps) {
        /* camps: 2 on new alone, 1 on both sides by index, 0 none */
        for (int r = 0; r < R; ++r) {
            round[r] = r;
            const double drift =
                exp(log(2.0) * 0.5 * (1 + sin(2 * PI * r / 50)));
            for (int s = 0; s < 2; ++s)
                for (int k = 0; k < K; ++k) {
                    const double z =
                        sqrt(-2 * log(uniform())) * cos(2 * PI * uniform());
                    const int apart = k < 2 && (camps == 1 || (camps && s));
                    us[s][k][r] = (apart ? 110 : 100) * drift * exp(0.01 * z);
                }
        }
        opcost_member m[2][K];
        const opcost_member *side[2][K];
        for (int s = 0; s < 2; ++s)
            for (int k = 0; k < K; ++k) {
                m[s][k] =
                    (opcost_member){.n = R, .us = us[s][k], .round = round};
                side[s][k] = &m[s][k];
            }
        double d[K], se[K];
        const int n =
            opcost_members_cross_contrasts(side[0], side[1], K, 1, d, se);
        C_EXPECT(n == K - 1, "%d contrasts of %d processes a side", n, K);
        if (n != K - 1)
            continue;
        const double spread = opcost_paired_point_excess(d, se, (size_t)n);
        if (camps == 2) {
            opcost_paired p01, p23;
            C_EXPECT(
                opcost_member_ratio(&m[1][0], &m[1][1], 1, &p01) == 0 &&
                    opcost_member_ratio(&m[1][2], &m[1][3], 1, &p23) == 0 &&
                    fabs(p01.log_ratio) < 0.01 && fabs(p23.log_ratio) < 0.01,
                "the camps' pairs alike: %.4f %.4f", p01.log_ratio,
                p23.log_ratio);
            /* new's 0 and 1 over 2: log 1.1, scaled to one difference's sd
             * (sqrt(4/3)), over sqrt(2) for the two sides' */
            const double put = sqrt(2.0 / 3) * log(1.1);
            C_EXPECT(fabs(d[0]) < 4 * se[0] && fabs(d[1] - put) < 0.01,
                     "contrasts %.4f +- %.4f, %.4f (%.4f put in)", d[0], se[0],
                     d[1], put);
            C_EXPECT(spread > 0.04,
                     "the camps' spread seen: %.4f (one difference's sd)",
                     spread);
        } else {
            C_EXPECT(spread < 0.003, "%s: no spread (%.4f)",
                     camps ? "the same camps on both sides" : "four alike",
                     spread);
        }
    }
    opcost_member one = {.n = R, .us = us[1][0], .round = round};
    const opcost_member *alone[1] = {&one};
    double d[1], se[1];
    C_EXPECT(opcost_members_cross_contrasts(alone, alone, 1, 1, d, se) == -1,
             "one process a side: no contrast, refused");
}

/* opcost ab at its widest: 8 processes of each of two builds of 64
 * members, and the probe (1025 members) run their rounds. */
static void test_widest_ab(void)
{
    enum { NM = 2 * 8 * 64 + 1 };
    sim *s = calloc(NM, sizeof *s);
    opcost_member *m = calloc(NM, sizeof *m);
    C_EXPECT(s && m, "memory");
    if (!s || !m) {
        free(s);
        free(m);
        return;
    }
    for (int i = 0; i < NM; ++i)
        s[i] = (sim){10, 0.01, -1, 0, {0}};
    members_of(m, s, NM);
    opcost_rounds_rule rule = rule_of(0.5, 0.001);
    opcost_rounds_result res;
    char err[256] = "";
    C_EXPECT(opcost_rounds_run(m, NM, NULL, 0, &rule, &res, err, sizeof err) ==
                     0 &&
                 m[NM - 1].n >= 10,
             "%d members: %s", NM, err);
    free_members(m, NM);
    free(m);
    free(s);
}

int main(void)
{
    test_widest_ab();
    test_processes();
    test_members_shared_rounds();
    test_contrasts_all_processes();
    test_target();
    test_budget();
    test_hold();
    test_stride();
    test_failure();
    test_interrupted();
    test_groups();
    return c_report("test_rounds");
}
