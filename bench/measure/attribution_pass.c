#include "attribution_pass.h"
#include "cupti_tracer.h"
#include "record_function_tracer.h"
#include "rowops_bridge.h"
#include "stats.h"
#include "timer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rf_start(void *self, opcost_event_log *log, char *err, size_t len)
{
    (void)self;
    return opcost_rf_start(log, err, len);
}

static void rf_call_begin(void *self, int64_t call)
{
    (void)self, (void)call;
}

static int rf_call_end(void *self, int64_t call, char *err, size_t len)
{
    (void)self, (void)call, (void)err, (void)len;
    return 0;
}

static int rf_stop(void *self, opcost_event_log *log, char *err, size_t len)
{
    (void)self, (void)log, (void)err, (void)len;
    opcost_rf_stop();
    return 0;
}

const opcost_trace_source opcost_trace_record_function = {
    OPCOST_ATTRIBUTION_RECORD_FUNCTION,
    NULL,
    rf_start,
    rf_call_begin,
    rf_call_end,
    rf_stop};

/* $OPCOST_TRACE_DUMP names a file that every pass appends its windows and
 * records to (one line each, times in us from the window's start): what
 * an attribution rests on, for a user who doubts it. */
static void dump_events(const opcost_path_run *r, const opcost_event_log *log,
                        const opcost_call_window *win, int ncalls)
{
    const char *path = getenv("OPCOST_TRACE_DUMP");
    FILE *f = path && *path ? fopen(path, "a") : NULL;
    if (!f)
        return;
    const opcost_case *c = &r->w->c;
    for (int i = 0; i < ncalls; ++i) {
        const int64_t t0 = win[i].start_ns;
        fprintf(f, "call %d %s %s B=%lld N=%lld %s %s: window %.3f us\n", i,
                r->path->name, rowops_op_name(c->op), (long long)c->B,
                (long long)c->N, rowops_dtype_name(c->dtype),
                opcost_layout_name(c->layout),
                (double)(win[i].end_ns - t0) / 1e3);
        for (size_t k = 0; k < log->n; ++k) {
            const opcost_event *e = &log->ev[k];
            if (e->call >= 0 ? e->call != i
                             : e->end_ns <= t0 || e->start_ns >= win[i].end_ns)
                continue;
            fprintf(f, "  %10.3f %10.3f %-12s %s%s (tracer %.3f us)\n",
                    (double)(e->start_ns - t0) / 1e3,
                    (double)(e->end_ns - t0) / 1e3,
                    opcost_event_kind_name(e->kind),
                    e->on_device ? "[gpu] " : "", e->name,
                    (double)e->cost_ns / 1e3);
        }
    }
    fclose(f);
}

static int cupti_start(void *self, opcost_event_log *log, char *err, size_t len)
{
    /* the tracer is open for the run; what it holds from before is not
     * this pass's */
    opcost_event_log stale;
    memset(&stale, 0, sizeof stale);
    const int rc = opcost_cupti_collect(self, &stale, err, len);
    opcost_event_log_free(&stale);
    (void)log;
    return rc;
}

static void cupti_call_begin(void *self, int64_t call)
{
    opcost_cupti_call_begin(self, (uint64_t)call);
}

static int cupti_call_end(void *self, int64_t call, char *err, size_t len)
{
    (void)call;
    const int rc = rowops_bridge_cuda_sync(err, len);
    opcost_cupti_call_end(self);
    return rc;
}

static int cupti_stop(void *self, opcost_event_log *log, char *err, size_t len)
{
    return opcost_cupti_collect(self, log, err, len);
}

opcost_trace_source opcost_trace_cupti(struct opcost_cupti *tracer)
{
    const opcost_trace_source s = {
        OPCOST_ATTRIBUTION_CUPTI, tracer,         cupti_start,
        cupti_call_begin,         cupti_call_end, cupti_stop};
    return s;
}

int opcost_attribution_calls(double call_us)
{
    const double n = call_us > 0 ? ceil(5000.0 / call_us) : 256;
    return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}

int opcost_attribution_pass(opcost_path_run *r, const opcost_trace_source *src,
                            int ncalls, int *next_set, double median_us,
                            opcost_attributed *out, char *err, size_t len)
{
    memset(out, 0, sizeof *out);
    opcost_call_window *win = calloc((size_t)ncalls, sizeof *win);
    opcost_parts *parts = calloc((size_t)ncalls, sizeof *parts);
    double *lengths = calloc((size_t)ncalls, sizeof *lengths);
    opcost_event_log log;
    memset(&log, 0, sizeof log);
    int rc = -1;
    if (!win || !parts || !lengths) {
        snprintf(err, len, "attribution: out of memory");
        goto done;
    }
    if (src->start(src->self, &log, err, len))
        goto done;
    int made = 0, failed = 0;
    for (; made < ncalls && !failed; ++made) {
        const int set = *next_set;
        *next_set = (*next_set + 1) % r->w->nsets;
        src->call_begin(src->self, made);
        win[made].start_ns = opcost_now_ns();
        failed = r->path->run(r, set, err, len) < 0 ||
                 src->call_end(src->self, made, err, len) < 0;
        win[made].end_ns = opcost_now_ns();
    }
    char stop_err[256];
    if (src->stop(src->self, &log, failed ? stop_err : err,
                  failed ? sizeof stop_err : len) ||
        failed)
        goto done;
    out->dropped = log.dropped;
    /* a source cannot say which call lost records: then none is trusted */
    for (int i = 0; i < ncalls; ++i)
        win[i].dropped = log.dropped > 0;
    const long got =
        opcost_attribute_events(log.ev, log.n, win, (size_t)ncalls, parts);
    if (got < 0) {
        snprintf(err, len, "attribution: out of memory");
        goto done;
    }
    if (got == 0) {
        snprintf(err, len,
                 "attribution: the tracer dropped %zu records; no call's "
                 "parts are known",
                 log.dropped);
        goto done;
    }
    dump_events(r, &log, win, ncalls);
    for (int i = 0; i < ncalls; ++i)
        lengths[i] = (double)(win[i].end_ns - win[i].start_ns) / 1e3;
    out->calls = (size_t)ncalls;
    out->attributed = (size_t)got;
    out->traced_median_us = opcost_median_inplace(lengths, (size_t)ncalls);
    out->parts = opcost_parts_apply(parts, (size_t)ncalls, median_us);
    rc = isnan(out->parts.kernel_us) ? -1 : 0;
    if (rc)
        snprintf(err, len, "attribution: the traced calls took no time");
done:
    opcost_event_log_free(&log);
    free(win);
    free(parts);
    free(lengths);
    return rc;
}
