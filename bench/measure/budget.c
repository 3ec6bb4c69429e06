/* The run's time budget and its ETA (budget.h). */
#include "budget.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- a point's op part: features per member, ridge regression */

/* A point's features, per member: a fixed part, its input sets (in units
 * of 10^4), a call's bytes (in ms of streaming them at the DRAM ceiling),
 * a layout that needs converting. */
#define FEATURES 4

typedef struct fit {
    double xtx[FEATURES][FEATURES], xty[FEATURES];
    double prior[FEATURES];
    double coef[FEATURES];
} fit;

/* How many points' worth of evidence the priors hold, and the run's first
 * point (which also pays the process's start: imports, the allocator's
 * first blocks, the compilers' start; 0.42 s a member on Zen 5 where the
 * next points took 0.02-0.3). */
#define PRIOR_WEIGHT 2.0
#define FIRST_POINT_WEIGHT 0.25

static void features(const opcost_budget_point *p, double *x)
{
    x[0] = 1;
    x[1] = p->nsets / 1e4;
    x[2] = p->stream_ms;
    x[3] = !p->contiguous;
}

/* Solves (X'X + w I) c = X'y + w prior by Gaussian elimination; a
 * coefficient below 0 is clamped (no phase gets cheaper with more work). */
static void solve(fit *f)
{
    double a[FEATURES][FEATURES + 1];
    for (int i = 0; i < FEATURES; ++i) {
        for (int j = 0; j < FEATURES; ++j)
            a[i][j] = f->xtx[i][j] + (i == j ? PRIOR_WEIGHT : 0);
        a[i][FEATURES] = f->xty[i] + PRIOR_WEIGHT * f->prior[i];
    }
    for (int c = 0; c < FEATURES; ++c) {
        int best = c;
        for (int r = c + 1; r < FEATURES; ++r)
            if (fabs(a[r][c]) > fabs(a[best][c]))
                best = r;
        for (int j = 0; j <= FEATURES; ++j) {
            const double t = a[c][j];
            a[c][j] = a[best][j];
            a[best][j] = t;
        }
        for (int r = 0; r < FEATURES; ++r) {
            if (r == c || a[c][c] == 0)
                continue;
            const double k = a[r][c] / a[c][c];
            for (int j = c; j <= FEATURES; ++j)
                a[r][j] -= k * a[c][j];
        }
    }
    for (int i = 0; i < FEATURES; ++i) {
        const double c = a[i][i] != 0 ? a[i][FEATURES] / a[i][i] : 0;
        f->coef[i] = c > 0 && isfinite(c) ? c : 0;
    }
}

static void fit_init(fit *f, const double *prior)
{
    memset(f, 0, sizeof *f);
    memcpy(f->prior, prior, sizeof f->prior);
    memcpy(f->coef, prior, sizeof f->coef);
}

/* One observation y at x, of weight w (1: a point's). */
static void fit_add(fit *f, const double *x, double y, double w)
{
    for (int i = 0; i < FEATURES; ++i) {
        for (int j = 0; j < FEATURES; ++j)
            f->xtx[i][j] += w * x[i] * x[j];
        f->xty[i] += w * x[i] * y;
    }
    solve(f);
}

static double fit_at(const fit *f, const double *x)
{
    double y = 0;
    for (int i = 0; i < FEATURES; ++i)
        y += f->coef[i] * x[i];
    return y;
}

/* Priors per member, from a default run on a 2-vCPU Zen 5 (its setups
 * 0.06 s a member, 0.15 s per 10^4 sets, 0.03 s per ms of a call's
 * streaming; the attribution pass 0.008 s, 0.015, 0.01); the points'
 * own costs replace them within a few points. */
static const double SETUP_PRIOR[FEATURES] = {0.06, 0.15, 0.03, 0.025};
static const double AFTER_PRIOR[FEATURES] = {0.008, 0.015, 0.01, 0};
/* Rounds beyond their budget (the rounds a pair needs of slow members):
 * seconds per member per ms of a call's streaming. */
#define ROUNDS_PER_STREAM_PRIOR 0.11
/* A compile at the first point of a class, before one was seen: this
 * share of the run's first point's (which also pays the compilers'
 * start; a later class cost 0.02-0.2 of it on Zen 5). */
#define NEW_CLASS_SHARE 0.1
/* A model member's calls outside the rounds: verification, calibration
 * and warm-up; the norm-share pass and evidence. */
#define MODEL_SETUP_CALLS 6.0
#define MODEL_AFTER_CALLS 5.0
/* The model pairs' per-round log-ratio spread before one was measured
 * (a LlamaDecoderLayer stack on 2-vCPU EPYCs: 0.06-0.07). */
