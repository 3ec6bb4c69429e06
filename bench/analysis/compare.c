/* `opcost compare`: two runs (or two kernel variants of one run) joined on
 * every configuration column, each pair tested on its per-repetition
 * medians (bench/stats/significance.h: Welch on logs, Holm across the
 * pairs), a change claimed only when significant and larger than the threshold.
 * With --gate, the gated quantity is each distribution's weighted expected
 * cost per call (per repetition: sum freq * repetition median / sum freq);
 * per-row changes are still reported. */
#define _POSIX_C_SOURCE 200809L
#include "compare.h"
#include "gates.h"
#include "outfile.h"
#include "outpath.h"
#include "paired.h"
#include "results_csv.h"
#include "significance.h"
#include "stats.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REPS 5
/* Repetitions the gate reads per side (per-repetition expected costs). */
#define GATE_MAX_REPS 64

typedef struct run {
    const char *path;
    opcost_result *rows;
    size_t n;
    double *freq;    /* per row, parsed once */
    size_t *rep_off; /* per row: its repetition medians at med[rep_off[i]] */
    int *nreps;      /* per row: repetitions with samples */
    double *med;     /* repetition medians, row by row, in repetition order */
    /* the samples with their rounds (schema 4), row by row in round
     * order: row i's at rs_off[i] .. rs_off[i + 1]; none: rs_off NULL */
    size_t *rs_off;
    int64_t *rs_round;
    double *rs_us;
} run;

typedef struct pair {
    const opcost_result *base, *new_;
    const run *rb, *rn;
    size_t ib, in;
    double ratio, p, p_holm;
    double se, df; /* of log(ratio), within the runs */
    int paired;    /* from the rounds of one run (--variants) */
    opcost_paired est;
    const char *verdict;
} pair;

static const double *rep_medians(const run *r, size_t i)
{
    return r->med + r->rep_off[i];
}

/* One sample's repetition and time, for grouping a point's samples. */
typedef struct rep_us {
    int64_t rep;
    double us;
} rep_us;

static int by_rep(const void *a, const void *b)
{
    const int64_t x = ((const rep_us *)a)->rep, y = ((const rep_us *)b)->rep;
    return (x > y) - (x < y);
}

/* The median of each repetition of each row, from the samples: grouped by
 * point (a counting pass), then by repetition within the point. Linear in
 * the samples but for the sort of each point's own samples. */
static int rep_medians_from(run *r, const opcost_sample *s, size_t ns,
                            char *err, size_t len)
{
    size_t *start = calloc(r->n + 1, sizeof *start);
    rep_us *by_point = malloc((ns ? ns : 1) * sizeof *by_point);
    r->rep_off = calloc(r->n + 1, sizeof *r->rep_off);
    r->nreps = calloc(r->n ? r->n : 1, sizeof *r->nreps);
    r->med = malloc((ns ? ns : 1) * sizeof *r->med);
    double *x = malloc((ns ? ns : 1) * sizeof *x);
    int rc = 0;
    if (!start || !by_point || !r->rep_off || !r->nreps || !r->med || !x) {
        snprintf(err, len, "%s: out of memory (samples)", r->path);
        rc = -1;
        goto done;
    }
    for (size_t k = 0; k < ns; ++k)
        ++start[s[k].point + 1]; /* points are row indices (checked) */
    for (size_t i = 0; i < r->n; ++i)
        start[i + 1] += start[i];
    size_t *fill = r->rep_off; /* borrowed as the scatter cursor */
    memcpy(fill, start, r->n * sizeof *fill);
    for (size_t k = 0; k < ns; ++k)
        by_point[fill[s[k].point]++] = (rep_us){s[k].rep, s[k].us};
    size_t m = 0;
    for (size_t i = 0; i < r->n; ++i) {
        rep_us *p = by_point + start[i];
        const size_t cnt = start[i + 1] - start[i];
        qsort(p, cnt, sizeof *p, by_rep);
        r->rep_off[i] = m;
        for (size_t a = 0; a < cnt;) {
            size_t b = a;
            while (b < cnt && p[b].rep == p[a].rep) {
                x[b - a] = p[b].us;
                ++b;
            }
            r->med[m++] = opcost_median_inplace(x, b - a);
            ++r->nreps[i];
            a = b;
        }
    }
    r->rep_off[r->n] = m;
done:
    free(start);
    free(by_point);
    free(x);
    return rc;
}

static int by_round(const void *a, const void *b)
{
    const int64_t x = ((const opcost_sample *)a)->round,
                  y = ((const opcost_sample *)b)->round;
    return (x > y) - (x < y);
}

/* Each row's samples in round order, where every sample has its round
 * (a sidecar of schema 4); otherwise none (rs_off stays NULL). */
static int rounds_from(run *r, opcost_sample *s, size_t ns, char *err,
                       size_t len)
{
    for (size_t k = 0; k < ns; ++k)
        if (s[k].round == OPCOST_INT_NA)
            return 0;
    r->rs_off = calloc(r->n + 1, sizeof *r->rs_off);
    r->rs_round = malloc((ns ? ns : 1) * sizeof *r->rs_round);
    r->rs_us = malloc((ns ? ns : 1) * sizeof *r->rs_us);
    opcost_sample *sorted = malloc((ns ? ns : 1) * sizeof *sorted);
    if (!r->rs_off || !r->rs_round || !r->rs_us || !sorted) {
        free(sorted);
        snprintf(err, len, "%s: out of memory (rounds)", r->path);
        return -1;
    }
    for (size_t k = 0; k < ns; ++k)
        ++r->rs_off[s[k].point + 1];
    for (size_t i = 0; i < r->n; ++i)
        r->rs_off[i + 1] += r->rs_off[i];
    size_t *fill = calloc(r->n + 1, sizeof *fill);
    if (!fill) {
        free(sorted);
        snprintf(err, len, "%s: out of memory (rounds)", r->path);
        return -1;
    }
    memcpy(fill, r->rs_off, r->n * sizeof *fill);
    for (size_t k = 0; k < ns; ++k)
        sorted[fill[s[k].point]++] = s[k];
    for (size_t i = 0; i < r->n; ++i) {
        opcost_sample *p = sorted + r->rs_off[i];
        const size_t cnt = r->rs_off[i + 1] - r->rs_off[i];
        qsort(p, cnt, sizeof *p, by_round);
        for (size_t k = 0; k < cnt; ++k) {
            r->rs_round[r->rs_off[i] + k] = p[k].round;
            r->rs_us[r->rs_off[i] + k] = p[k].us;
        }
    }
    free(fill);
    free(sorted);
    return 0;
}

