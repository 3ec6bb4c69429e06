/* `opcost ab`: a point of both sides (ab_coordinator.h). */
#define _GNU_SOURCE
#include "ab_coordinator.h"
#include "ab_verdicts.h"
#include "ab_wire.h"
#include "paired.h"
#include "point.h"
#include "probe.h"
#include "rounds.h"
#include "timer.h"
#include "timing.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- a point of both sides */

/* A member on one side: its index there, the calls per sample, and where
 * in the rotation its next sample starts: a pair's two sides advance
 * alike (one sample a round, the same calls) over the same sets, their
 * samples back to back (one group of the rounds), each sample's sets
 * flushed first by the coordinator, whatever their size: both sides read
 * the same pages from the same cold state, whatever each build's worker
 * does itself. */
typedef struct remote {
    opcost_ab_side *side;
    const opcost_workload *w;
    int index, batch;
    int lead_in; /* the worker leads each sample in with an untimed call */
    int64_t pos, nsets;
    double call_us; /* a call's time, as calibrated: the sample's deadline */
    const opcost_ab_ctx *ab;
} remote;

static int remote_sample(void *ctx, double *us, double *device_us, char *err,
                         size_t len)
{
    remote *r = ctx;
    if (!r->side->alive) {
        snprintf(err, len, "%s",
                 r->side->why[0] ? r->side->why : "the worker is gone");
        return -1;
    }
    ab_sample q;
    memset(&q, 0, sizeof q); /* no stray bytes on the wire */
    q.kind = AB_SAMPLE;
    q.member = r->index;
    q.batch = r->batch;
    q.lead_in = 1 + r->lead_in;
    q.set = r->pos % r->nsets;
    opcost_workload_flush_any(r->w, (int)q.set, r->batch + r->lead_in);
    r->pos += r->batch + r->lead_in;
    ab_sample_reply a;
    const double expected_s =
        (r->batch + r->lead_in) * (r->call_us > 0 ? r->call_us : 0) / 1e6;
    if (opcost_ab_exchange(r->ab, r->side, &q, sizeof q, -1, &a, sizeof a,
                           AB_DEADLINE_SAMPLE_S +
                               AB_DEADLINE_SAMPLE_MULTIPLE * expected_s,
                           "a sample")) {
        snprintf(err, len, "%s", r->side->why);
        return -1;
    }
    if (!a.ok) {
        snprintf(err, len, "%s", a.error);
        return -1;
    }
    *us = a.us;
    *device_us = a.device_us;
    return 0;
}

typedef struct probe_slot {
    opcost_path_run run;
    opcost_timer_state timer;
    int member; /* -1: not timed */
} probe_slot;

static int probe_sample(void *ctx, double *us, double *device_us, char *err,
                        size_t len)
{
    probe_slot *p = ctx;
    if (opcost_timing_sample(&p->timer, us, device_us)) {
        snprintf(err, len, "%s", p->timer.error);
        return -1;
    }
    return 0;
}

/* Workers of a run at most: both sides' processes. */
#define MAX_WORKERS (2 * OPCOST_AB_MAX_PROCESSES)

typedef struct ab_point {
    opcost_ab_ctx *ab;
    const point_context *pc;
    const opcost_case *c;
    run_out *out;
    int fd;
    void *mem;
    size_t bytes;
    opcost_workload w;
    int made;
    point_row_id ids[POINT_ROWS_MAX];
    int n;                                /* members a worker */
    int nw;                               /* workers (2 x processes) */
    size_t row[2][OPCOST_AB_MAX_MEMBERS]; /* a side's, into out->rows */
    /* worker w (side w % 2, process w / 2) */
    int member[MAX_WORKERS][OPCOST_AB_MAX_MEMBERS]; /* -1: not timed */
    remote rm[MAX_WORKERS][OPCOST_AB_MAX_MEMBERS];
    ab_member_state state[MAX_WORKERS][OPCOST_AB_MAX_MEMBERS];
    probe_slot probe;
    point_probe probed;
    opcost_bw_split split; /* the probe's samples of one bandwidth state */
    opcost_member members[MAX_WORKERS * OPCOST_AB_MAX_MEMBERS + 1];
    int nmembers;
    opcost_rounds_result rounds;
} ab_point;