#define MODEL_SIGMA_PRIOR 0.07
/* A compiled model path's compile a class, before the pilot measured
 * one. */
#define MODEL_COMPILE_PRIOR_S 10.0
/* The model points' share of the budget at most. */
#define MODEL_SHARE 0.4
/* What writing the results costs, at least. */
#define WRITE_RESERVE_S 1.0

/* ---- the models' costs */

typedef struct model_config {
    int known, available;
    double a_s, per_token_s, compile_s;
    char why[200];
} model_config;

typedef struct model_group {
    model_config cfg[2]; /* own, narrow */
    int choice;          /* -1: not decided; OPCOST_MODEL_OWN or _NARROW */
    int measured;        /* a point of it was measured */
    int wants_narrow;
} model_group;

/* Observations kept sorted (at most one a point): their median. */
typedef struct observed {
    double *x;
    size_t n;
} observed;

static void observe(observed *o, double v)
{
    if (!isfinite(v))
        return;
    size_t j = o->n++;
    for (; j > 0 && o->x[j - 1] > v; --j)
        o->x[j] = o->x[j - 1];
    o->x[j] = v;
}

/* The median, or otherwise where none was observed. */
static double median_or(const observed *o, double otherwise)
{
    if (!o->n)
        return otherwise;
    const size_t h = o->n / 2;
    return o->n % 2 ? o->x[h] : 0.5 * (o->x[h - 1] + o->x[h]);
}

struct opcost_budget {
    opcost_budget_rule rule;
    opcost_budget_point *p;
    size_t n;
    double start_s;
    /* per point */
    opcost_point_cost *cost;
    unsigned char *done, *cut, *model_cut;
    signed char *model_choice;
    double *planned_model_s; /* its model rounds as planned */
    double *scale;           /* the scale it was measured at */
    char (*why)[320];
    /* the first point still to come of its compile class, of its model
     * class (mark_firsts) */
    unsigned char *first_op, *first_model;
    unsigned char *taken; /* plan_models' scratch */
    size_t next;          /* the first point not done */
    /* learned */
    fit setup, after;
    observed rounds_obs, sigma_obs, ratio_obs;
    double first_compile, new_sum, old_sum;
    size_t new_n, old_n;
    int first_seen;     /* a point was measured */
    int first_compiled; /* a point of a compile class was */
    unsigned char *class_seen, *model_class_seen;
    unsigned char *class_met, *model_class_met; /* mark_firsts' scratch */
    int nclasses, nmodel_classes;
    model_group *groups;
    int ngroups;
    double pilot_s, held_s;
    /* the plan */
    double scale_now;
    double hold_now; /* seconds a point may hold */
    size_t replicates_wanted, replicates_run;
    double replicates_s, end_s;
    int finished;
    size_t scaled_points;
    double min_scale_used;
    int hold_cut;
};

static int max_index(const opcost_budget_point *p, size_t n, size_t off)
{
    int m = -1;
    for (size_t i = 0; i < n; ++i) {
        const int v = *(const int *)((const char *)&p[i] + off);
        m = v > m ? v : m;
    }
    return m;
}

opcost_budget *opcost_budget_new(const opcost_budget_rule *rule,
                                 const opcost_budget_point *p, size_t n,
                                 double start_s)
{
    opcost_budget *b = calloc(1, sizeof *b);
    if (!b)
        return NULL;
    b->rule = *rule;
    if (!(b->rule.min_scale > 0))
        b->rule.min_scale = 0.25;
    if (!(b->rule.max_scale >= 1))
        b->rule.max_scale = 1;
    if (!b->rule.paired_min)
        b->rule.paired_min = 8;
    b->n = n;
    b->start_s = start_s;
    const size_t k = n ? n : 1;
    b->p = malloc(k * sizeof *b->p);
    b->cost = calloc(k, sizeof *b->cost);
    b->done = calloc(k, 1);
    b->cut = calloc(k, 1);
    b->model_cut = calloc(k, 1);
    b->model_choice = calloc(k, 1);
    b->planned_model_s = calloc(k, sizeof *b->planned_model_s);
    b->scale = calloc(k, sizeof *b->scale);
    b->why = calloc(k, sizeof *b->why);
    b->first_op = calloc(k, 1);
    b->first_model = calloc(k, 1);
    b->taken = calloc(k, 1);
    b->rounds_obs.x = calloc(k, sizeof(double));
    b->sigma_obs.x = calloc(k, sizeof(double));
    b->ratio_obs.x = calloc(k, sizeof(double));
    b->nclasses =
        max_index(p, n, offsetof(opcost_budget_point, compile_class)) + 1;
    b->nmodel_classes =
        max_index(p, n, offsetof(opcost_budget_point, model_class)) + 1;
    b->ngroups =
        max_index(p, n, offsetof(opcost_budget_point, model_group)) + 1;
    b->class_seen = calloc((size_t)b->nclasses + 1, 1);
    b->model_class_seen = calloc((size_t)b->nmodel_classes + 1, 1);
    b->class_met = calloc((size_t)b->nclasses + 1, 1);
    b->model_class_met = calloc((size_t)b->nmodel_classes + 1, 1);
    b->groups = calloc((size_t)b->ngroups + 1, sizeof *b->groups);
    if (!b->p || !b->cost || !b->done || !b->cut || !b->model_cut ||
        !b->model_choice || !b->planned_model_s || !b->scale || !b->why ||
        !b->first_op || !b->first_model || !b->taken || !b->rounds_obs.x ||
        !b->sigma_obs.x || !b->ratio_obs.x || !b->class_seen ||
        !b->model_class_seen || !b->class_met || !b->model_class_met ||
        !b->groups) {
        opcost_budget_free(b);
        return NULL;
    }
    if (n)
        memcpy(b->p, p, n * sizeof *p);
    for (int g = 0; g < b->ngroups; ++g)
        b->groups[g].choice = -1;
    fit_init(&b->setup, SETUP_PRIOR);
    fit_init(&b->after, AFTER_PRIOR);
    b->scale_now = 1;
    b->min_scale_used = 1;
    return b;
}

