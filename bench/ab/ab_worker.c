/* `opcost worker`: one side of opcost ab (ab_worker.h). */
#define _GNU_SOURCE
#include "ab_worker.h"
#include "ab_wire.h"
#include "code_pages.h"
#include "hostinfo.h"
#include "plan.h"
#include "point.h"
#include "rowops_bridge.h"
#include "timing.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

/* A point as this side holds it. */
typedef struct worker_point {
    void *mem;
    size_t bytes;
    opcost_workload w;
    int made;
    int n;
    opcost_path_run run[OPCOST_AB_MAX_MEMBERS];
    opcost_timer_state timer[OPCOST_AB_MAX_MEMBERS];
    int timing[OPCOST_AB_MAX_MEMBERS];
} worker_point;

typedef struct worker {
    int sock;
    const opcost_ab_names *names;
    opcost_plan plan;              /* what the coordinator's hello set */
    worker_point *pt;              /* NULL between points */
    int said_moved, said_segments; /* code_placement's last report */
} worker;

static void hello(worker *wk, const ab_hello *h)
{
    ab_hello_reply r;
    memset(&r, 0, sizeof r);
    r.protocol = OPCOST_AB_PROTOCOL;
    opcost_hostinfo host;
    opcost_hostinfo_get(&host, OPCOST_SOURCE_DIR);
    snprintf(r.git_sha, sizeof r.git_sha, "%s", host.git_sha);
    snprintf(r.host, sizeof r.host, "%s", host.host);
    snprintf(r.cpu, sizeof r.cpu, "%s", host.cpu);
    snprintf(r.torch_version, sizeof r.torch_version, "%s",
             rowops_bridge_torch_version());
    r.ok = h->protocol >= OPCOST_AB_PROTOCOL_MIN &&
           h->protocol <= OPCOST_AB_PROTOCOL;
    if (!r.ok)
        snprintf(r.error, sizeof r.error,
                 "protocol %u, this build speaks %d to %d (build both sides "
                 "from commits of a protocol in common)",
                 h->protocol, OPCOST_AB_PROTOCOL_MIN, OPCOST_AB_PROTOCOL);
    memset(&wk->plan, 0, sizeof wk->plan);
    wk->plan.threads = h->threads;
    wk->plan.quick = h->quick;
    wk->plan.target_sample_us = h->target_sample_us;
    if (r.ok && rowops_bridge_set_threads(h->threads, r.error, sizeof r.error))
        r.ok = 0;
    ab_send(wk->sock, &r, sizeof r, -1);
}

/* This build's code on 2 MiB pages, the libraries the members loaded
 * included, to be placed anew between samples (code_pages.h). Said on
 * stderr when it changes. */
static void code_placement(worker *wk)
{
    opcost_code_pages cp;
    const int rc = opcost_code_to_huge_pages(NULL, &cp);
    if (cp.moved == wk->said_moved && cp.segments == wk->said_segments)
        return;
    wk->said_moved = cp.moved;
    wk->said_segments = cp.segments;
    char exe[256] = "", where[700];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    opcost_code_pages_say(&cp, rc, where, sizeof where);
    fprintf(stderr, "opcost worker %s: code %s\n", exe, where);
}

static void close_point(worker *wk, ab_close_reply *r)
{
    worker_point *pt = wk->pt;
    if (!pt)
        return;
    for (int i = 0; i < pt->n; ++i) {
        opcost_path_run *run = &pt->run[i];
        if (r && run->priv) {
            if (run->path->compile_ms)
                r->compile_ms[i] = run->path->compile_ms(run);
            if (run->path->annotate && pt->timing[i])
                run->path->annotate(run, r->note[i], sizeof r->note[i]);
        }
        if (run->priv)
            run->path->release(run);
        opcost_timing_end(&pt->timer[i]);
    }
    if (pt->made)
        opcost_workload_free(&pt->w);
    if (pt->mem)
        munmap(pt->mem, pt->bytes);
    free(pt);
    wk->pt = NULL;
}

