/* The event record's names and the growable log (events.h). */
#include "events.h"

#include <stdlib.h>
#include <string.h>

const char *opcost_event_kind_name(opcost_event_kind k)
{
    static const char *const names[] = {
        "host_api",   "launch",     "kernel_ours", "kernel_other",
        "conversion", "allocation", "sync"};
    return (unsigned)k < OPCOST_EVENT_KIND_COUNT ? names[k] : "?";
}

void opcost_event_log_add(opcost_event_log *log, const opcost_event *e)
{
    if (log->n == log->cap) {
        const size_t cap = log->cap ? 2 * log->cap : 256;
        opcost_event *p = realloc(log->ev, cap * sizeof *p);
        if (!p) {
            ++log->dropped;
            return;
        }
        log->ev = p;
        log->cap = cap;
    }
    log->ev[log->n++] = *e;
}

void opcost_event_log_clear(opcost_event_log *log)
{
    log->n = 0;
    log->dropped = 0;
}

void opcost_event_log_free(opcost_event_log *log)
{
    free(log->ev);
    memset(log, 0, sizeof *log);
}