void opcost_budget_free(opcost_budget *b)
{
    if (!b)
        return;
    free(b->p);
    free(b->cost);
    free(b->done);
    free(b->cut);
    free(b->model_cut);
    free(b->model_choice);
    free(b->planned_model_s);
    free(b->scale);
    free(b->why);
    free(b->first_op);
    free(b->first_model);
    free(b->taken);
    free(b->rounds_obs.x);
    free(b->sigma_obs.x);
    free(b->ratio_obs.x);
    free(b->class_seen);
    free(b->model_class_seen);
    free(b->class_met);
    free(b->model_class_met);
    free(b->groups);
    free(b);
}

/* ---- estimates */

static double rounds_per_stream(const opcost_budget *b)
{
    return median_or(&b->rounds_obs, ROUNDS_PER_STREAM_PRIOR);
}

/* A compile at the first point of a class, and at any other. */
static double compile_new(const opcost_budget *b)
{
    if (b->new_n)
        return b->new_sum / (double)b->new_n;
    return b->first_compiled ? NEW_CLASS_SHARE * b->first_compile : 2.0;
}

static double compile_old(const opcost_budget *b)
{
    return b->old_n ? b->old_sum / (double)b->old_n : 0;
}

/* Point j's op part at rounds scale s (it compiles where it is the first
 * of its class still to come: mark_firsts). */
static double op_cost(const opcost_budget *b, size_t j, double s)
{
    const int new_class = b->first_op[j];
    const opcost_budget_point *p = &b->p[j];
    double x[FEATURES];
    features(p, x);
    const double m = p->members;
    const double floor_rounds =
        rounds_per_stream(b) * m * p->stream_ms; /* the pairs' rounds */
    const double rounds =
        s * p->rounds_s > floor_rounds ? s * p->rounds_s : floor_rounds;
    const double compile = p->compile_class < 0 ? 0
                           : new_class          ? compile_new(b)
                                                : compile_old(b);
    return m * (fit_at(&b->setup, x) + fit_at(&b->after, x)) + rounds + compile;
}

static double sigma_now(const opcost_budget *b)
{
    return median_or(&b->sigma_obs, MODEL_SIGMA_PRIOR);
}

/* What the model points measured cost over what the plan estimated. */
static double model_ratio(const opcost_budget *b)
{
    return median_or(&b->ratio_obs, 1);
}

/* Rounds a model pair needs for a verdict: its interval within three
 * quarters of the threshold, at the spread measured so far. */
static double verdict_rounds(const opcost_budget *b)
{
    const double h = log1p(0.75 * b->rule.threshold);
    const double n = ceil(pow(2.0 * sigma_now(b) / h, 2));
    return n > (double)b->rule.paired_min ? n : (double)b->rule.paired_min;
}

static double model_call_s(const model_config *c, double tokens)
{
    return c->a_s + c->per_token_s * tokens;
}

/* One model call's time at point j in configuration k; NAN when unknown
 * or unavailable. */
static double model_call(const opcost_budget *b, size_t j, int k)
{
    const opcost_budget_point *p = &b->p[j];
    if (p->model_group < 0 || p->model_group >= b->ngroups)
        return NAN;
    const model_config *c = &b->groups[p->model_group].cfg[k];
    if (!c->known || !c->available)
        return NAN;
    return model_call_s(c, p->tokens);
}

