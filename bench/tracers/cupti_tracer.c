/* CUPTI Activity tracer (cupti_tracer.h). CUPTI is reached only through
 * dlsym, so linking needs no CUPTI and a build without its headers gets
 * the stub at the end. */
#define _GNU_SOURCE /* dladdr: the loaded library's path */
#include "cupti_tracer.h"
#include "timer.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names -> kinds (no CUPTI needed) */

static int starts(const char *s, const char *p)
{
    return strncmp(s, p, strlen(p)) == 0;
}

static int ends(const char *s, const char *p)
{
    const size_t n = strlen(s), m = strlen(p);
    return n >= m && strcmp(s + n - m, p) == 0;
}

/* CUPTI's name less its version suffix: cudaLaunchKernel_v7000 ->
 * cudaLaunchKernel, cuMemcpyHtoDAsync_v2 -> cuMemcpyHtoDAsync. */
static void strip_version(char *s)
{
    char *u = strrchr(s, '_');
    if (!u || u[1] != 'v' || !isdigit((unsigned char)u[2]))
        return;
    for (const char *p = u + 2; *p; ++p)
        if (!isdigit((unsigned char)*p))
            return;
    *u = '\0';
}

opcost_event_kind opcost_cupti_api_kind(const char *name)
{
    char s[OPCOST_EVENT_NAME_MAX];
    snprintf(s, sizeof s, "%s", name ? name : "");
    strip_version(s);
    /* per-thread default stream variants behave as the plain call */
    if (ends(s, "_ptsz") || ends(s, "_ptds"))
        s[strlen(s) - 5] = '\0';
    static const char *const alloc[] = {
        "cudaMalloc",  "cudaFree",     "cudaHostAlloc",
        "cuMemAlloc",  "cuMemFree",    "cuMemHostAlloc",
        "cuMemCreate", "cuMemRelease", NULL};
    for (int i = 0; alloc[i]; ++i)
        if (starts(s, alloc[i]))
            return OPCOST_EVENT_ALLOCATION;
    if (strstr(s, "Synchronize"))
        return OPCOST_EVENT_SYNC;
    if (strstr(s, "Memcpy") || strstr(s, "Memset")) {
        if (ends(s, "Async"))
            return OPCOST_EVENT_LAUNCH;
        /* a synchronous copy returns once the device copied: a wait; a
         * memset of device memory returns before it ran: a launch */
        return strstr(s, "Memcpy") ? OPCOST_EVENT_SYNC : OPCOST_EVENT_LAUNCH;
    }
    static const char *const launch[] = {"cudaLaunch",    "__cudaLaunch",
                                         "cuLaunch",      "cudaGraphLaunch",
                                         "cuGraphLaunch", NULL};
    for (int i = 0; launch[i]; ++i)
        if (starts(s, launch[i]))
            return OPCOST_EVENT_LAUNCH;
    return OPCOST_EVENT_HOST_API;
}

static int contains_nocase(const char *s, const char *p)
{
    const size_t m = strlen(p);
    for (; *s; ++s) {
        size_t i = 0;
        while (i < m && s[i] &&
               tolower((unsigned char)s[i]) == tolower((unsigned char)p[i]))
            ++i;
        if (i == m)
            return 1;
    }
    return 0;
}

opcost_event_kind opcost_cupti_kernel_kind(const char *name)
{
    if (!name)
        return OPCOST_EVENT_KERNEL_OTHER;
    /* mangled or demangled, a namespace or a name appears as written */
    if (strstr(name, "rowops"))
        return OPCOST_EVENT_KERNEL_OURS;
    if (contains_nocase(name, "copy"))
        return OPCOST_EVENT_CONVERSION;
    return OPCOST_EVENT_KERNEL_OTHER;
}

/* ---- correlation id -> call */

static int by_correlation(const void *a, const void *b)
{
    const uint32_t x = ((const struct opcost_cupti_call_id *)a)->correlation;
    const uint32_t y = ((const struct opcost_cupti_call_id *)b)->correlation;
    return (x > y) - (x < y);
}