/* Loads a run and, unless no_samples, the median of each repetition of
 * each row from its sidecar: a sidecar that is missing or does not match
 * the rows is an input error (the comparison would otherwise claim
 * nothing and pass). */
static int load(run *r, const char *path, int no_samples, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    if (opcost_results_read(path, &r->rows, &r->n, err, len))
        return -1;
    /* an opcost ab file: its rows are already pairs (base and new of one
     * run, in the same rounds); joined here, its sides would collide */
    for (size_t i = 0; i < r->n; ++i)
        if (r->rows[i].side[0]) {
            snprintf(err, len,
                     "%.200s is an opcost ab file (rows of side base and "
                     "new, each new row paired with its base twin in the "
                     "same rounds): compare does not join its sides; its "
                     "verdicts are its own: opcost ab --report %.200s (the "
                     "nights of a history: opcost plot --kind "
                     "paired_history)",
                     path, path);
            return -1;
        }
    size_t unsettled = 0;
    for (size_t i = 0; i < r->n; ++i)
        unsettled += opcost_result_unsettled(&r->rows[i]) != 0;
    if (unsettled) {
        snprintf(err, len,
                 "%.300s is incomplete: %zu of %zu rows unsettled (the "
                 "journal of a run that did not end, put in its place): "
                 "nothing compared; measure again (opcost check says the "
                 "same)",
                 path, unsettled, r->n);
        return -1;
    }
    r->freq = malloc((r->n ? r->n : 1) * sizeof *r->freq);
    if (!r->freq) {
        snprintf(err, len, "%s: out of memory", path);
        return -1;
    }
    for (size_t i = 0; i < r->n; ++i)
        r->freq[i] = atof(r->rows[i].freq);
    opcost_sample *s = NULL;
    size_t ns = 0;
    if (!no_samples) {
        char e[1024];
        if (opcost_samples_read(path, r->rows, r->n, &s, &ns, e, sizeof e)) {
            snprintf(err, len,
                     "%.900s (the comparison tests the repetitions in the "
                     "samples sidecar; --no-samples compares the medians "
                     "alone, claiming nothing)",
                     e);
            return -1;
        }
    }
    int rc = rep_medians_from(r, s, ns, err, len);
    if (rc == 0)
        rc = rounds_from(r, s, ns, err, len);
    free(s);
    return rc;
}

static void unload(run *r)
{
    free(r->rs_off);
    free(r->rs_round);
    free(r->rs_us);
    free(r->rows);
    free(r->freq);
    free(r->rep_off);
    free(r->nreps);
    free(r->med);
}

/* The configuration columns a pair must share (variant optional). */
static int same_config(const opcost_result *a, const opcost_result *b,
                       int with_variant)
{
    return !strcmp(a->op, b->op) && a->B == b->B && a->N == b->N &&
           !strcmp(a->dtype, b->dtype) &&
           !strcmp(a->weight_dtype, b->weight_dtype) &&
           !strcmp(a->layout, b->layout) && !strcmp(a->path, b->path) &&
           (!with_variant || !strcmp(a->variant, b->variant)) &&
           !strcmp(a->device, b->device) && a->threads == b->threads &&
           a->cache_state == b->cache_state;
}

static int same_config_v(const opcost_result *a, const opcost_result *b)
{
    return same_config(a, b, 1);
}

static int same_config_nv(const opcost_result *a, const opcost_result *b)
{
    return same_config(a, b, 0);
}

/* The gate's groups: one per distribution, op, dtype, layout, path and
 * variant. */
static int same_group(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->distribution, b->distribution) && !strcmp(a->op, b->op) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->layout, b->layout) &&
           !strcmp(a->path, b->path) && !strcmp(a->variant, b->variant);
}

/* ---- hashing rows by their key columns (pairing and grouping in linear
 * time: a nightly history has no bound on its rows) */

static uint64_t mix_str(uint64_t h, const char *s)
{
    for (; *s; ++s)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return (h ^ 0xff) * 0x100000001b3ull; /* field separator */
}

