/* One run's time budget (run_budget.h). */
#include "run_budget.h"
#include "bandwidth_state.h"
#include "paired.h"
#include "point_rows.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A rounds budget scales down to this share of itself (the rounds a
 * ratio needs at least still hold), and up to this many times itself
 * where a budget leaves time to spare. */
#define OPCOST_BUDGET_MIN_SCALE 0.25
#define OPCOST_BUDGET_MAX_SCALE 4.0

/* The index of key among keys[0..*n-1], appended when new. */
static int index_of(int64_t *keys, int *n, int64_t key)
{
    for (int i = 0; i < *n; ++i)
        if (keys[i] == key)
            return i;
    keys[*n] = key;
    return (*n)++;
}

/* What a compiled graph's guards tell apart: op, dtype, layout, B = 1 and
 * N = 1 (0/1 specialization). */
static int64_t compile_key(const opcost_case *c)
{
    return ((((int64_t)c->op * 16 + c->dtype) * 16 + c->layout) * 2 +
            (c->B == 1)) *
               2 +
           (c->N == 1);
}

static int same_group(const opcost_case *a, const opcost_case *b)
{
    return !strcmp(a->distribution, b->distribution) && a->op == b->op &&
           a->dtype == b->dtype && a->layout == b->layout;
}

/* The index of the first case of case i's shape set (its cases share the
 * name). */
static size_t set_of(const opcost_case *cases, size_t i)
{
    size_t set = 0;
    while (strcmp(cases[set].distribution, cases[i].distribution))
        ++set;
    return set;
}

/* The points' weights: each shape set alike, its groups (op, dtype,
 * layout) alike, a point by its freq within its group; a model point by
 * its freq within its model group. 0, or -1 when memory ran out. */
static int weigh_points(opcost_run_budget *rb, const opcost_case *cases,
                        size_t n)
{
    const size_t k = n ? n : 1;
    size_t *first = calloc(k, sizeof *first); /* its group's first case */
    double *sum = calloc(k, sizeof *sum), *msum = calloc(k, sizeof *msum);
    size_t *groups = calloc(k, sizeof *groups); /* of a set's first case */
    size_t *heads = calloc(k, sizeof *heads);   /* each group's first */
    const int ok = first && sum && msum && groups && heads;
    size_t ng = 0;
    for (size_t i = 0; ok && i < n; ++i) {
        size_t g = 0;
        while (g < ng && !same_group(&cases[heads[g]], &cases[i]))
            ++g;
        if (g == ng) {
            heads[ng++] = i;
            ++groups[set_of(cases, i)];
        }
        first[i] = heads[g];
        sum[heads[g]] += cases[i].freq;
        if (rb->points[i].model_members)
            msum[rb->points[i].model_group] += cases[i].freq;
    }
    for (size_t i = 0; ok && i < n; ++i) {
        const size_t set = set_of(cases, i);
        const double s = sum[first[i]];
        rb->points[i].value = (s > 0 ? cases[i].freq / s : 1) /
                              (double)(groups[set] ? groups[set] : 1);
        const int mg = rb->points[i].model_group;
        rb->points[i].model_value =
            mg >= 0 && msum[mg] > 0 ? cases[i].freq / msum[mg] : 0;
        if (mg >= 0 && cases[i].freq > cases[rb->group_span[mg][2]].freq)
            rb->group_span[mg][2] = i;
    }
    free(first);
    free(sum);
    free(msum);
    free(groups);
    free(heads);
    return ok ? 0 : -1;
}