/* The rounds point j's model members take in configuration k: for a
 * verdict under a budget, else the full run's --model-budget-s (or the
 * pairs' rounds where those take longer). */
static double model_rounds(const opcost_budget *b, size_t j, int k)
{
    const double call = model_call(b, j, k);
    const double per_round = b->p[j].model_members * call;
    if (b->rule.budget_s > 0)
        return verdict_rounds(b) * per_round;
    const double pairs = (double)b->rule.paired_min * per_round;
    return pairs > b->rule.model_budget_s ? pairs : b->rule.model_budget_s;
}

/* Point j's model part in configuration k with its rounds; class_new: it
 * pays its class's compile. 0 where it has no model part; NAN unknown. */
static double model_cost(const opcost_budget *b, size_t j, int k,
                         double rounds_s, int class_new)
{
    const opcost_budget_point *p = &b->p[j];
    if (!p->model_members)
        return 0;
    const double call = model_call(b, j, k);
    if (!isfinite(call))
        return NAN;
    const model_config *c = &b->groups[p->model_group].cfg[k];
    const double compile =
        isfinite(c->compile_s) ? c->compile_s : MODEL_COMPILE_PRIOR_S;
    const double calls =
        (MODEL_SETUP_CALLS + MODEL_AFTER_CALLS) * p->model_members * call;
    return model_ratio(b) * (calls + rounds_s) +
           (class_new ? p->model_compiled * compile : 0);
}

/* ---- the plan */

/* Which points from i on are the first still to come of their compile
 * class and of their model class (the cut ones and those whose model rows
 * are cut leave it to the next). */
static void mark_firsts(opcost_budget *b, size_t i)
{
    memset(b->first_op, 0, b->n);
    memset(b->first_model, 0, b->n);
    /* a class marked as met: seen before i, or its first from i found */
    memcpy(b->class_met, b->class_seen, (size_t)b->nclasses);
    memcpy(b->model_class_met, b->model_class_seen, (size_t)b->nmodel_classes);
    for (size_t j = i; j < b->n; ++j) {
        const opcost_budget_point *p = &b->p[j];
        if (b->cut[j])
            continue;
        if (p->compile_class >= 0 && !b->class_met[p->compile_class]) {
            b->first_op[j] = 1;
            b->class_met[p->compile_class] = 1;
        }
        if (p->model_members && !b->model_cut[j] && p->model_class >= 0 &&
            !b->model_class_met[p->model_class]) {
            b->first_model[j] = 1;
            b->model_class_met[p->model_class] = 1;
        }
    }
}

/* The op part of the points from i on that are not cut, at scale s. */
static double op_at(const opcost_budget *b, size_t i, double s)
{
    double t = 0;
    for (size_t j = i; j < b->n; ++j)
        if (!b->cut[j])
            t += op_cost(b, j, s);
    return t;
}

/* What a replicate costs: a point's mean op part at its rounds' budget,
 * compiled already. */
static double replicate_cost(const opcost_budget *b)
{
    double s = 0;
    for (size_t j = 0; j < b->n; ++j)
        s += op_cost(b, j, 1) - (b->first_op[j] ? compile_new(b) : 0);
    return b->n ? s / (double)b->n : 0;
}

/* Cuts whole points from i on, least weight per second first, until
 * their op floor fits `left`; the floor of those kept. */
static double cut_points(opcost_budget *b, size_t i, double left)
{
    mark_firsts(b, i);
    double need = op_at(b, i, b->rule.min_scale);
    while (need > left) {
        size_t worst = b->n;
        double worst_rate = INFINITY, worst_cost = 0;
        for (size_t j = i; j < b->n; ++j) {
            /* the run's first point also pays the process's start,
             * which cutting it would only move to the next */
            if (b->cut[j] || (j == i && !b->first_seen))
                continue;
            const double c = op_cost(b, j, b->rule.min_scale);
            /* the point at hand counts double: its cut is for good, a
             * later one's is planned again with better estimates */
            const double rate =
                b->p[j].value / (c > 1e-3 ? c : 1e-3) * (j == i ? 2 : 1);
            if (rate < worst_rate) {
                worst_rate = rate;
                worst = j;
                worst_cost = c;
            }
        }
        if (worst == b->n)
            break;
        b->cut[worst] = 1;
        snprintf(b->why[worst], sizeof b->why[worst],
                 "budget: its rows need ~%.0f s, and points of more weight "
                 "per second took the %.0f s left of --time-budget %.0f",
                 worst_cost, left > 0 ? left : 0, b->rule.budget_s);
        mark_firsts(b, i);
        need = op_at(b, i, b->rule.min_scale);
    }
    return need;
}