static opcost_result *row_of(ab_point *pt, int side, int i)
{
    return &pt->out->rows[pt->row[side][i]];
}

/* The block both sides share: a memfd (hugetlb pages where the kernel
 * has them reserved, else shmem pages, transparent huge pages where
 * shmem_enabled allows them) of whole 2 MiB pages, mapped alike on both
 * sides (ab_map_block). */
static int make_block(ab_point *pt, char *err, size_t len)
{
    const opcost_plan *run_plan = pt->pc->run_plan;
    size_t nsets;
    const size_t llc = pt->pc->dev->rotate_bytes;
    const size_t huge = (size_t)2 << 20;
    pt->bytes =
        opcost_workload_shared_bytes(pt->c, llc, run_plan->cold, &nsets);
    pt->bytes = (pt->bytes + huge - 1) / huge * huge;
    for (int hugetlb = 1; hugetlb >= 0 && !pt->mem; --hugetlb) {
        pt->fd = memfd_create("opcost-ab",
                              MFD_CLOEXEC | (hugetlb ? MFD_HUGETLB : 0));
        if (pt->fd >= 0 && ftruncate(pt->fd, (off_t)pt->bytes) == 0)
            pt->mem = ab_map_block(pt->fd, pt->bytes);
        if (!pt->mem && pt->fd >= 0) {
            close(pt->fd);
            pt->fd = -1;
        }
    }
    if (!pt->mem) {
        snprintf(err, len, "shared memory of %zu bytes: %s", pt->bytes,
                 strerror(errno));
        return -1;
    }
    if (opcost_workload_attach(&pt->w, pt->c, nsets, llc, run_plan->cold,
                               pt->mem, 1, run_plan->seed, err, len))
        return -1;
    pt->made = 1;
    return 0;
}

/* The errors side s's members measured at verification, into its rows
 * (protocol 2: AB_ERRORS). */
static int open_errors(ab_point *pt, opcost_ab_side *side, int s, char *err,
                       size_t len)
{
    const uint32_t q = AB_ERRORS;
    static ab_errors_reply e;
    memset(&e, 0, sizeof e);
    if (opcost_ab_exchange(pt->ab, side, &q, sizeof q, -1, &e, sizeof e,
                           AB_DEADLINE_REPLY_S, "its verification's errors")) {
        snprintf(err, len, "%s", side->why);
        return -1;
    }
    for (int i = 0; e.ok && i < pt->n && i < e.nmembers; ++i)
        if (pt->state[s][i].status == OPCOST_STATUS_OK) {
            opcost_result *row = row_of(pt, s, i);
            row->out_err_units = e.out_err_units[i];
            row->residual_err_units = e.residual_err_units[i];
        }
    return 0;
}

/* Every worker prepares every member on the block; the side's rows say
 * what came of it (the first process's dispatch, any process's failure).
 * -1 when a worker is gone. */
static int open_sides(ab_point *pt, char *err, size_t len)
{
    static ab_open q; /* 8 KiB */
    memset(&q, 0, sizeof q);
    q.kind = AB_OPEN;
    q.op = pt->c->op;
    q.dtype = pt->c->dtype;
    q.weight_dtype = pt->c->weight_dtype;
    q.layout = pt->c->layout;
    q.cold = pt->pc->run_plan->cold;
    q.nmembers = pt->n;
    q.B = pt->c->B;
    q.N = pt->c->N;
    q.eps = pt->c->eps;
    q.nsets = (uint64_t)pt->w.nsets;
    q.llc_bytes = pt->pc->dev->rotate_bytes;
    q.bytes = pt->bytes;
    for (int i = 0; i < pt->n; ++i) {
        snprintf(q.path[i], sizeof q.path[i], "%s", pt->ids[i].path->name);
        snprintf(q.variant[i], sizeof q.variant[i], "%s",
                 pt->ids[i].variant->name);
    }
    static ab_open_reply r;
    for (int wk = 0; wk < pt->nw; ++wk) {
        const int s = wk % 2;
        opcost_ab_side *side = &pt->ab->workers[wk];
        q.first_set = 0; /* as remote.pos */
        memset(&r, 0, sizeof r);
        if (opcost_ab_exchange(pt->ab, side, &q, sizeof q, pt->fd, &r, sizeof r,
                               AB_DEADLINE_OPEN_S +
                                   AB_DEADLINE_OPEN_MEMBER_S * pt->n,
                               "a point's opening")) {
            snprintf(err, len, "%s", side->why);
            return -1;
        }
        for (int i = 0; i < pt->n; ++i) {
            opcost_result *row = row_of(pt, s, i);
            if (!r.ok) {
                point_row_status(row, OPCOST_STATUS_ERROR, r.error);
                continue;
            }
            pt->state[wk][i] = r.m[i];
            if (wk < 2)
                snprintf(row->dispatch_path, sizeof row->dispatch_path, "%s",
                         r.m[i].dispatch_path);
            if (r.m[i].status != OPCOST_STATUS_OK)
                point_row_status(row, (opcost_status)r.m[i].status, r.m[i].why);
        }
        if (r.ok && wk < 2 && side->protocol >= 2 &&
            open_errors(pt, side, s, err, len))
            return -1;
    }
    return 0;
}

