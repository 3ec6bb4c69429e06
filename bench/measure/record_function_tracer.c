#include "record_function_tracer.h"
#include "rowops_bridge.h"
#include "scope_kind.h"
#include "stats.h"
#include "timer.h"

#include <stdio.h>
#include <string.h>

static opcost_event_log *recording; /* NULL outside the attribution pass */

/* The tracer's cost per RecordFunction scope: in all, and the part of it
 * inside the scope's recorded span (from the start's clock read to the
 * end's), measured at most once a second (the machine's state drifts over
 * a run, slowly). */
static int64_t scope_cost_ns, scope_inside_ns;
static int64_t scope_cost_at;

static void add(opcost_event_kind kind, const char *name, int64_t start,
                int64_t end, int64_t cost_ns)
{
    opcost_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.start_ns = start;
    e.end_ns = end;
    e.call = -1;
    e.cost_ns = cost_ns;
    snprintf(e.name, sizeof e.name, "%s", name ? name : "");
    opcost_event_log_add(recording, &e);
}

static void on_range(void *ctx, const char *name, int64_t start_ns,
                     int64_t end_ns, int flags)
{
    (void)ctx;
    const int kind_flags =
        (flags & ROWOPS_BRIDGE_SCOPE_OP ? OPCOST_SCOPE_OP : 0) |
        (flags & ROWOPS_BRIDGE_SCOPE_COMPOSITE ? OPCOST_SCOPE_COMPOSITE : 0);
    /* the span less the tracer's own time inside it; all of the tracer's
     * time then lies outside records, where the cost is taken back out */
    const int64_t end = end_ns - scope_inside_ns;
    if (recording)
        add(opcost_scope_kind(name, kind_flags), name, start_ns,
            end > start_ns ? end : start_ns, scope_cost_ns);
}

/* The tracer's cost per scope, everything included (the dispatcher's
 * profiled path, the bridge's callbacks, this file's classification and
 * record): a small op timed with and without it, best of 5 rounds each. */
static int measure_scope_cost(char *err, size_t len)
{
    enum { CALLS = 1000, ROUNDS = 5 };
    opcost_event_log scratch;
    memset(&scratch, 0, sizeof scratch);
    int64_t plain = -1, traced = -1;
    for (int r = 0; r < ROUNDS; ++r) {
        const int64_t ns = rowops_bridge_trace_probe(CALLS);
        plain = plain < 0 || (ns >= 0 && ns < plain) ? ns : plain;
    }
    recording = &scratch;
    if (rowops_bridge_trace_start(on_range, NULL, err, len)) {
        recording = NULL;
        return -1;
    }
    const int64_t inside_was = scope_inside_ns;
    scope_inside_ns = 0;
    for (int r = 0; r < ROUNDS; ++r) {
        opcost_event_log_clear(&scratch);
        const int64_t ns = rowops_bridge_trace_probe(CALLS);
        traced = traced < 0 || (ns >= 0 && ns < traced) ? ns : traced;
    }
    /* the inside part: empty scopes' recorded length, the smallest of a
     * round's medians */
    int64_t inside = -1;
    for (int r = 0; r < ROUNDS; ++r) {
        opcost_event_log_clear(&scratch);
        rowops_bridge_trace_probe_scope(CALLS);
        double len_ns[CALLS];
        size_t n = 0;
        for (size_t k = 0; k < scratch.n && n < CALLS; ++k)
            len_ns[n++] =
                (double)(scratch.ev[k].end_ns - scratch.ev[k].start_ns);
        const int64_t m = n ? (int64_t)opcost_median_inplace(len_ns, n) : -1;
        inside = inside < 0 || (m >= 0 && m < inside) ? m : inside;
    }
    rowops_bridge_trace_stop();
    recording = NULL;
    opcost_event_log_free(&scratch);
    if (plain < 0 || traced < 0 || inside < 0) {
        scope_inside_ns = inside_was;
        snprintf(err, len, "record_function tracer: the cost probe failed");
        return -1;
    }
    scope_cost_ns = traced > plain ? (traced - plain) / CALLS : 0;
    scope_inside_ns = inside < scope_cost_ns ? inside : scope_cost_ns;
    return 0;
}

int opcost_rf_start(opcost_event_log *log, char *err, size_t len)
{
    if (recording) {
        snprintf(err, len, "record_function tracer: already recording");
        return -1;
    }
    const int64_t now = opcost_now_ns();
    if (!scope_cost_at || now - scope_cost_at > 1000000000) {
        if (measure_scope_cost(err, len))
            return -1;
        scope_cost_at = now;
    }
    recording = log;
    if (rowops_bridge_trace_start(on_range, NULL, err, len)) {
        recording = NULL;
        return -1;
    }
    return 0;
}

void opcost_rf_stop(void)
{
    rowops_bridge_trace_stop();
    recording = NULL;
}

int64_t opcost_own_scope_begin(void)
{
    return recording ? opcost_now_ns() : 0;
}

void opcost_own_scope_end(opcost_event_kind kind, const char *name,
                          int64_t start_ns)
{
    if (recording && start_ns)
        add(kind, name, start_ns, opcost_now_ns(), 0);
}