/* Point j's model part in its group's configuration k, as planned; NAN
 * unknown. */
static double model_planned(const opcost_budget *b, size_t j, int k)
{
    return model_cost(b, j, k, model_rounds(b, j, k), b->first_model[j]);
}

/* Greedy: the model points of group g (g < 0: every group, each in its
 * chosen configuration; else configuration k) from i on, most weight per
 * second first, each with its class's compile where it is the first,
 * within share seconds. Marks them in b->taken; returns their weight and
 * their cost in *spent. */
static double pick_models(opcost_budget *b, size_t i, int g, int k,
                          double share, double *spent)
{
    double value = 0;
    *spent = 0;
    memset(b->taken, 0, b->n);
    for (size_t j = i; j < b->n; ++j)
        if (b->p[j].model_members)
            b->model_cut[j] = 1;
    for (;;) {
        mark_firsts(b, i);
        size_t pick = b->n;
        double pick_rate = 0, pick_cost = 0;
        for (size_t j = i; j < b->n; ++j) {
            const opcost_budget_point *p = &b->p[j];
            if (b->cut[j] || b->taken[j] || !p->model_members ||
                p->model_group < 0 || (g >= 0 && p->model_group != g))
                continue;
            const int kk = g >= 0 ? k : b->groups[p->model_group].choice;
            if (kk < 0)
                continue;
            /* priced as if taken: first of its class where none is yet */
            b->model_cut[j] = 0;
            mark_firsts(b, i);
            const double c = model_planned(b, j, kk);
            b->model_cut[j] = 1;
            if (!isfinite(c) || *spent + c > share)
                continue;
            /* the point at hand counts double, as in cut_points: its
             * cut is for good, a later one's is planned again */
            const double rate =
                p->model_value / (c > 1e-3 ? c : 1e-3) * (j == i ? 2 : 1);
            if (pick == b->n || rate > pick_rate) {
                pick = j;
                pick_rate = rate;
                pick_cost = c;
            }
        }
        if (pick == b->n)
            break;
        b->taken[pick] = 1;
        b->model_cut[pick] = 0;
        *spent += pick_cost;
        value += b->p[pick].model_value;
    }
    mark_firsts(b, i);
    return value;
}

/* The model points from i on within share seconds: per group the
 * configuration that fits the most weight (the own model where both fit
 * alike; a group measured in one keeps it), then the points of all
 * groups by weight per second. Sets model_cut, model_choice and the
 * planned rounds; returns the seconds planned. */
static double plan_models(opcost_budget *b, size_t i, double share)
{
    double spent;
    for (int g = 0; g < b->ngroups; ++g) {
        model_group *grp = &b->groups[g];
        double total = 0;
        for (size_t j = i; j < b->n; ++j)
            if (b->p[j].model_members && b->p[j].model_group == g && !b->cut[j])
                total += b->p[j].model_value;
        double best = -1;
        int best_k = grp->measured ? grp->choice : -1;
        for (int k = OPCOST_MODEL_OWN; !grp->measured && k <= 1; ++k) {
            const model_config *c = &grp->cfg[k];
            if (!c->known || !c->available)
                continue;
            const double v = pick_models(b, i, g, k, share, &spent);
            if (v > best + 1e-12) {
                best = v;
                best_k = k;
            }
        }
        grp->choice = best_k;
        /* the own model fits less than the group's weight, and the
         * narrower one was not piloted yet: the plan asks for it */
        grp->wants_narrow = !grp->measured && grp->cfg[0].known &&
                            grp->cfg[0].available && !grp->cfg[1].known &&
                            best < total - 1e-9;
    }
    pick_models(b, i, -1, 0, share, &spent);
    for (size_t j = i; j < b->n; ++j) {
        const opcost_budget_point *p = &b->p[j];
        b->planned_model_s[j] = 0;
        if (!p->model_members || b->cut[j])
            continue;
        const model_config *own =
            p->model_group >= 0 ? &b->groups[p->model_group].cfg[0] : NULL;
        if (!own || !own->known || !own->available) {
            /* no pilot, or its stack cannot run here: the model paths
             * run as without a budget, and say why where they skip */
            b->model_cut[j] = 0;
            b->model_choice[j] = OPCOST_MODEL_OWN;
            continue;
        }
        if (b->model_cut[j])
            continue;
        b->model_choice[j] = (signed char)b->groups[p->model_group].choice;
        b->planned_model_s[j] = model_rounds(b, j, b->model_choice[j]);
    }
    mark_firsts(b, i);
    return spent;
}