static void add_member(ab_point *pt, const char *name,
                       int (*sample)(void *, double *, double *, char *,
                                     size_t),
                       void *ctx, double cost_us)
{
    opcost_member *m = &pt->members[pt->nmembers++];
    memset(m, 0, sizeof *m);
    m->name = name;
    m->sample = sample;
    m->ctx = ctx;
    m->cost_us = cost_us;
}

/* The rounds: every ready member of every worker and the probe, a
 * member's workers back to back; the ratios tracked are each new process's
 * member against its base twin's. */
static int time_point(ab_point *pt, char *err, size_t len)
{
    const opcost_plan *run_plan = pt->pc->run_plan;
    opcost_rounds_pair pairs[OPCOST_AB_MAX_MEMBERS * OPCOST_AB_MAX_PROCESSES];
    int np = 0;
    for (int i = 0; i < pt->n; ++i) {
        const ab_member_state *b = &pt->state[AB_BASE][i];
        for (int wk = 0; wk < pt->nw; ++wk) {
            const ab_member_state *st = &pt->state[wk][i];
            pt->member[wk][i] = -1;
            if (st->status != OPCOST_STATUS_OK ||
                row_of(pt, wk % 2, i)->status != OPCOST_STATUS_OK)
                continue;
            /* the same calls per sample on both sides, and the same
             * lead-in call: the base's. Each side deciding by its own call
             * can split them near 1 ms (an A/A's eager-cpp bfloat16 B =
             * 1215: base 1032 us a call, new 858, x0.907; how much of that
             * the split made, beside the processes' own spread there, is
             * not known: results/20261204T211907Z-aa3-400ms-omp-ab.csv) */
            const int base_ok = b->status == OPCOST_STATUS_OK;
            const int batch = base_ok ? b->batch : st->batch;
            const double call_us = base_ok ? b->call_us : st->call_us;
            pt->rm[wk][i] = (remote){&pt->ab->workers[wk],
                                     &pt->w,
                                     i,
                                     batch,
                                     call_us < OPCOST_LEAD_IN_BELOW_US,
                                     0,
                                     pt->w.nsets,
                                     call_us,
                                     pt->ab};
            pt->member[wk][i] = pt->nmembers;
            add_member(pt, pt->ids[i].path->name, remote_sample, &pt->rm[wk][i],
                       st->call_us * batch);
            /* the member's samples of all workers back to back */
            pt->members[pt->nmembers - 1].group = i + 1;
        }
        for (int wk = 0; wk + 1 < pt->nw; wk += 2)
            if (pt->member[wk + AB_BASE][i] >= 0 &&
                pt->member[wk + AB_NEW][i] >= 0)
                pairs[np++] = (opcost_rounds_pair){pt->member[wk + AB_NEW][i],
                                                   pt->member[wk + AB_BASE][i]};
    }
    const int timed = pt->nmembers;
    if (pt->probe.member >= 0) {
        pt->probe.member = pt->nmembers;
        add_member(pt, "probe", probe_sample, &pt->probe,
                   pt->probe.timer.call_us * pt->probe.timer.batch);
    }
    if (!pt->nmembers)
        return 0;
    const opcost_rounds_rule rule = {
        .target_rel = run_plan->noise_target,
        /* the time of one process a side: more processes, fewer rounds
         * (each round's ratio averages over them) */
        .budget_s = run_plan->reps * run_plan->rep_budget_s *
                    (timed / pt->ab->processes + (pt->nmembers - timed)) *
                    (pt->pc->plan ? pt->pc->plan->rounds_scale : 1),
        .min_rounds = (size_t)(run_plan->reps > 10 ? run_plan->reps : 10),
        .max_rounds = 100000,
        /* no strides: a pair's two sides must share their rounds (a slow
         * path is slow on both) */
        .slow_factor = 0,
        .seed =
            (run_plan->seed + 1) * 0x9E3779B97F4A7C15ull ^ (uint64_t)pt->c->B,
    };
    return opcost_rounds_run(pt->members, pt->nmembers, pairs, np, &rule,
                             &pt->rounds, err, len);
}