static void open_point(worker *wk, const ab_open *o, int fd)
{
    static ab_open_reply r; /* 40 KiB: not on the stack */
    memset(&r, 0, sizeof r);
    close_point(wk, NULL);
    worker_point *pt = calloc(1, sizeof *pt);
    if (!pt || fd < 0 || o->nmembers < 0 ||
        o->nmembers > OPCOST_AB_MAX_MEMBERS) {
        snprintf(r.error, sizeof r.error, "%s",
                 !pt ? "out of memory" : "a request without its block");
        free(pt);
        if (fd >= 0)
            close(fd);
        ab_send(wk->sock, &r, sizeof r, -1);
        return;
    }
    wk->pt = pt;
    pt->bytes = o->bytes;
    pt->mem = ab_map_block(fd, o->bytes);
    close(fd);
    const opcost_case c = {.distribution = "",
                           .op = (rowops_op)o->op,
                           .B = o->B,
                           .N = o->N,
                           .dtype = (rowops_dtype)o->dtype,
                           .weight_dtype = (rowops_dtype)o->weight_dtype,
                           .layout = (opcost_layout)o->layout,
                           .eps = o->eps};
    if (!pt->mem) {
        snprintf(r.error, sizeof r.error, "cannot map the point's block: %s",
                 strerror(errno));
    } else if (opcost_workload_attach(&pt->w, &c, o->nsets, o->llc_bytes,
                                      o->cold, pt->mem, 0, 0, r.error,
                                      sizeof r.error) == 0) {
        pt->made = 1;
        r.ok = 1;
    }
    for (int i = 0; r.ok && i < o->nmembers; ++i) {
        ab_member_state *m = &r.m[i];
        const opcost_path *p = wk->names->path(o->path[i]);
        const opcost_variant *v = wk->names->variant(o->variant[i]);
        pt->n = i + 1;
        if (!p || !v) {
            m->status = OPCOST_STATUS_SKIPPED;
            snprintf(m->why, sizeof m->why, "this build has no %s %s",
                     p ? "kernel variant" : "path",
                     p ? o->variant[i] : o->path[i]);
            continue;
        }
        pt->run[i].path = p;
        pt->run[i].variant = v;
        pt->run[i].w = &pt->w;
        pt->run[i].first_set = (int)(o->first_set % o->nsets);
        char why[OPCOST_AB_TEXT];
        m->status = point_start(&wk->plan, 0, &pt->run[i], &pt->timer[i],
                                m->dispatch_path, sizeof m->dispatch_path, why,
                                sizeof why);
        snprintf(m->why, sizeof m->why, "%s",
                 m->status == OPCOST_STATUS_OK ? "" : why);
        pt->timing[i] = m->status == OPCOST_STATUS_OK;
        m->batch = pt->timer[i].batch;
        m->call_us = pt->timer[i].call_us;
    }
    r.nmembers = pt->n;
    code_placement(wk);
    ab_send(wk->sock, &r, sizeof r, -1);
}

static void sample(worker *wk, const ab_sample *q)
{
    ab_sample_reply r;
    memset(&r, 0, sizeof r);
    worker_point *pt = wk->pt;
    if (!pt || q->member < 0 || q->member >= pt->n || !pt->timing[q->member] ||
        q->batch < 1 || q->set < 0 || q->set >= pt->w.nsets) {
        snprintf(r.error, sizeof r.error, "no such member ready: %d",
                 q->member);
    } else {
        opcost_timer_state *t = &pt->timer[q->member];
        t->batch = q->batch;
        t->next_set = (int)q->set;
        t->lead_in = q->lead_in == 1 || q->lead_in == 2 ? q->lead_in - 1 : -1;
        r.ok = opcost_timing_sample(t, &r.us, &r.device_us) == 0;
        if (!r.ok)
            snprintf(r.error, sizeof r.error, "%s", t->error);
        /* before the reply: nothing of the other side runs meanwhile */
        opcost_code_replace_due();
    }
    ab_send(wk->sock, &r, sizeof r, -1);
}

/* What the open point's members measured at verification (AB_ERRORS). */
static void errors(worker *wk)
{
    static ab_errors_reply r;
    memset(&r, 0, sizeof r);
    const worker_point *pt = wk->pt;
    r.ok = pt != NULL;
    r.nmembers = pt ? pt->n : 0;
    for (int i = 0; i < r.nmembers; ++i) {
        r.out_err_units[i] = pt->run[i].out_err_units;
        r.residual_err_units[i] = pt->run[i].residual_err_units;
    }
    ab_send(wk->sock, &r, sizeof r, -1);
}

int opcost_ab_serve(int sock, const opcost_ab_names *names)
{
    worker wk;
    memset(&wk, 0, sizeof wk);
    wk.sock = sock;
    wk.names = names;
    static union {
        uint32_t kind;
        ab_hello hello;
        ab_open open;
        ab_sample sample;
    } q;
    for (;;) {
        size_t got;
        int fd;
        if (ab_recv(sock, &q, sizeof q, &got, &fd)) {
            close_point(&wk, NULL);
            return errno ? 2 : 1; /* the coordinator went away */
        }
        /* a request of another size is another protocol's */
        const uint32_t kind = got >= sizeof q.kind ? q.kind : 0;
        const size_t want = kind == AB_HELLO    ? sizeof q.hello
                            : kind == AB_OPEN   ? sizeof q.open
                            : kind == AB_SAMPLE ? sizeof q.sample
                                                : sizeof q.kind;
        switch (got == want ? kind : 0) {
        case AB_HELLO: hello(&wk, &q.hello); break;
        case AB_OPEN: open_point(&wk, &q.open, fd); break;
        case AB_SAMPLE: sample(&wk, &q.sample); break;
        case AB_CLOSE: {
            static ab_close_reply r;
            memset(&r, 0, sizeof r);
            r.ok = 1;
            r.nmembers = wk.pt ? wk.pt->n : 0;
            close_point(&wk, &r);
            ab_send(sock, &r, sizeof r, -1);
            break;
        }
        case AB_ERRORS: errors(&wk); break;
        case AB_QUIT: close_point(&wk, NULL); return 0;
        default:
            if (fd >= 0)
                close(fd);
            close_point(&wk, NULL);
            return 2;
        }
    }
}