/* The model parts of the points from i on as planned. */
static double models_at(const opcost_budget *b, size_t i)
{
    double s = 0;
    for (size_t j = i; j < b->n; ++j)
        if (!b->cut[j] && b->p[j].model_members && !b->model_cut[j]) {
            const double c = model_planned(b, j, b->model_choice[j]);
            s += isfinite(c) ? c : 0;
        }
    return s;
}

static int holds_ahead(const opcost_budget *b, size_t i)
{
    for (size_t j = i; j < b->n; ++j)
        if (!b->cut[j] && b->p[j].dram_streaming)
            return 1;
    return 0;
}

static double hold_left(const opcost_budget *b)
{
    const double h = b->rule.hold_s - b->held_s;
    return h > 0 ? h : 0;
}

/* Why point j's model rows are cut (the plan's share for them). */
static void model_cut_why(opcost_budget *b, size_t j, double share)
{
    const opcost_budget_point *p = &b->p[j];
    const model_group *grp =
        p->model_group >= 0 ? &b->groups[p->model_group] : NULL;
    const int k = grp && grp->choice >= 0 ? grp->choice : 0;
    const double need = grp ? model_planned(b, j, k) : NAN;
    if (!isfinite(need)) {
        snprintf(b->why[j], sizeof b->why[j],
                 "budget: no model stack could be piloted here%s%s",
                 grp && grp->cfg[0].why[0] ? ": " : "",
                 grp ? grp->cfg[0].why : "");
        return;
    }
    snprintf(b->why[j], sizeof b->why[j],
             "budget: a verdict on the model stack at %.0f tokens needs "
             "~%.0f s (%.0f rounds of %d calls); the %.0f s left of "
             "--time-budget %.0f for model points went to those of more "
             "weight per second",
             p->tokens, need, verdict_rounds(b), p->model_members,
             share > 0 ? share : 0, b->rule.budget_s);
}

/* The plan from point i on at elapsed_s: the op floors first (cutting
 * points where they do not fit), the model points within their share,
 * rounds up to their budget, the replicates, the hold, then rounds
 * beyond their budget. */
static void replan(opcost_budget *b, size_t i, double elapsed_s)
{
    if (b->rule.budget_s <= 0) {
        for (size_t j = i; j < b->n; ++j) {
            b->model_cut[j] = 0;
            b->model_choice[j] = OPCOST_MODEL_OWN;
            b->planned_model_s[j] = 0;
        }
        mark_firsts(b, i);
        b->scale_now = 1;
        b->hold_now = hold_left(b);
        return;
    }
    const double left =
        b->rule.budget_s - elapsed_s - b->start_s - WRITE_RESERVE_S;
    /* the points still to come are planned afresh: what the estimates
     * cut before may fit now */
    memset(b->cut + i, 0, b->n - i);
    const double floor = cut_points(b, i, left);
    double slack = left - floor;
    double spent_models = 0;
    for (size_t j = 0; j < i; ++j)
        spent_models += b->cost[j].model_setup_s + b->cost[j].model_rounds_s +
                        b->cost[j].model_after_s;
    double share = MODEL_SHARE * b->rule.budget_s - spent_models;
    share = share < slack ? share : slack;
    share = share > 0 ? share : 0;
    slack -= plan_models(b, i, share);
    for (size_t j = i; j < b->n; ++j)
        if (b->p[j].model_members && b->model_cut[j] && !b->cut[j])
            model_cut_why(b, j, share);
    const double at_min = op_at(b, i, b->rule.min_scale);
    const double extra = op_at(b, i, 1) - at_min;
    double s = 1;
    if (slack < extra)
        s = b->rule.min_scale +
            (1 - b->rule.min_scale) * (slack > 0 ? slack / extra : 0);
    slack -= extra;
    const double rep = replicate_cost(b);
    size_t k = b->replicates_wanted;
    while (k && slack < (double)k * rep)
        --k;
    b->replicates_run = k;
    slack -= (double)k * rep;
    /* the hold, what of it the slack leaves */
    b->hold_now = hold_left(b) < slack ? hold_left(b) : slack > 0 ? slack : 0;
    if (holds_ahead(b, i))
        slack -= b->hold_now;
    if (slack > 0 && b->rule.max_scale > 1) {
        const double more = op_at(b, i, b->rule.max_scale) - op_at(b, i, 1);
        if (more > 0)
            s = 1 + (b->rule.max_scale - 1) * (slack < more ? slack / more : 1);
    }
    b->scale_now = s;
}