static uint64_t mix_int(uint64_t h, int64_t v)
{
    for (int i = 0; i < 8; ++i)
        h = (h ^ (uint64_t)((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
    return h;
}

static uint64_t config_hash(const opcost_result *r, int with_variant)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix_str(h, r->op);
    h = mix_int(h, r->B);
    h = mix_int(h, r->N);
    h = mix_str(h, r->dtype);
    h = mix_str(h, r->weight_dtype);
    h = mix_str(h, r->layout);
    h = mix_str(h, r->path);
    if (with_variant)
        h = mix_str(h, r->variant);
    h = mix_str(h, r->device);
    h = mix_int(h, r->threads);
    return mix_int(h, r->cache_state);
}

static uint64_t group_hash(const opcost_result *r)
{
    uint64_t h = 0xcbf29ce484222325ull;
    h = mix_str(h, r->distribution);
    h = mix_str(h, r->op);
    h = mix_str(h, r->dtype);
    h = mix_str(h, r->layout);
    h = mix_str(h, r->path);
    return mix_str(h, r->variant);
}

/* Open addressing over keys (a representative row each); values are the
 * caller's indices. */
typedef struct table {
    size_t cap; /* a power of two, at least twice the keys */
    const opcost_result **key;
    size_t *val;
    int (*eq)(const opcost_result *, const opcost_result *);
} table;

static int table_init(table *t, size_t keys,
                      int (*eq)(const opcost_result *, const opcost_result *))
{
    t->cap = 16;
    while (t->cap < 2 * keys)
        t->cap *= 2;
    t->key = calloc(t->cap, sizeof *t->key);
    t->val = calloc(t->cap, sizeof *t->val);
    t->eq = eq;
    return t->key && t->val ? 0 : -1;
}

static void table_free(table *t)
{
    free(t->key);
    free(t->val);
}

/* Slots the tables visited since the last opcost_compare_main began
 * (opcost_compare_key_probes). */
static size_t key_probes;

/* The slot of k: its value, or an empty slot (key NULL) to claim. */
static size_t table_find(const table *t, const opcost_result *k, uint64_t h)
{
    size_t i = (size_t)h & (t->cap - 1);
    ++key_probes;
    while (t->key[i] && !t->eq(t->key[i], k)) {
        i = (i + 1) & (t->cap - 1);
        ++key_probes;
    }
    return i;
}

size_t opcost_compare_key_probes(void)
{
    return key_probes;
}

/* Pairs the k-th base row of a configuration with the k-th new row of it
 * (kernel rows of variants va and vb in --variants mode); rows on one side
 * only get a pair of their own. Returns the number of pairs, or -1. */
static long make_pairs(pair *p, const run *rb, const run *rn, const char *va,
                       const char *vb)
{
    const int with_variant = va == NULL;
    table t;
    /* per configuration: a queue of new rows, linked through next[] */
    size_t *head = malloc((rn->n + 1) * sizeof *head);
    size_t *tail = malloc((rn->n + 1) * sizeof *tail);
    size_t *next = malloc((rn->n + 1) * sizeof *next);
    char *used = calloc(rn->n + 1, 1);
    long np = -1;
    if (!head || !tail || !next || !used ||
        table_init(&t, rn->n, with_variant ? same_config_v : same_config_nv))
        goto done;
    const size_t none = (size_t)-1;
    size_t nq = 0;
    for (size_t j = 0; j < rn->n; ++j) {
        const opcost_result *y = &rn->rows[j];
        next[j] = none;
        if (!with_variant &&
            (strcmp(y->path, "kernel") || strcmp(y->variant, vb)))
            continue;
        const size_t s = table_find(&t, y, config_hash(y, with_variant));
        if (!t.key[s]) {
            t.key[s] = y;
            t.val[s] = nq;
            head[nq] = tail[nq] = j;
            ++nq;
        } else {
            next[tail[t.val[s]]] = j;
            tail[t.val[s]] = j;
        }
    }
    size_t n = 0;
    for (size_t i = 0; i < rb->n; ++i) {
        const opcost_result *x = &rb->rows[i];
        if (!with_variant &&
            (strcmp(x->path, "kernel") || strcmp(x->variant, va)))
            continue;
        pair *q = &p[n++];
        q->base = x;
        q->rb = rb;
        q->rn = rn;
        q->ib = i;
        const size_t s = table_find(&t, x, config_hash(x, with_variant));
        if (t.key[s] && head[t.val[s]] != none) {
            const size_t j = head[t.val[s]];
            head[t.val[s]] = next[j];
            used[j] = 1;
            q->new_ = &rn->rows[j];
            q->in = j;
        }
    }
    for (size_t j = 0; j < rn->n; ++j) {
        const opcost_result *y = &rn->rows[j];
        if (used[j] || (!with_variant &&
                        (strcmp(y->path, "kernel") || strcmp(y->variant, vb))))
            continue;
        pair *q = &p[n++];
        q->new_ = y;
        q->rb = rb;
        q->rn = rn;
        q->in = j;
    }
    np = (long)n;
    table_free(&t);
done:
    free(head);
    free(tail);
    free(next);
    free(used);
    return np;
}

/* Runs from different machines or software do not compare. */
static int foreign(const run *a, const run *b, char *why, size_t len)
{
    if (!a->n || !b->n)
        return 0;
    const opcost_result *x = &a->rows[0], *y = &b->rows[0];
    const char *what[][3] = {
        {"host", x->host, y->host},
        {"cpu", x->cpu, y->cpu},
        {"torch_version", x->torch_version, y->torch_version},
        {"device", x->device, y->device},
        {"gpu", x->gpu, y->gpu}};
    for (size_t i = 0; i < sizeof what / sizeof what[0]; ++i)
        if (strcmp(what[i][1], what[i][2])) {
            snprintf(why, len, "%s differs: '%s' in %s, '%s' in %s", what[i][0],
                     what[i][1], a->path, what[i][2], b->path);
            return 1;
        }
    return 0;
}

static void test_pair(pair *p)
{
    const opcost_result *b = p->base, *n = p->new_;
    p->ratio = p->p = p->p_holm = NAN;
    if (!b || !n) {
        p->verdict = b ? "only-base" : "only-new";
        return;
    }
    p->ratio = n->median_us / b->median_us;
    if (b->status != OPCOST_STATUS_OK || n->status != OPCOST_STATUS_OK) {
        p->verdict = "not-timed";
        return;
    }
    /* two variants of one run, both with rounds: paired in them */
    if (p->rb == p->rn && p->rb->rs_off) {
        const run *r = p->rb;
        const size_t ob = r->rs_off[p->ib], nb = r->rs_off[p->ib + 1] - ob;
        const size_t on = r->rs_off[p->in], nn = r->rs_off[p->in + 1] - on;
        double *d = malloc((nb < nn ? nb : nn) * sizeof *d + 1);
        const size_t k =
            d ? opcost_paired_logs(r->rs_round + on, r->rs_us + on, nn,
                                   r->rs_round + ob, r->rs_us + ob, nb, d)
              : 0;
        p->paired = 1;
        p->verdict = "too-few-rounds";
        if (d && opcost_paired_estimate(d, k, 1, &p->est) == 0) {
            p->ratio = p->est.ratio;
            p->p = p->est.p;
        }
        free(d);
        return;
    }
    /* no claim unless decide() finds a p-value */
    p->verdict = "too-few-reps";
    const int kb = p->rb->nreps[p->ib], kn = p->rn->nreps[p->in];
    if (kb < MIN_REPS || kn < MIN_REPS)
        return;
    opcost_welch w;
    if (opcost_welch_log(rep_medians(p->rb, p->ib), (size_t)kb,
                         rep_medians(p->rn, p->in), (size_t)kn, &w))
        return;
    p->ratio = w.ratio;
    p->p = w.p;
    p->se = w.se;
    p->df = w.df;
}

/* The run-to-run noise between the two runs, as decide() saw it: the
 * test's sigma and the 95th percentile of |log ratio| (what run_noise_rel
 * is within one run); NAN with too few pairs. */
typedef struct between_noise {
    double sigma, q95;
} between_noise;

/* Verdicts and Holm-corrected p-values; returns the noise it estimated
 * from the pairs. */
static between_noise decide(pair *p, size_t n, double alpha, double threshold)
{
    between_noise bn = {NAN, NAN};
    double *ps = malloc((n ? n : 1) * sizeof *ps);
    double *logs = malloc((n ? n : 1) * sizeof *logs);
    if (!ps || !logs) {
        free(ps);
        free(logs);
        return bn;
    }
    size_t nl = 0;
    for (size_t i = 0; i < n; ++i)
        if (!isnan(p[i].p) && !p[i].paired)
            logs[nl++] = log(p[i].ratio);
    const double sigma = opcost_between_run_sigma(logs, nl);
    for (size_t i = 0; i < n; ++i) {
        /* a paired ratio's rounds share the host's moments: no run noise */
        if (!isnan(p[i].p) && !p[i].paired)
            p[i].p = opcost_p_with_run_noise(log(p[i].ratio), p[i].se, p[i].df,
                                             sigma);
        ps[i] = p[i].p;
    }
    if (nl >= 8) { /* opcost_between_run_sigma's minimum */
        bn.sigma = sigma;
        bn.q95 = opcost_run_noise_q95(logs, nl);
    }
    free(logs);
    opcost_holm(ps, n);
    for (size_t i = 0; i < n; ++i) {
        p[i].p_holm = ps[i];
        if (isnan(p[i].p))
            continue;
        if (p[i].paired) {
            p[i].verdict = opcost_verdict_name(opcost_verdict_of(
                p[i].ratio, p[i].est.ci95_rel, threshold, p[i].p_holm, alpha));
            continue;
        }
        const int sig = p[i].p_holm < alpha;
        if (sig && p[i].ratio >= 1 + threshold)
            p[i].verdict = "slower";
        else if (sig && p[i].ratio <= 1 / (1 + threshold))
            p[i].verdict = "faster";
        else
            p[i].verdict = "same";
    }
    free(ps);
    return bn;
}

/* The run noise a results file recorded (run_noise_rel of its rows,
 * version 3), NAN when it has none. */
static double recorded_noise(const pair *p, size_t n, int base)
{
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *r = base ? p[i].base : p[i].new_;
        if (r && !isnan(r->run_noise_rel))
            return r->run_noise_rel;
    }
    return NAN;
}

/* ---- per-distribution gating */

typedef struct group {
    const opcost_result *key;
    int ok;
    /* a row ok in BASE and wrong, error, skipped or missing in NEW: a
     * regression whatever the times say (the example row in why) */
    const opcost_result *broken;
    double base_us, new_us;
    double log_ratio, se, df;
} group;

/* The pairs of each group, one list per side: side s of group g is
 * idx[s][off[s][g] .. off[s][g + 1]). A side's row belongs to the group of
 * its own key columns (a pair's two rows may differ in distribution). */
typedef struct members {
    size_t *off[2], *idx[2];
} members;

/* sum freq * x / sum freq over a group's side, x per repetition r (or the
 * row medians for r < 0); NAN unless every pair is testable. */
static double expected(const pair *p, const members *m, size_t g, int side,
                       int r)
{
    opcost_wmean mean = {0};
    for (size_t k = m->off[side][g]; k < m->off[side][g + 1]; ++k) {
        const pair *q = &p[m->idx[side][k]];
        const opcost_result *row = side ? q->new_ : q->base;
        const run *rr = side ? q->rn : q->rb;
        const size_t ix = side ? q->in : q->ib;
        const opcost_result *other = side ? q->base : q->new_;
        if (!other || row->status != OPCOST_STATUS_OK)
            return NAN;
        double x = row->median_us;
        if (r >= 0) {
            if (rr->nreps[ix] <= r)
                return NAN;
            x = rep_medians(rr, ix)[r];
        }
        opcost_wmean_add(&mean, rr->freq[ix], x);
    }
    return opcost_wmean_value(&mean);
}

/* The first of group g's BASE rows that was ok and is not in NEW (or not
 * ok there), NULL when none. */
static const opcost_result *broken_row(const pair *p, const members *m,
                                       size_t g)
{
    for (size_t k = m->off[0][g]; k < m->off[0][g + 1]; ++k) {
        const pair *q = &p[m->idx[0][k]];
        if (q->base->status == OPCOST_STATUS_OK &&
            (!q->new_ || q->new_->status != OPCOST_STATUS_OK))
            return q->base;
    }
    return NULL;
}

/* What became of BASE's row b in NEW: its status, or "missing". */
static const char *new_state(const pair *p, const members *m, size_t g,
                             const opcost_result *b)
{
    for (size_t k = m->off[0][g]; k < m->off[0][g + 1]; ++k) {
        const pair *q = &p[m->idx[0][k]];
        if (q->base == b)
            return q->new_ ? opcost_status_name(q->new_->status) : "missing";
    }
    return "missing";
}

/* Groups the pairs (hashing their key columns) and lists each group's
 * members per side. Returns the number of groups, or -1. */
static long make_groups(const pair *p, size_t n, group *g, members *m)
{
    table t;
    size_t *of[2] = {malloc((n ? n : 1) * sizeof(size_t)),
                     malloc((n ? n : 1) * sizeof(size_t))};
    long ng = -1;
    memset(m, 0, sizeof *m);
    if (!of[0] || !of[1] || table_init(&t, n, same_group))
        goto done;
    size_t count = 0;
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *k = p[i].base ? p[i].base : p[i].new_;
        const size_t s = table_find(&t, k, group_hash(k));
        if (!t.key[s]) {
            t.key[s] = k;
            t.val[s] = count;
            g[count++].key = k;
        }
    }
    const size_t none = (size_t)-1;
    for (int side = 0; side < 2; ++side) {
        m->off[side] = calloc(count + 1, sizeof(size_t));
        m->idx[side] = malloc((n ? n : 1) * sizeof(size_t));
        if (!m->off[side] || !m->idx[side])
            goto fail;
        for (size_t i = 0; i < n; ++i) {
            const opcost_result *row = side ? p[i].new_ : p[i].base;
            of[side][i] = none;
            if (!row)
                continue;
            const size_t s = table_find(&t, row, group_hash(row));
            if (t.key[s]) {
                of[side][i] = t.val[s];
                ++m->off[side][t.val[s] + 1];
            }
        }
        for (size_t j = 0; j < count; ++j)
            m->off[side][j + 1] += m->off[side][j];
        size_t *fill = malloc((count ? count : 1) * sizeof *fill);
        if (!fill)
            goto fail;
        memcpy(fill, m->off[side], count * sizeof *fill);
        for (size_t i = 0; i < n; ++i)
            if (of[side][i] != none)
                m->idx[side][fill[of[side][i]]++] = i;
        free(fill);
    }
    ng = (long)count;
    goto freed;
fail:
    for (int side = 0; side < 2; ++side) {
        free(m->off[side]);
        free(m->idx[side]);
        m->off[side] = m->idx[side] = NULL;
    }
freed:
    table_free(&t);
done:
    free(of[0]);
    free(of[1]);
    return ng;
}

