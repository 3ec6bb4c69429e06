/* The attribution pass's event source on the CPU: PyTorch's RecordFunction
 * scopes on the calling thread (through the bridge's thread-local
 * callback: aten and rowops ops, the rowops kernel scope, Inductor kernels)
 * plus the bench's own scopes around the kernels its C paths call, into one
 * log on the timing loop's clock. Started only for the attribution pass:
 * the timed calls never run with it. */
#ifndef OPCOST_RECORD_FUNCTION_TRACER_H
#define OPCOST_RECORD_FUNCTION_TRACER_H

#include "events.h"

#include <stddef.h>
#include <stdint.h>

/* Records into log (events with call = -1: windows decide) until stopped.
 * 0, or -1 with err. */
int opcost_rf_start(opcost_event_log *log, char *err, size_t len);
void opcost_rf_stop(void);

/* The bench's own scope around work it does itself (the C kernel of the
 * `kernel` and `kernel-e2e` paths): begin returns 0 without reading the
 * clock unless tracing, and end then records nothing. */
int64_t opcost_own_scope_begin(void);
void opcost_own_scope_end(opcost_event_kind kind, const char *name,
                          int64_t start_ns);

#endif