void opcost_budget_model_cost(opcost_budget *b, int group, int narrow,
                              int available, double a_s, double per_token_s,
                              double compile_s, double pilot_s, const char *why)
{
    b->pilot_s += pilot_s > 0 ? pilot_s : 0;
    if (group < 0 || group >= b->ngroups)
        return;
    model_config *c = &b->groups[group].cfg[narrow ? 1 : 0];
    /* a configuration's graphs compile alike whatever its width */
    if (!isfinite(compile_s))
        compile_s = b->groups[group].cfg[narrow ? 0 : 1].compile_s;
    c->known = 1;
    c->available = available && isfinite(a_s) && isfinite(per_token_s);
    c->a_s = a_s > 0 ? a_s : 0;
    c->per_token_s = per_token_s > 0 ? per_token_s : 0;
    c->compile_s = compile_s;
    snprintf(c->why, sizeof c->why, "%s", why ? why : "");
}

int opcost_budget_wants_narrow(const opcost_budget *b, int group)
{
    return group >= 0 && group < b->ngroups && b->rule.budget_s > 0 &&
           b->groups[group].wants_narrow;
}

void opcost_budget_plan_point(opcost_budget *b, size_t i, double elapsed_s,
                              opcost_point_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->rounds_scale = 1;
    plan->hold_s = hold_left(b);
    if (i >= b->n)
        return;
    replan(b, i, elapsed_s);
    plan->cut = b->cut[i];
    plan->rounds_scale = b->scale_now;
    plan->hold_s = b->hold_now;
    plan->model = b->p[i].model_members && b->model_cut[i]
                      ? OPCOST_MODEL_CUT
                      : (opcost_model_choice)b->model_choice[i];
    plan->model_rounds_s = b->rule.budget_s > 0 ? b->planned_model_s[i] : 0;
    if (plan->cut || plan->model == OPCOST_MODEL_CUT)
        snprintf(plan->why, sizeof plan->why, "%s", b->why[i]);
    if (b->hold_now < hold_left(b) && b->p[i].dram_streaming)
        b->hold_cut = 1;
    b->scale[i] = plan->rounds_scale;
}

void opcost_budget_point_done(opcost_budget *b, size_t i,
                              const opcost_point_cost *c)
{
    if (i >= b->n || b->done[i])
        return;
    b->done[i] = 1;
    b->cost[i] = *c;
    b->next = i + 1;
    const opcost_budget_point *p = &b->p[i];
    b->held_s += c->held_s > 0 ? c->held_s : 0;
    if (b->cut[i])
        return; /* skipped: nothing measured */
    if (b->scale[i] < 1 - 1e-9) {
        ++b->scaled_points;
        b->min_scale_used =
            b->scale[i] < b->min_scale_used ? b->scale[i] : b->min_scale_used;
    }
    /* the op part, per member */
    const double m = p->members > 0 ? p->members : 1;
    const double compile = c->compile_s - c->model_compile_s;
    double x[FEATURES];
    features(p, x);
    const double w = b->first_seen ? 1 : FIRST_POINT_WEIGHT;
    fit_add(&b->setup, x, (c->setup_s - c->model_setup_s - compile) / m, w);
    fit_add(&b->after, x, (c->after_s - c->model_after_s) / m, w);
    const double rounds = c->rounds_s - c->model_rounds_s - c->held_s;
    if (!p->model_members && p->stream_ms > 0 &&
        rounds > 1.5 * b->scale[i] * p->rounds_s)
        observe(&b->rounds_obs, rounds / (m * p->stream_ms));
    if (p->compile_class >= 0) {
        const int is_new = !b->class_seen[p->compile_class];
        if (!b->first_compiled) {
            b->first_compiled = 1;
            b->first_compile = compile;
        } else if (is_new) {
            b->new_sum += compile;
            ++b->new_n;
        } else {
            b->old_sum += compile;
            ++b->old_n;
        }
        b->class_seen[p->compile_class] = 1;
    }
    b->first_seen = 1;
    /* the model part: its compile per compiled path, its calls against
     * the plan's estimate, the pairs' spread */
    const double model = c->model_setup_s - c->model_compile_s +
                         c->model_rounds_s + c->model_after_s;
    if (p->model_members && model > 0 && p->model_group >= 0) {
        model_group *g = &b->groups[p->model_group];
        const int k = b->model_choice[i] == OPCOST_MODEL_NARROW;
        const int class_first =
            p->model_class < 0 || !b->model_class_seen[p->model_class];
        g->measured = 1;
        g->choice = k;
        if (p->model_class >= 0 && !b->model_class_seen[p->model_class] &&
            p->model_compiled && c->model_compile_s > 0)
            g->cfg[k].compile_s = c->model_compile_s / p->model_compiled;
        if (p->model_class >= 0)
            b->model_class_seen[p->model_class] = 1;
        /* the first point of a class also builds the float64 stack
         * that verifies it and pays the compiles' own start: the ratio
         * learns from the others */
        const double call = model_call(b, i, k);
        if (isfinite(call) && call > 0 && !class_first) {
            const double want = (MODEL_SETUP_CALLS + MODEL_AFTER_CALLS) *
                                    p->model_members * call +
                                c->model_rounds_s;
            const double got = c->model_setup_s - c->model_compile_s +
                               c->model_after_s + c->model_rounds_s;
            if (want > 0)
                observe(&b->ratio_obs, got / want);
        }
        if (isfinite(c->model_sigma) && c->model_sigma > 0)
            observe(&b->sigma_obs, c->model_sigma);
    }
}

