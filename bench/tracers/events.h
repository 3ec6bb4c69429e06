/* Timed intervals of traced calls: what a tracer (RecordFunction on the
 * CPU, CUPTI on the GPU, the bench's own scopes) records during the
 * attribution pass, and what bench/measure/attribution.c turns into per-call
 * parts. Plain C, no tracer types: every source converts to this. */
#ifndef OPCOST_EVENTS_H
#define OPCOST_EVENTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum opcost_event_kind {
    /* a host range that is none of the below: a framework op that only
     * calls others (rowops::fused_add_rms_norm, aten::rms_norm), a runtime
     * API call; its own time (outside nested records) is dispatch */
    OPCOST_EVENT_HOST_API = 0,
    /* a kernel or graph launch API call on the host (GPU) */
    OPCOST_EVENT_LAUNCH,
    /* a rowops kernel (CPU: on the host timeline; GPU: on the device) */
    OPCOST_EVENT_KERNEL_OURS,
    /* another compute kernel: an aten kernel, an Inductor kernel */
    OPCOST_EVENT_KERNEL_OTHER,
    /* a layout or dtype conversion: copy, cast, contiguous, memcpy, memset */
    OPCOST_EVENT_CONVERSION,
    OPCOST_EVENT_ALLOCATION,
    /* the host waiting for the device (stream/event/device synchronize) */
    OPCOST_EVENT_SYNC,
    OPCOST_EVENT_KIND_COUNT
} opcost_event_kind;

const char *opcost_event_kind_name(opcost_event_kind k);

#define OPCOST_EVENT_NAME_MAX 64

typedef struct opcost_event {
    opcost_event_kind kind;
    int on_device; /* 1: the GPU's timeline (kernels, memcpy, memset) */
    int stream;    /* device stream (on_device only) */
    /* on the timing loop's clock (opcost_now_ns), end >= start */
    int64_t start_ns, end_ns;
    /* links a device record to the host API call that issued it (CUPTI's
     * correlation id); 0: none */
    uint64_t correlation;
    /* the traced call it belongs to (0-based), or -1: decided by time */
    int64_t call;
    /* the tracer's own time for this record, which it spends outside the
     * record, in what encloses it: removed from the call's dispatch part */
    int64_t cost_ns;
    char name[OPCOST_EVENT_NAME_MAX];
} opcost_event;

/* One traced call's host window: from just before the call to just after
 * it returned (GPU: after the stream was synchronized). dropped: the
 * tracer lost records while this call ran, so its parts are unknown. */
typedef struct opcost_call_window {
    int64_t start_ns, end_ns;
    int dropped;
} opcost_call_window;

/* A growable array of events. */
typedef struct opcost_event_log {
    opcost_event *ev;
    size_t n, cap;
    size_t dropped; /* records the source could not keep */
} opcost_event_log;

/* Appends a copy of e; on allocation failure counts it as dropped. */
void opcost_event_log_add(opcost_event_log *log, const opcost_event *e);
void opcost_event_log_clear(opcost_event_log *log); /* keeps the memory */
void opcost_event_log_free(opcost_event_log *log);

#ifdef __cplusplus
}
#endif

#endif