/* A ratio or a time for the terminal: fixed decimals in the usual range,
 * exponent notation beyond it (a 1e308 ratio is not 309 digits). */
static const char *num(char *buf, size_t len, double v, int decimals)
{
    if (fabs(v) < 1e7)
        snprintf(buf, len, "%.*f", decimals, v);
    else
        snprintf(buf, len, "%.4g", v);
    return buf;
}

/* Appends the gate's verdicts to gates_out (analysis/gates.h). */
static int write_gates(const char *gates_out, const pair *p, size_t n,
                       const group *g, size_t ng, const double *adj,
                       double alpha, double threshold, char *err, size_t len)
{
    const char *new_id = "", *base_id = "";
    for (size_t i = 0; i < n; ++i) {
        if (p[i].new_)
            new_id = p[i].new_->run_id;
        if (p[i].base)
            base_id = p[i].base->run_id;
    }
    opcost_gate_row *rows = calloc(ng ? ng : 1, sizeof *rows);
    if (!rows) {
        snprintf(err, len, "--gates-out: out of memory");
        return -1;
    }
    for (size_t j = 0; j < ng; ++j) {
        const double ratio = g[j].new_us / g[j].base_us;
        rows[j] = (opcost_gate_row){
            g[j].key,
            g[j].base_us,
            g[j].new_us,
            ratio,
            adj[j],
            (g[j].ok && adj[j] < alpha && ratio >= 1 + threshold) ||
                g[j].broken != NULL,
            0};
    }
    const int rc = opcost_gates_append("--gates-out", gates_out, new_id,
                                       base_id, rows, ng, err, len);
    free(rows);
    return rc;
}