double opcost_budget_left_s(opcost_budget *b, double elapsed_s)
{
    const size_t i = b->next;
    mark_firsts(b, i);
    double left = op_at(b, i, b->scale_now) + models_at(b, i);
    left += (double)(b->rule.budget_s > 0 ? b->replicates_run
                                          : b->replicates_wanted) *
            replicate_cost(b);
    if (holds_ahead(b, i))
        left += b->hold_now;
    left += b->start_s + WRITE_RESERVE_S;
    /* a budget is a deadline the plan keeps */
    if (b->rule.budget_s > 0 && elapsed_s + left > b->rule.budget_s)
        left = b->rule.budget_s - elapsed_s;
    return left > 0 ? left : 0;
}

size_t opcost_budget_replicates(opcost_budget *b, size_t wanted,
                                double elapsed_s)
{
    b->replicates_wanted = wanted;
    if (b->rule.budget_s <= 0) {
        b->replicates_run = wanted;
        return wanted;
    }
    const double left =
        b->rule.budget_s - elapsed_s - b->start_s - WRITE_RESERVE_S;
    const double rep = replicate_cost(b);
    size_t k = wanted;
    while (k && (double)k * rep > left)
        --k;
    b->replicates_run = k;
    return k;
}

void opcost_budget_finish(opcost_budget *b, double replicates_s,
                          double elapsed_s)
{
    b->replicates_s = replicates_s;
    double points = 0;
    for (size_t j = 0; j < b->n; ++j)
        points += b->cost[j].total_s;
    b->end_s = elapsed_s - b->start_s - b->pilot_s - points - replicates_s;
    if (b->end_s < 0)
        b->end_s = 0;
    b->finished = 1;
}

int opcost_budget_is_cut(const opcost_budget *b, size_t i)
{
    return i < b->n && b->cut[i];
}

void opcost_budget_summarize(const opcost_budget *b, opcost_budget_summary *s)
{
    memset(s, 0, sizeof *s);
    s->budget_s = b->rule.budget_s;
    s->points = b->n;
    s->replicates_wanted = b->replicates_wanted;
    s->replicates_run = b->replicates_run;
    s->scaled_points = b->scaled_points;
    s->min_scale = b->min_scale_used;
    s->hold_cut = b->hold_cut;
    s->start_s = b->start_s;
    s->pilot_s = b->pilot_s;
    s->end_s = b->end_s;
    s->replicates_s = b->replicates_s;
    for (size_t j = 0; j < b->n; ++j) {
        const opcost_point_cost *c = &b->cost[j];
        s->longest_s = c->total_s > s->longest_s ? c->total_s : s->longest_s;
        s->cut_points += b->cut[j];
        const int g = b->p[j].model_group;
        if (b->p[j].model_members && !b->cut[j] && g >= 0 &&
            b->groups[g].cfg[0].available) {
            ++s->model_points;
            s->model_cut += b->model_cut[j];
            s->model_narrow +=
                !b->model_cut[j] && b->model_choice[j] == OPCOST_MODEL_NARROW;
        }
        s->model.setup_s += c->model_setup_s - c->model_compile_s;
        s->model.compile_s += c->model_compile_s;
        s->model.rounds_s += c->model_rounds_s;
        s->model.after_s += c->model_after_s;
        s->op.setup_s +=
            c->setup_s - c->model_setup_s - (c->compile_s - c->model_compile_s);
        s->op.compile_s += c->compile_s - c->model_compile_s;
        s->op.rounds_s += c->rounds_s - c->model_rounds_s - c->held_s;
        s->op.held_s += c->held_s;
        s->op.after_s += c->after_s - c->model_after_s;
        s->op.total_s += c->total_s;
    }
    s->model.total_s = s->model.setup_s + s->model.compile_s +
                       s->model.rounds_s + s->model.after_s;
    s->op.total_s -= s->model.total_s;
}
