/* A stand-in for libcupti in test_cupti_tracer: the entry points that
 * need a driver (enable, flush, external correlation, buffer callbacks,
 * timestamp callback) are simulated; the rest (record walk, names,
 * results, timestamps, version) forward to the toolkit's real library.
 * fake_cupti_call plays one CUDA API call (and the kernel it launches)
 * into records as CUPTI would, so the tracer's whole life runs without a
 * GPU. Controls are the fake_cupti_* functions. */
#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef OPCOST_CUPTI_TOOLKIT_LIBRARY
#error "the real library to forward to"
#endif

static void *real;
static CUpti_BuffersCallbackRequestFunc requested;
static CUpti_BuffersCallbackCompleteFunc completed;
static CUpti_TimestampCallbackFunc clock_cb;
static unsigned long long enabled; /* bit k: kind k */
static int fail_kind = -1, fail_timestamp_cb;
static size_t dropped, lost;
static uint64_t external[64];
static int depth;
static uint32_t next_correlation = 100;
static uint8_t *cur;
static size_t cur_size, cur_used;

static void *forward(const char *sym)
{
    if (!real)
        real = dlopen(OPCOST_CUPTI_TOOLKIT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    void *p = real ? dlsym(real, sym) : NULL;
    if (!p) {
        fprintf(stderr, "fake_cupti: cannot forward %s\n", sym);
        abort();
    }
    return p;
}

#define FORWARD(ret, name, params, args)                                       \
    ret name params                                                            \
    {                                                                          \
        ret(*f) params;                                                        \
        void *p = forward(#name);                                              \
        memcpy(&f, &p, sizeof f);                                              \
        return f args;                                                         \
    }

FORWARD(CUptiResult, cuptiGetResultString,
        (CUptiResult result, const char **str), (result, str))
FORWARD(CUptiResult, cuptiGetVersion, (uint32_t * version), (version))
FORWARD(CUptiResult, cuptiGetCallbackName,
        (CUpti_CallbackDomain domain, uint32_t cbid, const char **name),
        (domain, cbid, name))
FORWARD(CUptiResult, cuptiActivityGetNextRecord,
        (uint8_t * buffer, size_t valid, CUpti_Activity **record),
        (buffer, valid, record))

static CUptiResult real_timestamp(uint64_t *ts)
{
    CUptiResult (*f)(uint64_t *);
    void *p = forward("cuptiGetTimestamp");
    memcpy(&f, &p, sizeof f);
    return f(ts);
}

CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
    return real_timestamp(ts);
}

/* CUPTI's clock: the registered callback, else its own */
static uint64_t now(void)
{
    uint64_t t = 0;
    if (clock_cb)
        return clock_cb();
    real_timestamp(&t);
    return t;
}

CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                           CUpti_BuffersCallbackCompleteFunc c)
{
    if (!r || !c)
        return CUPTI_ERROR_INVALID_PARAMETER;
    requested = r;
    completed = c;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
    if (fail_timestamp_cb)
        return CUPTI_ERROR_UNKNOWN; /* as without a driver */
    clock_cb = f;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    if ((int)kind == fail_kind)
        return CUPTI_ERROR_NOT_SUPPORTED;
    enabled |= 1ull << kind;
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    enabled &= ~(1ull << kind);
    return CUPTI_SUCCESS;
}

static void deliver(void)
{
    if (cur)
        completed(NULL, 0, cur, cur_size, cur_used);
    cur = NULL;
    cur_size = cur_used = 0;
}

CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    (void)flag;
    if (!completed)
        return CUPTI_ERROR_INVALID_OPERATION;
    deliver();
    return CUPTI_SUCCESS;
}

CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
                                              size_t *n)
{
    (void)ctx;
    (void)stream;
    *n = dropped + lost;
    dropped = lost = 0;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                       uint64_t id)
{
    if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0 || depth == 64)
        return CUPTI_ERROR_INVALID_PARAMETER;
    external[depth++] = id;
    return CUPTI_SUCCESS;
}

CUptiResult
cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                      uint64_t *last)
{
    if (kind != CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (depth == 0)
        return CUPTI_ERROR_QUEUE_EMPTY;
    if (last)
        *last = external[depth - 1];
    --depth;
    return CUPTI_SUCCESS;
}

/* Appends one record (its size a multiple of 8, as CUPTI's are), asking
 * the client for a buffer as CUPTI does; none: the record is dropped. */
static void put(const void *rec, size_t size)
{
    if (cur && cur_used + size > cur_size)
        deliver();
    if (!cur) {
        size_t max_records;
        requested(&cur, &cur_size, &max_records);
        cur_used = 0;
        if (!cur || cur_size < size) {
            cur = NULL;
            ++lost;
            return;
        }
    }
    memcpy(cur + cur_used, rec, size);
    cur_used += size;
}

/* ---- controls */

void fake_cupti_reset(void)
{
    enabled = 0;
    fail_kind = -1;
    fail_timestamp_cb = 0;
    clock_cb = NULL;
    dropped = lost = 0;
    depth = 0;
}

void fake_cupti_fail_enable(int kind)
{
    fail_kind = kind;
}
void fake_cupti_fail_timestamp_callback(int fail)
{
    fail_timestamp_cb = fail;
}
void fake_cupti_drop(size_t n)
{
    dropped += n;
}
unsigned long long fake_cupti_enabled(void)
{
    return enabled;
}
int fake_cupti_depth(void)
{
    return depth;
}
int fake_cupti_registered(void)
{
    return requested != NULL;
}

/* Whether the client hands out a buffer now (and takes it back). */
int fake_cupti_request_probe(void)
{
    uint8_t *b = NULL;
    size_t size = 0, max_records;
    requested(&b, &size, &max_records);
    if (b)
        completed(NULL, 0, b, size, 0);
    return b != NULL;
}

/* One runtime API call (cbid) launching kernel (NULL: none), recorded
 * as the enabled kinds ask: its external correlation, the API record,
 * the kernel record. */
void fake_cupti_call(uint32_t cbid, const char *kernel)
{
    const uint32_t corr = next_correlation++;
    const uint64_t start = now();
    if ((enabled >> CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION & 1) && depth) {
        CUpti_ActivityExternalCorrelation x;
        memset(&x, 0, sizeof x);
        x.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
        x.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
        x.externalId = external[depth - 1];
        x.correlationId = corr;
        put(&x, sizeof x);
    }
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.start = now();
    k.end = now() + 1;
    k.streamId = 7;
    k.correlationId = corr;
    k.name = kernel;
    CUpti_ActivityAPI a;
    memset(&a, 0, sizeof a);
    a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
    a.cbid = cbid;
    a.start = start;
    a.end = now();
    a.correlationId = corr;
    if (enabled >> CUPTI_ACTIVITY_KIND_RUNTIME & 1)
        put(&a, sizeof a);
    if (kernel && (enabled >> CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL & 1))
        put(&k, sizeof k);
}