/* 0 no regression, 1 a regression (slower, or a row that was ok in BASE
 * broke or went missing in NEW), 2 nothing compared or the verdicts could
 * not be written. */
static int gate(pair *p, size_t n, double alpha, double threshold,
                const char *gates_out, FILE *out)
{
    group *g = calloc(n ? n : 1, sizeof *g);
    members m;
    const long ngl = g ? make_groups(p, n, g, &m) : -1;
    if (ngl < 0) {
        free(g);
        fprintf(stderr, "opcost compare: out of memory (gate)\n");
        return 2;
    }
    const size_t ng = (size_t)ngl;
    double *ps = malloc((ng ? ng : 1) * sizeof *ps);
    double eb[GATE_MAX_REPS], en[GATE_MAX_REPS];
    for (size_t j = 0; j < ng; ++j) {
        int kb = 0, kn = 0;
        for (int r = 0; r < GATE_MAX_REPS; ++r) {
            const double b = expected(p, &m, j, 0, r);
            const double e = expected(p, &m, j, 1, r);
            if (!isnan(b))
                eb[kb++] = b;
            if (!isnan(e))
                en[kn++] = e;
        }
        g[j].base_us = expected(p, &m, j, 0, -1);
        g[j].new_us = expected(p, &m, j, 1, -1);
        g[j].broken = broken_row(p, &m, j);
        opcost_welch w;
        ps[j] = NAN;
        if (kb >= MIN_REPS && kn >= MIN_REPS &&
            !opcost_welch_log(eb, (size_t)kb, en, (size_t)kn, &w)) {
            ps[j] = w.p;
            g[j].se = w.se;
            g[j].df = w.df;
            g[j].log_ratio = log(w.ratio);
            g[j].ok = 1;
        }
    }
    /* widen each group's variance by the run-to-run noise of the groups */
    double *logs = malloc((ng ? ng : 1) * sizeof *logs);
    size_t nl = 0;
    for (size_t j = 0; logs && j < ng; ++j)
        if (g[j].ok)
            logs[nl++] = g[j].log_ratio;
    const double sigma = logs ? opcost_between_run_sigma(logs, nl) : 0;
    free(logs);
    for (size_t j = 0; j < ng; ++j)
        if (g[j].ok)
            ps[j] = opcost_p_with_run_noise(g[j].log_ratio, g[j].se, g[j].df,
                                            sigma);
    double *adj = malloc((ng ? ng : 1) * sizeof *adj);
    memcpy(adj, ps, (ng ? ng : 1) * sizeof *adj);
    opcost_holm(adj, ng);
    int regressions = 0;
    size_t compared = 0;
    double worst = 0, worst_p = NAN;
    fprintf(out,
            "\nGate: expected cost per call per distribution (%zu "
            "groups; Welch on per-repetition values, run-to-run sigma %.3f "
            "in log, Holm-corrected)\n",
            ng, sigma);
    for (size_t j = 0; j < ng; ++j) {
        const double ratio = g[j].new_us / g[j].base_us;
        const int reg = g[j].ok && adj[j] < alpha && ratio >= 1 + threshold;
        regressions += reg || g[j].broken;
        compared += g[j].ok;
        if (g[j].ok && ratio > worst) {
            worst = ratio;
            worst_p = adj[j];
        }
        char b1[32], b2[32], b3[32];
        if (g[j].broken) {
            const opcost_result *b = g[j].broken;
            fprintf(out,
                    "  %-11s %s %s %s %s %s [%s]: B=%lld N=%lld was ok in "
                    "BASE and is %s in NEW\n",
                    "BROKEN", g[j].key->distribution, g[j].key->op,
                    g[j].key->dtype, g[j].key->layout, g[j].key->path,
                    g[j].key->variant, (long long)b->B, (long long)b->N,
                    new_state(p, &m, j, b));
        } else if (reg || !g[j].ok)
            fprintf(out,
                    "  %-11s %s %s %s %s %s [%s]: %s -> %s us "
                    "(x%s, p_holm %.2g)\n",
                    reg ? "REGRESSION" : "no-claim", g[j].key->distribution,
                    g[j].key->op, g[j].key->dtype, g[j].key->layout,
                    g[j].key->path, g[j].key->variant,
                    isfinite(g[j].base_us) ? num(b1, sizeof b1, g[j].base_us, 2)
                                           : "(not all ok)",
                    isfinite(g[j].new_us) ? num(b2, sizeof b2, g[j].new_us, 2)
                                          : "(not all ok)",
                    num(b3, sizeof b3, ratio, 3), adj[j]);
    }
    char b1[32];
    fprintf(out,
            "  largest gated ratio: x%s (Holm-corrected p %.3g); %d "
            "regression%s; %zu of %zu groups compared\n",
            num(b1, sizeof b1, worst, 3), worst_p, regressions,
            regressions == 1 ? "" : "s", compared, ng);
    /* a gate that compared nothing passed nothing (and one whose rows
     * broke failed, above) */
    int rc = regressions ? 1 : 0;
    if (!compared && !regressions) {
        fprintf(out, "  no group could be compared (no rows in common that "
                     "were ok on both sides with enough repetitions): no "
                     "verdict\n");
        rc = 2;
    }
    char err[1024];
    if (gates_out && write_gates(gates_out, p, n, g, ng, adj, alpha, threshold,
                                 err, sizeof err)) {
        fprintf(stderr, "opcost compare: %s\n", err);
        rc = 2;
    }
    for (int side = 0; side < 2; ++side) {
        free(m.off[side]);
        free(m.idx[side]);
    }
    free(ps);
    free(adj);
    free(g);
    return rc;
}