int opcost_run_budget_open(opcost_run_budget *rb, const opcost_plan *run_plan,
                           const opcost_case *cases, size_t n, double dram_gbps,
                           size_t llc_bytes, int cuda, double start_s,
                           int sides)
{
    memset(rb, 0, sizeof *rb);
    const size_t k = n ? n : 1;
    rb->n = n;
    rb->points = calloc(k, sizeof *rb->points);
    int64_t *ckeys = calloc(k, sizeof *ckeys);
    int64_t *gkeys = calloc(k, sizeof *gkeys);
    rb->group_span = calloc(k, sizeof *rb->group_span);
    int nclasses = 0;
    if (!rb->points || !ckeys || !gkeys || !rb->group_span) {
        free(ckeys);
        free(gkeys);
        opcost_run_budget_close(rb);
        return -1;
    }
    int compiled = 0;
    for (int p = 0; p < run_plan->npaths; ++p)
        compiled |=
            !run_plan->paths[p]->model && run_plan->paths[p]->compile_ms;
    const long max_tokens = run_plan->model_max_tokens >= 0
                                ? run_plan->model_max_tokens
                            : cuda ? 0
                                   : OPCOST_MODEL_MAX_TOKENS_CPU;
    point_row_id ids[POINT_ROWS_MAX];
    for (size_t i = 0; i < n; ++i) {
        const opcost_case *c = &cases[i];
        opcost_budget_point *pt = &rb->points[i];
        const int nids = point_row_ids(run_plan, c, ids);
        for (int r = 0; r < nids; ++r) {
            const opcost_path *path = ids[r].path;
            if (!path->model) {
                pt->members += sides;
            } else if (max_tokens == 0 || c->B <= max_tokens) {
                ++pt->model_members;
                pt->model_compiled += strstr(path->name, "-eager") == NULL;
            }
        }
        const double bytes = (double)opcost_case_bytes(c);
        pt->stream_ms = dram_gbps > 0 ? bytes / (dram_gbps * 1e6) : 0;
        pt->nsets = opcost_workload_sets(c, llc_bytes, run_plan->cold);
        pt->contiguous = c->layout == OPCOST_CONTIGUOUS;
        pt->compile_class =
            compiled ? index_of(ckeys, &nclasses, compile_key(c)) : -1;
        pt->rounds_s =
            run_plan->reps * run_plan->rep_budget_s * (pt->members + 1);
        pt->dram_streaming = !cuda && run_plan->cold &&
                             bytes >= OPCOST_STREAMING_BYTES &&
                             opcost_bw_dram_sized(bytes, llc_bytes);
        pt->model_group = pt->model_class = -1;
        if (pt->model_members) {
            /* a group: the set (its cases share the name's pointer) and
             * the dtype */
            const int64_t key =
                (int64_t)(intptr_t)c->distribution * 8 + c->dtype;
            const int before = rb->ngroups;
            pt->model_group = index_of(gkeys, &rb->ngroups, key);
            size_t *span = rb->group_span[pt->model_group];
            if (pt->model_group == before)
                span[0] = span[1] = span[2] = i;
            if (c->B < cases[span[0]].B)
                span[0] = i;
            if (c->B > cases[span[1]].B)
                span[1] = i;
            pt->model_class = 2 * pt->model_group + (c->B == 1);
            pt->tokens = (double)c->B;
        }
    }
    free(ckeys);
    free(gkeys);
    if (weigh_points(rb, cases, n)) {
        opcost_run_budget_close(rb);
        return -1;
    }
    const opcost_budget_rule rule = {
        .budget_s = run_plan->time_budget_s,
        .threshold = run_plan->threshold,
        .model_budget_s = run_plan->model_budget_s,
        .hold_s = cuda ? 0 : run_plan->full_bandwidth_wait_s,
        .min_scale = OPCOST_BUDGET_MIN_SCALE,
        .max_scale = run_plan->time_budget_s > 0 ? OPCOST_BUDGET_MAX_SCALE : 1,
        .paired_min = OPCOST_PAIRED_MIN,
    };
    rb->b = opcost_budget_new(&rule, rb->points, n, start_s);
    if (!rb->b) {
        opcost_run_budget_close(rb);
        return -1;
    }
    return 0;
}

void opcost_run_budget_close(opcost_run_budget *rb)
{
    opcost_budget_free(rb->b);
    free(rb->points);
    free(rb->group_span);
    memset(rb, 0, sizeof *rb);
}

void opcost_run_budget_pilot(opcost_run_budget *rb, const opcost_plan *run_plan,
                             const opcost_case *cases, size_t rotate_bytes,
                             int g, int narrow, opcost_model_pilot *out)
{
    const size_t *span = rb->group_span[g];
    opcost_model_pilot_run(run_plan, &cases[span[0]], &cases[span[1]],
                           &cases[span[2]], narrow, rotate_bytes, out);
    opcost_budget_model_cost(rb->b, g, narrow, out->available, out->a_s,
                             out->per_token_s, out->compile_s, out->seconds,
                             out->why);
}