void opcost_cupti_resolve(opcost_event_log *log, size_t first,
                          opcost_cupti_calls *calls)
{
    if (calls->n)
        qsort(calls->ids, calls->n, sizeof *calls->ids, by_correlation);
    for (size_t i = first; i < log->n; ++i) {
        opcost_event *e = &log->ev[i];
        const struct opcost_cupti_call_id key = {(uint32_t)e->correlation, 0};
        const struct opcost_cupti_call_id *hit =
            e->correlation && calls->n
                ? bsearch(&key, calls->ids, calls->n, sizeof *calls->ids,
                          by_correlation)
                : NULL;
        e->call = hit ? hit->call : -1;
    }
}

void opcost_cupti_calls_free(opcost_cupti_calls *calls)
{
    free(calls->ids);
    memset(calls, 0, sizeof *calls);
}

#ifdef OPCOST_HAVE_CUPTI

#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>

#ifndef OPCOST_CUPTI_TOOLKIT_LIBRARY
#define OPCOST_CUPTI_TOOLKIT_LIBRARY ""
#endif
#define CUPTI_SONAME "libcupti.so.13"
/* Generous for an attribution pass (a few hundred calls of tens of
 * records): a full buffer is delivered and another requested. */
#define BUFFER_BYTES (4u << 20)
#define EXTERNAL_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

