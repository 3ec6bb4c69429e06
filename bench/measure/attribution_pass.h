/* The attribution pass of one prepared path on one point: after its timing
 * run, a few more calls with a tracer attached (RecordFunction on the CPU,
 * CUPTI on the GPU), each in its own window; the parts of those calls give
 * the shares that bench/measure/attribution.c applies to the untraced
 * median. */
#ifndef OPCOST_ATTRIBUTION_PASS_H
#define OPCOST_ATTRIBUTION_PASS_H

#include "attribution.h"
#include "path.h"

#include <stddef.h>

/* An event source for the pass. start begins recording into log; call_end
 * completes one call's work before its window closes (GPU: synchronizes
 * the stream) and may tag events with the call; stop ends recording and
 * moves what is left into log. 0, or -1 with err. */
typedef struct opcost_trace_source {
    opcost_attribution_source kind;
    void *self;
    int (*start)(void *self, opcost_event_log *log, char *err, size_t len);
    void (*call_begin)(void *self, int64_t call);
    int (*call_end)(void *self, int64_t call, char *err, size_t len);
    int (*stop)(void *self, opcost_event_log *log, char *err, size_t len);
} opcost_trace_source;

/* The CPU's source: RecordFunction and the bench's own scopes. */
extern const opcost_trace_source opcost_trace_record_function;

/* The GPU's source: CUPTI's activity records of an open tracer (self is
 * the opcost_cupti); each call ends with the stream synchronized inside
 * its bracket. */
struct opcost_cupti;
opcost_trace_source opcost_trace_cupti(struct opcost_cupti *tracer);

typedef struct opcost_attributed {
    opcost_parts parts; /* the shares applied to the untraced median */
    double traced_median_us;
    size_t calls, attributed;
    size_t dropped; /* records the source lost */
} opcost_attributed;

/* How many traced calls: about 5 ms of them, 1 to 256. */
int opcost_attribution_calls(double call_us);

/* Runs ncalls calls of r on the sets after *next_set (rotation continues)
 * under src and attributes them against median_us. 0 measured; -1 with err
 * when the source or a call failed (the caller falls back). */
int opcost_attribution_pass(opcost_path_run *r, const opcost_trace_source *src,
                            int ncalls, int *next_set, double median_us,
                            opcost_attributed *out, char *err, size_t len);

#endif