/* ---- output */

static int write_csv(const char *path, const pair *p, size_t n, char *err,
                     size_t len)
{
    opcost_outfile o;
    if (opcost_outfile_open(&o, "--csv", path, err, len))
        return -1;
    FILE *f = o.f;
    fprintf(f, "distribution,op,B,N,dtype,weight_dtype,layout,path,"
               "base_variant,new_variant,device,threads,cache_state,"
               "base_median_us,new_median_us,ratio,p_value,p_holm,verdict,"
               "ratio_ci95_rel,rounds\n");
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *k = p[i].base ? p[i].base : p[i].new_;
        /* text fields quoted as every CSV opcost writes them */
        const char *text1[] = {k->distribution, k->op};
        for (int t = 0; t < 2; ++t) {
            opcost_csv_text(f, text1[t]);
            fputc(',', f);
        }
        fprintf(f, "%lld,%lld,", (long long)k->B, (long long)k->N);
        const char *text2[] = {k->dtype,
                               k->weight_dtype,
                               k->layout,
                               k->path,
                               p[i].base ? p[i].base->variant : "",
                               p[i].new_ ? p[i].new_->variant : "",
                               k->device};
        for (int t = 0; t < 7; ++t) {
            opcost_csv_text(f, text2[t]);
            fputc(',', f);
        }
        fprintf(f, "%lld,%s,", (long long)k->threads,
                opcost_cache_state_name(k->cache_state));
        const double v[] = {p[i].base ? p[i].base->median_us : NAN,
                            p[i].new_ ? p[i].new_->median_us : NAN, p[i].ratio,
                            p[i].p, p[i].p_holm};
        for (int j = 0; j < 5; ++j)
            if (isnan(v[j]))
                fputc(',', f);
            else
                fprintf(f, "%.6g,", v[j]);
        opcost_csv_text(f, p[i].verdict);
        fputc(',', f);
        if (p[i].paired && isfinite(p[i].est.ci95_rel))
            fprintf(f, "%.6g,%zu\n", p[i].est.ci95_rel, p[i].est.n);
        else
            fputs(",\n", f);
    }
    return opcost_outfile_commit(&o, err, len);
}

