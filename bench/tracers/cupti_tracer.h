/* The GPU event source of the attribution pass: CUPTI's Activity API,
 * loaded at run time (dlopen), so a CPU-only build and a machine without
 * a driver still run; every failure is one message,
 *   cupti unavailable: <stage>: <CUPTI's message>
 * for the caller to report once before it falls back (never an abort).
 *
 * One tracer per process, from open to close: CUPTI's buffer callbacks
 * are process-wide. CUPTI and torch.profiler (Kineto, which uses the same
 * CUPTI) must never be active at once: open refuses while the caller's
 * predicate says Kineto is active, and the caller must not start
 * torch.profiler before close.
 *
 * Records become opcost_events (bench/tracers/events.h) on the clock of
 * opcost_now_ns:
 *   device kernels: name contains "rowops" -> KERNEL_OURS, else "copy"
 *     (any case; aten's direct_copy_kernel) -> CONVERSION, else
 *     KERNEL_OTHER; memcpy and memset -> CONVERSION (on the device);
 *   host runtime/driver API calls: launches (cudaLaunchKernel*,
 *     cuLaunchKernel*, graph launches, async memcpy/memset) -> LAUNCH;
 *     waits (*Synchronize, synchronous memcpy) -> SYNC; cudaMalloc*,
 *     cudaFree*, cuMemAlloc*, cuMemFree* and host allocations ->
 *     ALLOCATION; anything else -> HOST_API; SYNCHRONIZATION records ->
 *     SYNC on the host (a stream waiting on an event: HOST_API);
 *   call: the id given to opcost_cupti_call_begin around the API call
 *     that issued the record (EXTERNAL_CORRELATION), -1 outside one;
 *   a record without timestamps counts as dropped. */
#ifndef OPCOST_CUPTI_TRACER_H
#define OPCOST_CUPTI_TRACER_H

#include "events.h"

#include <stddef.h>
#include <stdint.h>

typedef struct opcost_cupti opcost_cupti;

typedef struct opcost_cupti_options {
    /* nonzero while torch.profiler (Kineto) is active in this process;
     * NULL: never */
    int (*profiler_active)(void *ctx);
    void *ctx;
    /* the library to load; NULL: the soname libcupti.so.13 (the copy
     * torch loaded, if any: one CUPTI per process), then the toolkit's
     * library this build found */
    const char *library;
} opcost_cupti_options;

/* Loads CUPTI, registers the buffer callbacks and a timestamp callback on
 * opcost_now_ns (else measures CUPTI's clock against it), enables RUNTIME,
 * DRIVER, CONCURRENT_KERNEL, MEMCPY, MEMSET, SYNCHRONIZATION and
 * EXTERNAL_CORRELATION. opt may be NULL. 0, or -1 with err set and
 * everything enabled so far disabled again. */
int opcost_cupti_open(opcost_cupti **t, const opcost_cupti_options *opt,
                      char *err, size_t len);

/* Bracket one traced call (on the thread that makes it): the records of
 * the API calls in between, and of the device work they issue, get call.
 * 0, or -1 (CUPTI refused: the call's records get -1). */
int opcost_cupti_call_begin(opcost_cupti *t, uint64_t call);
int opcost_cupti_call_end(opcost_cupti *t);

/* After the caller synchronized the device: flushes CUPTI and appends
 * every record since the last collect to log; log->dropped grows by the
 * records CUPTI dropped (and one per buffer it could not get), which the
 * caller must check: the calls of this collect then have unknown parts.
 * 0, or -1 with err set (what was read stays in log). */
int opcost_cupti_collect(opcost_cupti *t, opcost_event_log *log, char *err,
                         size_t len);

/* "libcupti <version> (<path>)", for the run's header. */
void opcost_cupti_describe(const opcost_cupti *t, char *buf, size_t len);

/* Disables every kind, flushes and frees the buffers. NULL: no-op. */
void opcost_cupti_close(opcost_cupti *t);

/* ---- the buffer walk, separately callable (and tested) */

/* What walks of one collect share: CUPTI's correlation id -> call, from
 * the EXTERNAL_CORRELATION records, which may come in another buffer than
 * the records they name. */
typedef struct opcost_cupti_calls {
    struct opcost_cupti_call_id {
        uint32_t correlation;
        int64_t call;
    } * ids;
    size_t n, cap;
} opcost_cupti_calls;

/* Appends the records of one completed buffer (valid bytes of it) to log,
 * with CUPTI's walk (cuptiActivityGetNextRecord of the library open, else
 * of the default one, loaded on first use); offset_ns is added to every
 * CUPTI timestamp (0 when CUPTI runs on opcost_now_ns). Events get call
 * -1 until opcost_cupti_resolve. 0, or -1 with err set. */
int opcost_cupti_walk(uint8_t *buf, size_t valid, int64_t offset_ns,
                      opcost_event_log *log, opcost_cupti_calls *calls,
                      char *err, size_t len);

/* Sets the call of log->ev[first..] from calls (unknown: -1); sorts
 * calls. */
void opcost_cupti_resolve(opcost_event_log *log, size_t first,
                          opcost_cupti_calls *calls);

void opcost_cupti_calls_free(opcost_cupti_calls *calls);

/* The event kind of a runtime/driver API function name (as CUPTI names
 * it, e.g. cudaLaunchKernel_v7000), and of a device kernel's name. */
opcost_event_kind opcost_cupti_api_kind(const char *name);
opcost_event_kind opcost_cupti_kernel_kind(const char *name);

#endif