/* A side's members of member i over its processes (k of them), or 0 when
 * one was not timed; the first failed one in *failed. */
static int side_members(ab_point *pt, int s, int i, const opcost_member **m,
                        const opcost_member **failed)
{
    int k = 0;
    *failed = NULL;
    for (int wk = s; wk < pt->nw; wk += 2) {
        const int at = pt->member[wk][i];
        if (at < 0)
            return 0;
        m[k++] = &pt->members[at];
        if (pt->members[at].failed && !*failed)
            *failed = &pt->members[at];
    }
    return k;
}

/* What the sides' processes differ by at this point beyond the rounds
 * and beyond what the two sides' processes of one index share
 * (opcost_members_cross_contrasts: k - 1 of them), kept for
 * opcost_ab_verdicts (the spread they show joins the intervals). -1: out
 * of memory. */
static int keep_contrasts(ab_point *pt, int i, const opcost_member *const *base,
                          const opcost_member *const *new_side, int k)
{
    opcost_ab_ctx *ab = pt->ab;
    double d[OPCOST_AB_MAX_PROCESSES], se[OPCOST_AB_MAX_PROCESSES];
    const int n = k >= 2 ? opcost_members_cross_contrasts(
                               base, new_side, k, pt->pc->run_plan->seed, d, se)
                         : 0;
    for (int j = 0; j < n; ++j) {
        if (ab->ncontrasts == ab->capcontrasts) {
            const size_t cap = ab->capcontrasts ? 2 * ab->capcontrasts : 256;
            opcost_ab_contrast *c =
                realloc(ab->contrasts, cap * sizeof *ab->contrasts);
            if (!c)
                return -1;
            ab->contrasts = c;
            ab->capcontrasts = cap;
        }
        ab->contrasts[ab->ncontrasts++] =
            (opcost_ab_contrast){pt->row[AB_NEW][i], d[j], se[j]};
    }
    return 0;
}