static void report(FILE *out, const pair *p, size_t n, double alpha,
                   double threshold, between_noise bn)
{
    int count[9] = {0};
    const char *names[] = {"slower",       "faster",    "same",
                           "too-few-reps", "not-timed", "only-base",
                           "only-new",     "unsure",    "too-few-rounds"};
    double worst = 0, worst_p = NAN;
    const pair *worst_pair = NULL;
    int paired = 0;
    double *ci = malloc((n ? n : 1) * sizeof *ci);
    size_t nci = 0;
    for (size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 9; ++k)
            if (!strcmp(p[i].verdict, names[k]))
                ++count[k];
        paired |= p[i].paired;
        if (ci && p[i].paired && isfinite(p[i].est.ci95_rel))
            ci[nci++] = p[i].est.ci95_rel;
        if (!isnan(p[i].p_holm) && p[i].ratio > worst) {
            worst = p[i].ratio;
            worst_p = p[i].p_holm;
            worst_pair = &p[i];
        }
    }
    fprintf(out,
            "%zu pairs: %d slower, %d faster, %d same, %d too few "
            "repetitions (no claim), %d not timed, %d only in base, %d "
            "only in new (threshold %.0f%%, alpha %.2g, Holm over %d "
            "tests)\n",
            n, count[0], count[1], count[2], count[3], count[4], count[5],
            count[6], threshold * 100, alpha,
            count[0] + count[1] + count[2] + count[7]);
    if (paired)
        fprintf(out,
                "paired in the rounds of one run: %d unsure (the interval "
                "reaches across the threshold), %d with too few rounds in "
                "common (no claim); median interval +-%.2f%%\n",
                count[7], count[8],
                100 * (ci ? opcost_median_inplace(ci, nci) : NAN));
    free(ci);
    /* how precise the host is: what this comparison had to allow for, and
     * what each run measured of itself */
    const double nb = recorded_noise(p, n, 1), nn = recorded_noise(p, n, 0);
    char b0[96] = "not known (fewer than 8 pairs)", b1[32] = "not recorded",
         b2[32] = "not recorded";
    if (!isnan(bn.q95))
        snprintf(b0, sizeof b0, "%.3f (x%.3f; the test's sigma %.3f)", bn.q95,
                 exp(bn.q95), bn.sigma);
    if (!isnan(nb))
        snprintf(b1, sizeof b1, "%.3f", nb);
    if (!isnan(nn))
        snprintf(b2, sizeof b2, "%.3f", nn);
    fprintf(out,
            "run-to-run noise (95th percentile of |log ratio|): %s between "
            "these runs; as each run measured its own (run_noise_rel): base "
            "%s, new %s\n",
            b0, b1, b2);
    if (worst_pair) {
        const opcost_result *k = worst_pair->new_;
        char b[32];
        fprintf(out,
                "largest ratio: x%s (Holm-corrected p %.3g) at %s %s "
                "B=%lld N=%lld %s %s %s\n",
                num(b, sizeof b, worst, 3), worst_p, k->path, k->op,
                (long long)k->B, (long long)k->N, k->dtype, k->layout,
                k->variant);
    }
    for (size_t i = 0; i < n; ++i) {
        const char *v = p[i].verdict;
        if (strcmp(v, "slower") && strcmp(v, "faster") &&
            strcmp(v, "only-base") && strcmp(v, "only-new"))
            continue;
        const opcost_result *k = p[i].base ? p[i].base : p[i].new_;
        fprintf(out, "  %-9s %s %s %s B=%lld N=%lld %s %s [%s]", v,
                k->distribution, k->path, k->op, (long long)k->B,
                (long long)k->N, k->dtype, k->layout, k->variant);
        char b1[32], b2[32], b3[32];
        if (!isnan(p[i].p_holm))
            fprintf(out, ": %s -> %s us (x%s, p_holm %.2g)",
                    num(b1, sizeof b1, p[i].base->median_us, 2),
                    num(b2, sizeof b2, p[i].new_->median_us, 2),
                    num(b3, sizeof b3, p[i].ratio, 3), p[i].p_holm);
        if (p[i].paired)
            fprintf(out, " +-%.2f%% over %zu rounds", 100 * p[i].est.ci95_rel,
                    p[i].est.n);
        fputc('\n', out);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: opcost compare [options] BASE.csv NEW.csv\n"
            "       opcost compare [options] --variants A,B RUN.csv\n"
            "Joins rows on op, B, N, dtype, weight_dtype, layout, path, "
            "variant, device,\nthreads and cache_state; tests each pair on "
            "its per-repetition medians (from\nthe .samples.csv sidecar): "
            "Welch's t-test on their logarithms, Holm-corrected\nacross "
            "pairs. A change is claimed only when significant and beyond "
            "the\nthreshold; fewer than 5 repetitions a side: no claim.\n"
            "  --threshold X   smallest change reported (default 0.05 = 5%%)\n"
            "  --alpha X       significance level after Holm (default 0.05)\n"
            "  --variants A,B  compare kernel variant B against A within RUN\n"
            "  --gate          gate on each distribution's weighted expected\n"
            "                  cost per call (rows reported, not gated)\n"
            "  --gates-out F   append the gate's verdicts to F (CSV; needs\n"
            "                  --gate)\n"
            "  --csv FILE      write every pair's verdict as CSV\n"
            "  --no-samples    read no .samples.csv sidecar: medians only,\n"
            "                  every pair without a claim (a missing or\n"
            "                  mismatched sidecar is otherwise an error)\n"
            "  --force         compare runs from different hosts, CPUs, torch\n"
            "                  versions or devices\n"
            "An opcost ab file (rows of side base and new) is refused: its "
            "rows are\npairs already; opcost ab --report FILE reads one. An "
            "incomplete file\n(unsettled rows: a run's journal) is refused.\n"
            "Outputs must be regular files or new names in existing,\n"
            "writable directories; they are checked before anything is read.\n"
            "Exit status: 0 no significant regression, 1 regression, 2 bad "
            "input (an unreadable or mismatched file or sidecar, an ab or\n"
            "incomplete file, an output that cannot be written).\n");
}

/* What `opcost compare` was asked. */
typedef struct compare_request {
    double threshold, alpha;
    const char *variants, *csv, *gates_out;
    int force, gated, no_samples;
    char va[128], vb[128];   /* --variants A,B */
    const char *base, *next; /* the files: BASE NEW, or RUN (base) alone */
} compare_request;

/* Parses the command line into q. *done = 0: go on and compare; else
 * the return value is the exit status (0 after --help; 2 for bad input,
 * the reason printed). */