/* The entry points used, from one loaded library. */
typedef struct cupti_api {
    void *handle;
    char path[512];
    uint32_t version;
    CUptiResult (*GetResultString)(CUptiResult, const char **);
    CUptiResult (*GetVersion)(uint32_t *);
    CUptiResult (*GetTimestamp)(uint64_t *);
    CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t,
                                   const char **);
    CUptiResult (*GetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
    CUptiResult (*RegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
                                     CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*RegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
    CUptiResult (*Enable)(CUpti_ActivityKind);
    CUptiResult (*Disable)(CUpti_ActivityKind);
    CUptiResult (*FlushAll)(uint32_t);
    CUptiResult (*GetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
    CUptiResult (*PushExternalCorrelationId)(CUpti_ExternalCorrelationKind,
                                             uint64_t);
    CUptiResult (*PopExternalCorrelationId)(CUpti_ExternalCorrelationKind,
                                            uint64_t *);
} cupti_api;

static const char *result_text(const cupti_api *a, CUptiResult r)
{
    const char *s = NULL;
    if (!a->GetResultString || a->GetResultString(r, &s) != CUPTI_SUCCESS || !s)
        return "unknown CUPTI error";
    return s;
}

static int unavailable(char *err, size_t len, const char *stage,
                       const char *message)
{
    snprintf(err, len, "cupti unavailable: %s: %s", stage, message);
    return -1;
}

static int load_sym(cupti_api *a, void *field, size_t size, const char *sym,
                    int required, char *err, size_t len)
{
    void *p = dlsym(a->handle, sym);
    if (!p && required) {
        char stage[128];
        snprintf(stage, sizeof stage, "load %s", sym);
        return unavailable(err, len, stage, "symbol not found");
    }
    /* object pointer -> function pointer, as POSIX dlsym intends */
    memcpy(field, &p, size);
    return 0;
}

/* Loads library (NULL: the soname, then the toolkit's) and its entry
 * points. The handle is never closed: CUPTI keeps threads and state. */
static int api_load(cupti_api *a, const char *library, char *err, size_t len)
{
    memset(a, 0, sizeof *a);
    const char *name = library ? library : CUPTI_SONAME;
    a->handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (!a->handle) {
        char first[512];
        const char *why = dlerror();
        snprintf(first, sizeof first, "%s", why ? why : "cannot load");
        if (library || !*OPCOST_CUPTI_TOOLKIT_LIBRARY) {
            char stage[600];
            snprintf(stage, sizeof stage, "load %s", name);
            return unavailable(err, len, stage, first);
        }
        a->handle = dlopen(OPCOST_CUPTI_TOOLKIT_LIBRARY, RTLD_NOW | RTLD_LOCAL);
        if (!a->handle) {
            snprintf(err, len, "cupti unavailable: load %s: %s; %s", name,
                     first, dlerror() ? dlerror() : "cannot load");
            return -1;
        }
    }
#define SYM(field, sym, required)                                              \
    if (load_sym(a, &a->field, sizeof a->field, sym, required, err, len))      \
        return -1;
    SYM(GetResultString, "cuptiGetResultString", 1)
    SYM(GetVersion, "cuptiGetVersion", 1)
    SYM(GetTimestamp, "cuptiGetTimestamp", 1)
    SYM(GetCallbackName, "cuptiGetCallbackName", 1)
    SYM(GetNextRecord, "cuptiActivityGetNextRecord", 1)
    SYM(RegisterCallbacks, "cuptiActivityRegisterCallbacks", 1)
    SYM(RegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback", 0)
    SYM(Enable, "cuptiActivityEnable", 1)
    SYM(Disable, "cuptiActivityDisable", 1)
    SYM(FlushAll, "cuptiActivityFlushAll", 1)
    SYM(GetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords", 1)
    SYM(PushExternalCorrelationId, "cuptiActivityPushExternalCorrelationId", 1)
    SYM(PopExternalCorrelationId, "cuptiActivityPopExternalCorrelationId", 1)
#undef SYM
    Dl_info info;
    void *probe;
    memcpy(&probe, &a->GetVersion, sizeof probe);
    snprintf(a->path, sizeof a->path, "%s",
             dladdr(probe, &info) && info.dli_fname ? info.dli_fname : name);
    const CUptiResult r = a->GetVersion(&a->version);
    if (r != CUPTI_SUCCESS)
        return unavailable(err, len, "cuptiGetVersion", result_text(a, r));
    return 0;
}

/* The default library, loaded once for the walk and every open. */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static cupti_api default_api;
static int default_state; /* 0 not tried, 1 loaded, -1 failed */
static char default_error[1024];

static const cupti_api *default_cupti(char *err, size_t len)
{
    pthread_mutex_lock(&lock);
    if (default_state == 0)
        default_state =
            api_load(&default_api, NULL, default_error, sizeof default_error)
                ? -1
                : 1;
    pthread_mutex_unlock(&lock);
    if (default_state < 0) {
        snprintf(err, len, "%s", default_error);
        return NULL;
    }
    return &default_api;
}

/* ---- one buffer -> events */

static int64_t at(uint64_t ts, int64_t offset_ns)
{
    return (int64_t)ts + offset_ns;
}

static void add_event(opcost_event_log *log, opcost_event_kind kind,
                      int on_device, uint32_t stream, uint64_t start,
                      uint64_t end, uint32_t correlation, const char *name,
                      int64_t offset_ns)
{
    if (start == 0 && end == 0) {
        ++log->dropped; /* CUPTI could not time it */
        return;
    }
    opcost_event e;
    memset(&e, 0, sizeof e);
    e.kind = kind;
    e.on_device = on_device;
    e.stream = (int)stream;
    e.start_ns = at(start, offset_ns);
    e.end_ns = end >= start ? at(end, offset_ns) : e.start_ns;
    e.correlation = correlation;
    e.call = -1;
    snprintf(e.name, sizeof e.name, "%s", name ? name : "?");
    opcost_event_log_add(log, &e);
}

static const char *memcpy_name(uint8_t kind)
{
    static const char *const names[] = {
        "memcpy",      "memcpy HtoD", "memcpy DtoH", "memcpy HtoA",
        "memcpy AtoH", "memcpy AtoA", "memcpy AtoD", "memcpy DtoA",
        "memcpy DtoD", "memcpy HtoH", "memcpy PtoP"};
    return kind < sizeof names / sizeof names[0] ? names[kind] : "memcpy";
}

static void api_record(const cupti_api *a, const CUpti_ActivityAPI *r,
                       opcost_event_log *log, int64_t offset_ns)
{
    const CUpti_CallbackDomain domain = r->kind == CUPTI_ACTIVITY_KIND_DRIVER
                                            ? CUPTI_CB_DOMAIN_DRIVER_API
                                            : CUPTI_CB_DOMAIN_RUNTIME_API;
    const char *raw = NULL;
    char name[OPCOST_EVENT_NAME_MAX];
    if (a->GetCallbackName(domain, r->cbid, &raw) != CUPTI_SUCCESS || !raw)
        snprintf(name, sizeof name, "%s %u",
                 domain == CUPTI_CB_DOMAIN_DRIVER_API ? "driver" : "runtime",
                 (unsigned)r->cbid);
    else
        snprintf(name, sizeof name, "%s", raw);
    strip_version(name);
    add_event(log, opcost_cupti_api_kind(name), 0, 0, r->start, r->end,
              r->correlationId, name, offset_ns);
}

static void sync_record(const CUpti_ActivitySynchronization2 *r,
                        opcost_event_log *log, int64_t offset_ns)
{
    static const char *const names[] = {
        "synchronize", "event synchronize", "stream wait event",
        "stream synchronize", "context synchronize"};
    const unsigned type = (unsigned)r->type;
    /* a stream waiting on an event blocks the device, not the host */
    const opcost_event_kind kind =
        r->type == CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT
            ? OPCOST_EVENT_HOST_API
            : OPCOST_EVENT_SYNC;
    add_event(log, kind, 0, 0, r->start, r->end, r->correlationId,
              type < 5 ? names[type] : names[0], offset_ns);
}

static int add_call_id(opcost_cupti_calls *c, uint32_t correlation,
                       int64_t call)
{
    if (c->n == c->cap) {
        const size_t cap = c->cap ? 2 * c->cap : 256;
        struct opcost_cupti_call_id *p = realloc(c->ids, cap * sizeof *p);
        if (!p)
            return -1;
        c->ids = p;
        c->cap = cap;
    }
    c->ids[c->n++] = (struct opcost_cupti_call_id){correlation, call};
    return 0;
}

static int walk(const cupti_api *a, uint8_t *buf, size_t valid,
                int64_t offset_ns, opcost_event_log *log,
                opcost_cupti_calls *calls, char *err, size_t len)
{
    CUpti_Activity *rec = NULL;
    for (;;) {
        const CUptiResult r = a->GetNextRecord(buf, valid, &rec);
        if (r == CUPTI_ERROR_MAX_LIMIT_REACHED)
            return 0;
        if (r == CUPTI_ERROR_INVALID_KIND) {
            ++log->dropped; /* a torn record ends what can be read */
            return 0;
        }
        if (r != CUPTI_SUCCESS)
            return unavailable(err, len, "read a record", result_text(a, r));
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_RUNTIME:
        case CUPTI_ACTIVITY_KIND_DRIVER:
            api_record(a, (const CUpti_ActivityAPI *)rec, log, offset_ns);
            break;
        case CUPTI_ACTIVITY_KIND_KERNEL:
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            /* CUpti_ActivityKernel10: the fields read here keep their
             * offsets in the later versions (Kernel11 of CUPTI 13.2) */
            const CUpti_ActivityKernel10 *k =
                (const CUpti_ActivityKernel10 *)rec;
            add_event(log, opcost_cupti_kernel_kind(k->name), 1, k->streamId,
                      k->start, k->end, k->correlationId, k->name, offset_ns);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
            add_event(log, OPCOST_EVENT_CONVERSION, 1, m->streamId, m->start,
                      m->end, m->correlationId, memcpy_name(m->copyKind),
                      offset_ns);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            add_event(log, OPCOST_EVENT_CONVERSION, 1, m->streamId, m->start,
                      m->end, m->correlationId, "memset", offset_ns);
            break;
        }
        case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
            sync_record((const CUpti_ActivitySynchronization2 *)rec, log,
                        offset_ns);
            break;
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *x =
                (const CUpti_ActivityExternalCorrelation *)rec;
            if (x->externalKind == EXTERNAL_KIND &&
                add_call_id(calls, x->correlationId, (int64_t)x->externalId))
                ++log->dropped;
            break;
        }
        default: break; /* a kind not enabled here */
        }
    }
}

int opcost_cupti_walk(uint8_t *buf, size_t valid, int64_t offset_ns,
                      opcost_event_log *log, opcost_cupti_calls *calls,
                      char *err, size_t len)
{
    const cupti_api *a = default_cupti(err, len);
    return a ? walk(a, buf, valid, offset_ns, log, calls, err, len) : -1;
}

/* ---- the tracer */

static const struct {
    CUpti_ActivityKind kind;
    const char *name;
} kinds[] = {
    {CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME"},
    {CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER"},
    {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL"},
    {CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY"},
    {CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET"},
    {CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION"},
    {CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION"},
};
#define NKINDS (sizeof kinds / sizeof kinds[0])

typedef struct filled {
    uint8_t *buf;
    size_t valid;
} filled;

struct opcost_cupti {
    cupti_api own; /* opt->library's */
    const cupti_api *api;
    opcost_cupti_options opt;
    int64_t offset_ns; /* CUPTI's clock -> opcost_now_ns */
    int64_t opened_ns;
    unsigned enabled; /* bit i: kinds[i] */
    int depth;        /* external ids pushed */
    /* under lock: CUPTI calls back on its own threads */
    filled *full;
    size_t nfull, capfull;
    uint8_t **spare;
    size_t nspare, capspare;
    size_t dropped; /* records CUPTI reported dropped */
    size_t refused; /* buffer requests not served */
};

static opcost_cupti *tracing; /* the tracer the callbacks feed, under lock */
/* the open tracer's cuptiActivityGetNumDroppedRecords, for the completion
 * callback, which must not take lock first (its library is never closed) */
static CUptiResult (*volatile dropped_records)(CUcontext, uint32_t, size_t *);

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size,
                                      size_t *max_records)
{
    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    pthread_mutex_lock(&lock);
    opcost_cupti *t = tracing;
    if (t) {
        *buffer = t->nspare ? t->spare[--t->nspare] : malloc(BUFFER_BYTES);
        if (*buffer)
            *size = BUFFER_BYTES;
        else
            ++t->refused; /* CUPTI drops what it cannot store */
    }
    pthread_mutex_unlock(&lock);
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
                                      uint8_t *buffer, size_t size,
                                      size_t valid)
{
    (void)size;
    size_t d = 0;
    if (!dropped_records || dropped_records(ctx, stream, &d) != CUPTI_SUCCESS)
        d = 0;
    pthread_mutex_lock(&lock);
    opcost_cupti *t = tracing;
    int kept = 0;
    if (t) {
        t->dropped += d;
        if (t->nfull == t->capfull) {
            const size_t cap = t->capfull ? 2 * t->capfull : 16;
            filled *p = realloc(t->full, cap * sizeof *p);
            if (p) {
                t->full = p;
                t->capfull = cap;
            }
        }
        if (t->nfull < t->capfull) {
            t->full[t->nfull++] = (filled){buffer, valid};
            kept = 1;
        } else if (valid) {
            ++t->refused; /* its records are lost */
        }
    }
    pthread_mutex_unlock(&lock);
    if (!kept)
        free(buffer);
}

static uint64_t CUPTIAPI timestamp_now(void)
{
    return (uint64_t)opcost_now_ns();
}

/* CUPTI's clock against opcost_now_ns: the narrowest of a few bracketed
 * reads, its midpoint. */
static int64_t measure_offset(const cupti_api *a)
{
    int64_t best = INT64_MAX, offset = 0;
    for (int i = 0; i < 16; ++i) {
        uint64_t c = 0;
        const int64_t t0 = opcost_now_ns();
        const CUptiResult r = a->GetTimestamp(&c);
        const int64_t t1 = opcost_now_ns();
        if (r == CUPTI_SUCCESS && t1 - t0 < best) {
            best = t1 - t0;
            offset = t0 + (t1 - t0) / 2 - (int64_t)c;
        }
    }
    return offset;
}

static void disable_all(opcost_cupti *t)
{
    for (size_t i = NKINDS; i-- > 0;)
        if (t->enabled & (1u << i)) {
            t->api->Disable(kinds[i].kind);
            t->enabled &= ~(1u << i);
        }
}

/* Frees the buffers the tracer holds; the caller holds lock or owns t. */
static void free_buffers(opcost_cupti *t)
{
    for (size_t i = 0; i < t->nfull; ++i)
        free(t->full[i].buf);
    for (size_t i = 0; i < t->nspare; ++i)
        free(t->spare[i]);
    free(t->full);
    free(t->spare);
    t->full = NULL;
    t->spare = NULL;
    t->nfull = t->capfull = t->nspare = t->capspare = 0;
}

/* Ends tracing: nothing enabled, CUPTI's last buffers back and freed. */
static void shut(opcost_cupti *t)
{
    disable_all(t);
    t->api->FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    pthread_mutex_lock(&lock);
    if (tracing == t)
        tracing = NULL;
    free_buffers(t);
    pthread_mutex_unlock(&lock);
}

int opcost_cupti_open(opcost_cupti **out, const opcost_cupti_options *opt,
                      char *err, size_t len)
{
    *out = NULL;
    const opcost_cupti_options none = {0};
    if (!opt)
        opt = &none;
    /* Kineto owns CUPTI while torch.profiler runs: touch nothing */
    if (opt->profiler_active && opt->profiler_active(opt->ctx))
        return unavailable(err, len, "torch.profiler",
                           "Kineto is active in this process and owns "
                           "CUPTI");
    opcost_cupti *t = calloc(1, sizeof *t);
    if (!t)
        return unavailable(err, len, "open", "out of memory");
    t->opt = *opt;
    if (opt->library) {
        if (api_load(&t->own, opt->library, err, len)) {
            free(t);
            return -1;
        }
        t->api = &t->own;
    } else if (!(t->api = default_cupti(err, len))) {
        free(t);
        return -1;
    }
    pthread_mutex_lock(&lock);
    const int busy = tracing != NULL;
    if (!busy) {
        tracing = t;
        dropped_records = t->api->GetNumDroppedRecords;
    }
    pthread_mutex_unlock(&lock);
    if (busy) {
        free(t);
        return unavailable(err, len, "open",
                           "a tracer is already open in this process");
    }
    const cupti_api *a = t->api;
    /* CUPTI on the timing loop's clock where it can be (before any kind
     * is enabled); else the offset, measured */
    if (a->RegisterTimestampCallback &&
        a->RegisterTimestampCallback(timestamp_now) == CUPTI_SUCCESS)
        t->offset_ns = 0;
    else
        t->offset_ns = measure_offset(a);
    CUptiResult r = a->RegisterCallbacks(buffer_requested, buffer_completed);
    if (r != CUPTI_SUCCESS) {
        unavailable(err, len, "register callbacks", result_text(a, r));
        shut(t);
        free(t);
        return -1;
    }
    for (size_t i = 0; i < NKINDS; ++i) {
        r = a->Enable(kinds[i].kind);
        if (r != CUPTI_SUCCESS) {
            char stage[64];
            snprintf(stage, sizeof stage, "enable %s", kinds[i].name);
            unavailable(err, len, stage, result_text(a, r));
            shut(t);
            free(t);
            return -1;
        }
        t->enabled |= 1u << i;
    }
    t->opened_ns = opcost_now_ns();
    *out = t;
    return 0;
}

int opcost_cupti_call_begin(opcost_cupti *t, uint64_t call)
{
    if (!t ||
        t->api->PushExternalCorrelationId(EXTERNAL_KIND, call) != CUPTI_SUCCESS)
        return -1;
    ++t->depth;
    return 0;
}

int opcost_cupti_call_end(opcost_cupti *t)
{
    if (!t || t->depth == 0)
        return -1;
    --t->depth;
    uint64_t last;
    return t->api->PopExternalCorrelationId(EXTERNAL_KIND, &last) ==
                   CUPTI_SUCCESS
               ? 0
               : -1;
}

/* A walked buffer back to the spares, for CUPTI's next request. */
static void keep_spare(opcost_cupti *t, uint8_t *buf)
{
    pthread_mutex_lock(&lock);
    if (t->nspare == t->capspare) {
        const size_t cap = t->capspare ? 2 * t->capspare : 8;
        uint8_t **p = realloc(t->spare, cap * sizeof *p);
        if (p) {
            t->spare = p;
            t->capspare = cap;
        }
    }
    if (t->nspare < t->capspare)
        t->spare[t->nspare++] = buf;
    else
        free(buf);
    pthread_mutex_unlock(&lock);
}

int opcost_cupti_collect(opcost_cupti *t, opcost_event_log *log, char *err,
                         size_t len)
{
    if (t->opt.profiler_active && t->opt.profiler_active(t->opt.ctx))
        return unavailable(err, len, "torch.profiler",
                           "Kineto became active while tracing");
    const cupti_api *a = t->api;
    /* forced: also the buffers with a record still open (they come
     * without timestamps, counted as dropped) */
    const CUptiResult r = a->FlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS)
        return unavailable(err, len, "flush", result_text(a, r));
    /* CUPTI's own locks are never taken under ours (its threads call
     * back under theirs) */
    size_t d = 0;
    if (a->GetNumDroppedRecords(NULL, 0, &d) != CUPTI_SUCCESS)
        d = 0;
    pthread_mutex_lock(&lock);
    t->dropped += d;
    filled *full = t->full;
    const size_t nfull = t->nfull;
    t->full = NULL;
    t->nfull = t->capfull = 0;
    log->dropped += t->dropped + t->refused;
    t->dropped = t->refused = 0;
    pthread_mutex_unlock(&lock);

    const size_t first = log->n;
    opcost_cupti_calls calls = {0};
    int rc = 0;
    for (size_t i = 0; i < nfull; ++i) {
        if (rc == 0)
            rc = walk(a, full[i].buf, full[i].valid, t->offset_ns, log, &calls,
                      err, len);
        keep_spare(t, full[i].buf);
    }
    free(full);
    opcost_cupti_resolve(log, first, &calls);
    opcost_cupti_calls_free(&calls);
    if (rc)
        return rc;
    /* a clock mismatch would misplace every record: refuse it loudly */
    const int64_t now = opcost_now_ns(), slack = 1000000000;
    for (size_t i = first; i < log->n; ++i)
        if (log->ev[i].start_ns < t->opened_ns - slack ||
            log->ev[i].end_ns > now + slack)
            return unavailable(err, len, "timestamps",
                               "records outside the tracer's lifetime: "
                               "CUPTI's clock is not the timing loop's");
    return 0;
}

void opcost_cupti_describe(const opcost_cupti *t, char *buf, size_t len)
{
    snprintf(buf, len, "libcupti %u (%s)", (unsigned)t->api->version,
             t->api->path);
}

void opcost_cupti_close(opcost_cupti *t)
{
    if (!t)
        return;
    while (t->depth > 0)
        opcost_cupti_call_end(t);
    shut(t);
    free(t);
}

#else /* no CUPTI headers: every entry reports it */

static int no_cupti(char *err, size_t len)
{
    snprintf(err, len,
             "cupti unavailable: build: compiled without the CUPTI headers");
    return -1;
}

int opcost_cupti_open(opcost_cupti **t, const opcost_cupti_options *opt,
                      char *err, size_t len)
{
    (void)opt;
    *t = NULL;
    return no_cupti(err, len);
}

int opcost_cupti_call_begin(opcost_cupti *t, uint64_t call)
{
    (void)t;
    (void)call;
    return -1;
}

int opcost_cupti_call_end(opcost_cupti *t)
{
    (void)t;
    return -1;
}

int opcost_cupti_collect(opcost_cupti *t, opcost_event_log *log, char *err,
                         size_t len)
{
    (void)t;
    (void)log;
    return no_cupti(err, len);
}

void opcost_cupti_describe(const opcost_cupti *t, char *buf, size_t len)
{
    (void)t;
    snprintf(buf, len, "no CUPTI in this build");
}

void opcost_cupti_close(opcost_cupti *t)
{
    (void)t;
}

int opcost_cupti_walk(uint8_t *buf, size_t valid, int64_t offset_ns,
                      opcost_event_log *log, opcost_cupti_calls *calls,
                      char *err, size_t len)
{
    (void)buf;
    (void)valid;
    (void)offset_ns;
    (void)log;
    (void)calls;
    return no_cupti(err, len);
}

#endif