static int summarize(ab_point *pt)
{
    const opcost_plan *run_plan = pt->pc->run_plan;
    const opcost_member *m[2][OPCOST_AB_MAX_PROCESSES];
    int k[2];
    if (pt->probe.member >= 0) {
        const double moved = (double)opcost_probe_bytes(&pt->w);
        if (opcost_bw_split_probe(
                &pt->members[pt->probe.member], moved,
                point_probe_reference(pt->pc, &pt->probed, moved), &pt->split))
            return -1;
    }
    for (int i = 0; i < pt->n; ++i) {
        for (int s = 0; s < 2; ++s) {
            opcost_result *row = row_of(pt, s, i);
            const opcost_member *failed;
            k[s] = side_members(pt, s, i, m[s], &failed);
            if (k[s] && failed) {
                point_row_status(row, OPCOST_STATUS_ERROR, failed->error);
            } else if (k[s]) {
                opcost_member all;
                if (opcost_member_merge(m[s], k[s], &all))
                    return -1;
                const int oom = point_row_samples(run_plan, row, &all, pt->out);
                opcost_member_free(&all);
                if (oom)
                    return -1;
            }
            if (k[s] && row->status == OPCOST_STATUS_OK) {
                snprintf(row->stopped_by, sizeof row->stopped_by, "%s",
                         opcost_rounds_stop_name(pt->rounds.stop));
                if (pt->probe.member >= 0)
                    point_row_frac_of(run_plan, row, &pt->split, m[s], k[s],
                                      opcost_probe_bytes(&pt->w));
            }
            point_set_ceiling(row, pt->pc->ceiling, 0,
                              pt->ids[i].path->in_place);
        }
        opcost_result *row = row_of(pt, AB_NEW, i);
        if (k[AB_BASE] && k[AB_NEW] && row->status == OPCOST_STATUS_OK &&
            row_of(pt, AB_BASE, i)->status == OPCOST_STATUS_OK) {
            opcost_paired e;
            point_row_ratio_of(run_plan, row, m[AB_NEW], k[AB_NEW], m[AB_BASE],
                               k[AB_BASE], "base", &e);
            if (k[AB_BASE] == k[AB_NEW] &&
                keep_contrasts(pt, i, m[AB_BASE], m[AB_NEW], k[AB_NEW]))
                return -1;
        }
    }
    if (pt->probe.member >= 0)
        point_probe_measured(&pt->probed, &pt->members[pt->probe.member],
                             &pt->w);
    if (pt->split.state != OPCOST_BW_NONE)
        pt->probed.full_gbps = pt->split.best_rolled_gbps;
    return 0;
}

/* Each worker releases its members; the compile times and notes of each
 * side's first process. */
static void close_sides(ab_point *pt)
{
    static ab_close_reply r;
    for (int wk = 0; wk < pt->nw; ++wk) {
        const int s = wk % 2;
        opcost_ab_side *side = &pt->ab->workers[wk];
        const uint32_t q = AB_CLOSE;
        memset(&r, 0, sizeof r);
        if (opcost_ab_exchange(pt->ab, side, &q, sizeof q, -1, &r, sizeof r,
                               AB_DEADLINE_REPLY_S, "a point's closing"))
            continue;
        for (int i = 0; wk < 2 && i < pt->n && i < r.nmembers; ++i) {
            opcost_result *row = row_of(pt, s, i);
            if (r.compile_ms[i] > 0 || r.compile_ms[i] == 0)
                row->compile_ms = r.compile_ms[i];
            if (r.note[i][0] && row->status == OPCOST_STATUS_OK)
                point_row_note(row, r.note[i]);
        }
    }
}

static void side_identity(ab_point *pt)
{
    for (int s = 0; s < 2; ++s)
        for (int i = 0; i < pt->n; ++i) {
            opcost_result *row = row_of(pt, s, i);
            const opcost_ab_side *side = &pt->ab->workers[s];
            snprintf(row->side, sizeof row->side, "%s", side->name);
            snprintf(row->git_sha, sizeof row->git_sha, "%s", side->git_sha);
            snprintf(row->torch_version, sizeof row->torch_version, "%s",
                     side->torch_version);
        }
}

static int all_alive(const opcost_ab_ctx *ab)
{
    for (int wk = 0; wk < 2 * ab->processes; ++wk)
        if (!ab->workers[wk].alive)
            return 0;
    return 1;
}