static int parse_compare(int argc, char **argv, compare_request *q, int *done)
{
    static const struct option opts[] = {
        {"threshold", required_argument, NULL, 't'},
        {"alpha", required_argument, NULL, 'a'},
        {"variants", required_argument, NULL, 'v'},
        {"gate", no_argument, NULL, 'g'},
        {"gates-out", required_argument, NULL, 'G'},
        {"csv", required_argument, NULL, 'c'},
        {"force", no_argument, NULL, 'f'},
        {"no-samples", no_argument, NULL, 'n'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(q, 0, sizeof *q);
    q->threshold = q->alpha = 0.05;
    *done = 1;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 't':
            q->threshold = strtod(optarg, &end);
            if (*end || !(q->threshold >= 0 && q->threshold < 10)) {
                fprintf(stderr,
                        "opcost compare: --threshold: must be a "
                        "fraction in 0..10, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'a':
            q->alpha = strtod(optarg, &end);
            if (*end || !(q->alpha > 0 && q->alpha < 1)) {
                fprintf(stderr,
                        "opcost compare: --alpha: must be in (0, 1), "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'v': q->variants = optarg; break;
        case 'g': q->gated = 1; break;
        case 'G': q->gates_out = optarg; break;
        case 'c': q->csv = optarg; break;
        case 'f': q->force = 1; break;
        case 'n': q->no_samples = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr,
                    "opcost compare: unknown or incomplete option "
                    "'%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    const int nfiles = argc - optind;
    if (q->variants) {
        const char *v = q->variants, *comma = strchr(v, ',');
        if (!comma || comma == v || !comma[1] || strchr(comma + 1, ',') ||
            (size_t)(comma - v) >= sizeof q->va) {
            fprintf(stderr,
                    "opcost compare: --variants: must be two "
                    "variant names A,B, got '%s'\n",
                    v);
            return 2;
        }
        snprintf(q->va, sizeof q->va, "%.*s", (int)(comma - v), v);
        snprintf(q->vb, sizeof q->vb, "%s", comma + 1);
    }
    if (nfiles != (q->variants ? 1 : 2)) {
        fprintf(stderr, "opcost compare: expected %s, got %d file%s\n",
                q->variants ? "one RUN.csv with --variants"
                            : "BASE.csv NEW.csv",
                nfiles, nfiles == 1 ? "" : "s");
        return 2;
    }
    if (q->gates_out && !q->gated) {
        fprintf(stderr, "opcost compare: --gates-out: needs --gate (the "
                        "verdicts it appends are the gate's)\n");
        return 2;
    }
    /* outputs first: a result that could not be written is no result */
    char err[1024];
    if ((q->csv &&
         opcost_output_path_check("--csv", q->csv, err, sizeof err)) ||
        (q->gates_out && opcost_output_path_check("--gates-out", q->gates_out,
                                                  err, sizeof err))) {
        fprintf(stderr, "opcost compare: %s\n", err);
        return 2;
    }
    q->base = argv[optind];
    q->next = q->variants ? NULL : argv[optind + 1];
    /* and none of them is an input, or the other output */
    char bside[4096] = "", nside[4096] = "";
    if (opcost_samples_path(q->base, bside, sizeof bside, err, sizeof err))
        bside[0] = '\0';
    if (q->next &&
        opcost_samples_path(q->next, nside, sizeof nside, err, sizeof err))
        nside[0] = '\0';
    const char *inputs[] = {q->base, bside[0] ? bside : NULL, q->next,
                            nside[0] ? nside : NULL, q->gates_out};
    const char *names[] = {q->variants ? "RUN.csv" : "BASE.csv",
                           "BASE's sidecar", "NEW.csv", "NEW's sidecar",
                           "--gates-out"};
    if ((q->csv && opcost_output_not_input("--csv", q->csv, inputs, names, 5,
                                           err, sizeof err)) ||
        (q->gates_out &&
         opcost_output_not_input("--gates-out", q->gates_out, inputs, names, 4,
                                 err, sizeof err))) {
        fprintf(stderr, "opcost compare: %s\n", err);
        return 2;
    }
    *done = 0;
    return 0;
}

/* Pairs, tests and reports the rows of the two runs (or the two variants
 * of one run); the exit status. */
static int compare(const compare_request *q, const run *rb, const run *rn)
{
    /* pair rows: the k-th base row of a configuration with the k-th new */
    pair *p = calloc(rb->n + rn->n + 1, sizeof *p);
    const long npl =
        p ? make_pairs(p, rb, rn, q->variants ? q->va : NULL, q->vb) : -1;
    if (npl < 0) {
        fprintf(stderr, "opcost compare: out of memory (pairs)\n");
        free(p);
        return 2;
    }
    const size_t np = (size_t)npl;
    if (q->variants && np == 0) {
        fprintf(stderr,
                "opcost compare: --variants: %s has no kernel rows "
                "of variant '%s' or '%s' (run with --variants %s,%s)\n",
                q->base, q->va, q->vb, q->va, q->vb);
        free(p);
        return 2;
    }
    for (size_t i = 0; i < np; ++i)
        test_pair(&p[i]);
    const between_noise bn = decide(p, np, q->alpha, q->threshold);
    if (q->variants)
        printf("opcost compare: kernel variant %s against %s in %s\n", q->vb,
               q->va, q->base);
    else
        printf("opcost compare: %s against %s\n", q->next, q->base);
    report(stdout, p, np, q->alpha, q->threshold, bn);
    int rc = 0;
    for (size_t i = 0; i < np && !q->gated; ++i)
        if (!strcmp(p[i].verdict, "slower"))
            rc = 1;
    if (q->gated)
        rc = gate(p, np, q->alpha, q->threshold, q->gates_out, stdout);
    char err[1024];
    if (q->csv && write_csv(q->csv, p, np, err, sizeof err)) {
        fprintf(stderr, "opcost compare: %s\n", err);
        rc = 2;
    }
    free(p);
    return rc;
}

int opcost_compare_main(int argc, char **argv)
{
    key_probes = 0;
    compare_request q;
    int done;
    const int status = parse_compare(argc, argv, &q, &done);
    if (done)
        return status;
    char err[1024];
    run a, b;
    if (load(&a, q.base, q.no_samples, err, sizeof err)) {
        fprintf(stderr, "opcost compare: %s\n", err);
        unload(&a);
        return 2;
    }
    if (q.next && load(&b, q.next, q.no_samples, err, sizeof err)) {
        fprintf(stderr, "opcost compare: %s\n", err);
        unload(&a);
        unload(&b);
        return 2;
    }
    int rc;
    if (q.next && !q.force && foreign(&a, &b, err, sizeof err)) {
        fprintf(stderr,
                "opcost compare: refusing to compare: %s (use "
                "--force)\n",
                err);
        rc = 2;
    } else {
        rc = compare(&q, &a, q.next ? &b : &a);
    }
    unload(&a);
    if (q.next)
        unload(&b);
    return rc;
}