static int measure_ab(void *ctx, const point_context *pc, const opcost_case *c,
                      int64_t point_seed, run_out *out, point_probe *probe,
                      opcost_point_cost *cost, char *err, size_t len)
{
    (void)point_seed;
    const int64_t start = opcost_now_ns();
    int64_t rounds_from = 0, rounds_to = 0;
    opcost_ab_ctx *ab = ctx;
    ab_point *pt = calloc(1, sizeof *pt);
    if (!pt) {
        snprintf(err, len, "out of memory (point)");
        return -1;
    }
    pt->ab = ab;
    pt->pc = pc;
    pt->c = c;
    pt->out = out;
    pt->fd = -1;
    pt->probe.member = -1;
    pt->n = point_row_ids(pc->run_plan, c, pt->ids);
    pt->nw = 2 * ab->processes;
    int rc = 0;
    char why[1024] = "";
    if (pt->n > OPCOST_AB_MAX_MEMBERS) {
        snprintf(why, sizeof why,
                 "%d paths x variants: opcost ab takes at most %d a side",
                 pt->n, OPCOST_AB_MAX_MEMBERS);
        pt->n = OPCOST_AB_MAX_MEMBERS;
    }
    const int made = why[0] ? -1 : make_block(pt, why, sizeof why);
    for (int s = 0; s < 2 && rc == 0; ++s)
        for (int i = 0; i < pt->n && rc == 0; ++i) {
            opcost_result *row = point_row(out, pc, c, made ? NULL : &pt->w,
                                           pt->ids[i].path, pt->ids[i].variant);
            if (!row) {
                snprintf(err, len, "out of memory (results)");
                rc = -1;
            } else {
                pt->row[s][i] = out->nrows - 1;
                if (made)
                    point_row_status(row, OPCOST_STATUS_ERROR, why);
            }
        }
    if (rc == 0) {
        side_identity(pt);
        if (!all_alive(ab)) {
            for (int s = 0; s < 2; ++s)
                for (int i = 0; i < pt->n; ++i)
                    point_row_status(row_of(pt, s, i), OPCOST_STATUS_ERROR,
                                     ab->why);
        } else if (made == 0) {
            if (open_sides(pt, why, sizeof why)) {
                ab->failed = 1;
                snprintf(ab->why, sizeof ab->why, "%s", why);
                for (int s = 0; s < 2; ++s)
                    for (int i = 0; i < pt->n; ++i)
                        point_row_status(row_of(pt, s, i), OPCOST_STATUS_ERROR,
                                         why);
            } else {
                pt->probe.run.path =
                    point_probe_choose(pc, &pt->w, &pt->probed);
                pt->probe.run.variant = &opcost_variant_auto;
                pt->probe.run.w = &pt->w;
                char dispatch[128], pwhy[512];
                if (point_start(pc->run_plan, 0, &pt->probe.run,
                                &pt->probe.timer, dispatch, sizeof dispatch,
                                pwhy, sizeof pwhy) == OPCOST_STATUS_OK)
                    pt->probe.member = 0;
                rounds_from = opcost_now_ns();
                rc = time_point(pt, err, len); /* err says why */
                rounds_to = opcost_now_ns();
                if (rc == 0 && (rc = summarize(pt)) != 0)
                    snprintf(err, len, "out of memory (samples)");
                close_sides(pt);
                for (int wk = 0; wk < pt->nw; ++wk)
                    if (!ab->workers[wk].alive) {
                        ab->failed = 1;
                        snprintf(ab->why, sizeof ab->why, "%s",
                                 ab->workers[wk].why[0] ? ab->workers[wk].why
                                                        : "a worker went away");
                    }
            }
        }
    }
    if (probe) /* no in-place probe: the in-place rows pair with this one */
        probe[0] = pt->probed;
    if (pt->probe.run.priv)
        pt->probe.run.path->release(&pt->probe.run);
    opcost_timing_end(&pt->probe.timer);
    opcost_bw_split_free(&pt->split);
    for (int i = 0; i < pt->nmembers; ++i)
        opcost_member_free(&pt->members[i]);
    if (pt->made)
        opcost_workload_free(&pt->w);
    if (pt->mem)
        munmap(pt->mem, pt->bytes);
    if (pt->fd >= 0)
        close(pt->fd);
    free(pt);
    /* what the point cost: the sides' setup (both verify, calibrate and
     * warm up every member), the rounds, their summary and closing */
    if (cost && rounds_from) {
        cost->setup_s = (double)(rounds_from - start) / 1e9;
        cost->rounds_s = (double)(rounds_to - rounds_from) / 1e9;
        cost->after_s = opcost_seconds_since(rounds_to);
    }
    return rc;
}

/* After the last point (ab_verdicts.h). */
static void holm_verdicts(void *ctx, run_out *out)
{
    const opcost_ab_ctx *ab = ctx;
    const opcost_ab_evidence evidence = {
        ab->processes, ab->threshold, ab->alpha, ab->contrasts, ab->ncontrasts};
    opcost_ab_verdicts(&evidence, out);
}

opcost_point_measurer opcost_ab_measurer(opcost_ab_ctx *ctx)
{
    return (opcost_point_measurer){ctx, measure_ab, holm_verdicts, "-ab", 2};
}
