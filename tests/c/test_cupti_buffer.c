/* The CUPTI buffer walk (bench/tracers/cupti_tracer.c) over buffers built here
 * from this CUDA version's record structs, walked by CUPTI's own
 * cuptiActivityGetNextRecord (no driver needed): kinds, names, times
 * moved onto the timing loop's clock, correlation -> call across
 * buffers, records without timestamps and a torn record counted as
 * dropped; and the name -> kind rules for API calls and kernels.
 * The records are this toolkit's structs: the walk must load the
 * toolkit's libcupti.so.13 (a newer CUPTI's kernel record is longer). */
#include "c_samples.h"
#include "cupti_tracer.h"

#include <cupti.h>
#include <stdio.h>
#include <string.h>

/* Records appended back to back, as CUPTI lays them out: each struct is
 * 8-byte aligned and a multiple of 8 long (PACKED_ALIGNMENT). */
typedef struct buffer {
    _Alignas(8) uint8_t bytes[8192];
    size_t used;
} buffer;

static void put(buffer *b, const void *rec, size_t size)
{
    C_EXPECT(size % 8 == 0 && b->used + size <= sizeof b->bytes,
             "record of %zu bytes", size);
    memcpy(b->bytes + b->used, rec, size);
    b->used += size;
}

static void api(buffer *b, CUpti_ActivityKind kind, uint32_t cbid,
                uint64_t start, uint64_t end, uint32_t corr)
{
    CUpti_ActivityAPI r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.cbid = cbid;
    r.start = start;
    r.end = end;
    r.correlationId = corr;
    put(b, &r, sizeof r);
}

static void external(buffer *b, CUpti_ExternalCorrelationKind kind, uint64_t id,
                     uint32_t corr)
{
    CUpti_ActivityExternalCorrelation r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    r.externalKind = kind;
    r.externalId = id;
    r.correlationId = corr;
    put(b, &r, sizeof r);
}

static void kernel(buffer *b, const char *name, uint64_t start, uint64_t end,
                   uint32_t stream, uint32_t corr)
{
    CUpti_ActivityKernel10 r;
    memset(&r, 0, sizeof r);
    r.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    r.name = name;
    r.start = start;
    r.end = end;
    r.streamId = stream;
    r.correlationId = corr;
    put(b, &r, sizeof r);
}

/* The first OPCOST_EVENT_NAME_MAX - 1 bytes of s, as an event keeps. */
static const char *cut(const char *s)
{
    static char buf[OPCOST_EVENT_NAME_MAX];
    memcpy(buf, s, sizeof buf - 1);
    buf[sizeof buf - 1] = '\0';
    return buf;
}

static const opcost_event *find(const opcost_event_log *log, const char *name)
{
    for (size_t i = 0; i < log->n; ++i)
        if (strcmp(log->ev[i].name, name) == 0)
            return &log->ev[i];
    return NULL;
}

/* One event, all fields checked; times after the offset. */
static void expect_event(const opcost_event_log *log, const char *name,
                         opcost_event_kind kind, int on_device, int stream,
                         int64_t start, int64_t end, uint64_t corr,
                         int64_t call)
{
    const opcost_event *e = find(log, name);
    C_EXPECT(e != NULL, "no event named '%s'", name);
    if (!e)
        return;
    C_EXPECT(e->kind == kind, "%s: kind %s, want %s", name,
             opcost_event_kind_name(e->kind), opcost_event_kind_name(kind));
    C_EXPECT(e->on_device == on_device && e->stream == stream,
             "%s: on_device %d stream %d", name, e->on_device, e->stream);
    C_EXPECT(e->start_ns == start && e->end_ns == end,
             "%s: [%lld, %lld], want [%lld, %lld]", name,
             (long long)e->start_ns, (long long)e->end_ns, (long long)start,
             (long long)end);
    C_EXPECT(e->correlation == corr, "%s: correlation %llu", name,
             (unsigned long long)e->correlation);
    C_EXPECT(e->call == call, "%s: call %lld, want %lld", name,
             (long long)e->call, (long long)call);
}

static const char ours[] =
    "_ZN10rowops_cuda12_GLOBAL__N_111fast_kernelI13__nv_bfloat16EEvNS0_"
    "11fast_paramsE";
static const char aten_copy[] =
    "void at::native::elementwise_kernel<128, 4, "
    "at::native::direct_copy_kernel_cuda(at::TensorIteratorBase&)>";
static const char aten_add[] =
    "void at::native::vectorized_elementwise_kernel<4, "
    "at::native::CUDAFunctor_add<float>>";

static void walk_two_buffers(void)
{
    static buffer a, b;
    const int64_t off = -1000; /* CUPTI's clock 1000 ns ahead */
    /* call 0: a runtime launch (external id before it, as CUPTI writes
     * it), its driver call (external id after it), our kernel */
    external(&a, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 0, 11);
    api(&a, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, 10000, 10500, 11);
    api(&a, CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
        10100, 10400, 12);
    external(&a, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 0, 12);
    /* call 1: an async copy; another tool's external id is ignored */
    external(&a, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1, 99, 13);
    external(&a, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 1, 13);
    api(&a, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, 11000, 11200, 13);
    /* call 2: a stream synchronize and its SYNCHRONIZATION record */
    external(&a, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, 2, 15);
    api(&a, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_RUNTIME_TRACE_CBID_cudaStreamSynchronize_v3020, 12000, 14000, 15);
    CUpti_ActivitySynchronization2 s;
    memset(&s, 0, sizeof s);
    s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
    s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
    s.start = 12100;
    s.end = 13900;
    s.correlationId = 15;
    put(&a, &s, sizeof s);
    /* outside any call: an allocation, a query, one without timestamps */
    api(&a, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 15000, 15100, 16);
    api(&a, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, 0, 0, 17);

    /* the device side, in a later buffer */
    kernel(&b, ours, 20000, 23000, 7, 11);
    CUpti_ActivityMemcpy6 m;
    memset(&m, 0, sizeof m);
    m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
    m.start = 24000;
    m.end = 24500;
    m.streamId = 7;
    m.correlationId = 13;
    put(&b, &m, sizeof m);
    CUpti_ActivityMemset4 z;
    memset(&z, 0, sizeof z);
    z.kind = CUPTI_ACTIVITY_KIND_MEMSET;
    z.start = 25000;
    z.end = 25100;
    z.streamId = 8;
    z.correlationId = 18;
    put(&b, &z, sizeof z);
    kernel(&b, aten_copy, 26000, 26400, 8, 19);
    kernel(&b, aten_add, 27000, 27300, 8, 20);

    opcost_event_log log = {0};
    opcost_cupti_calls calls = {0};
    char err[512] = "";
    int rc =
        opcost_cupti_walk(a.bytes, a.used, off, &log, &calls, err, sizeof err);
    C_EXPECT(rc == 0, "walk a: %s", err);
    rc = opcost_cupti_walk(b.bytes, b.used, off, &log, &calls, err, sizeof err);
    C_EXPECT(rc == 0, "walk b: %s", err);
    opcost_cupti_resolve(&log, 0, &calls);

    C_EXPECT(log.n == 11, "11 events, got %zu", log.n);
    C_EXPECT(log.dropped == 1, "the untimed record dropped, got %zu",
             log.dropped);
    C_EXPECT(calls.n == 4, "4 external ids of ours, got %zu", calls.n);
    expect_event(&log, "cudaLaunchKernel", OPCOST_EVENT_LAUNCH, 0, 0, 9000,
                 9500, 11, 0);
    expect_event(&log, "cuLaunchKernel", OPCOST_EVENT_LAUNCH, 0, 0, 9100, 9400,
                 12, 0);
    expect_event(&log, "cudaMemcpyAsync", OPCOST_EVENT_LAUNCH, 0, 0, 10000,
                 10200, 13, 1);
    expect_event(&log, "cudaStreamSynchronize", OPCOST_EVENT_SYNC, 0, 0, 11000,
                 13000, 15, 2);
    expect_event(&log, "stream synchronize", OPCOST_EVENT_SYNC, 0, 0, 11100,
                 12900, 15, 2);
    expect_event(&log, "cudaMalloc", OPCOST_EVENT_ALLOCATION, 0, 0, 14000,
                 14100, 16, -1);
    C_EXPECT(find(&log, "cudaGetDevice") == NULL, "untimed record kept");
    /* kernel names longer than an event's name are cut, not lost */
    expect_event(&log, cut(ours), OPCOST_EVENT_KERNEL_OURS, 1, 7, 19000, 22000,
                 11, 0);
    expect_event(&log, "memcpy DtoD", OPCOST_EVENT_CONVERSION, 1, 7, 23000,
                 23500, 13, 1);
    expect_event(&log, "memset", OPCOST_EVENT_CONVERSION, 1, 8, 24000, 24100,
                 18, -1);
    expect_event(&log, cut(aten_copy), OPCOST_EVENT_CONVERSION, 1, 8, 25000,
                 25400, 19, -1);
    expect_event(&log, cut(aten_add), OPCOST_EVENT_KERNEL_OTHER, 1, 8, 26000,
                 26300, 20, -1);

    /* a torn buffer: the walk keeps what came before and counts a loss */
    opcost_event_log torn = {0};
    opcost_cupti_calls none = {0};
    buffer c = {.used = 0};
    api(&c, CUPTI_ACTIVITY_KIND_RUNTIME,
        CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, 100, 200, 1);
    const uint32_t bad = CUPTI_ACTIVITY_KIND_INVALID;
    memcpy(c.bytes + c.used, &bad, sizeof bad);
    rc = opcost_cupti_walk(c.bytes, c.used + 40, 0, &torn, &none, err,
                           sizeof err);
    C_EXPECT(rc == 0 && torn.n == 1 && torn.dropped == 1,
             "torn buffer: rc %d, %zu events, %zu dropped (%s)", rc, torn.n,
             torn.dropped, err);
    /* an empty buffer is no error */
    rc = opcost_cupti_walk(c.bytes, 0, 0, &torn, &none, err, sizeof err);
    C_EXPECT(rc == 0 && torn.n == 1, "empty buffer: rc %d", rc);

    opcost_event_log_free(&log);
    opcost_event_log_free(&torn);
    opcost_cupti_calls_free(&calls);
    opcost_cupti_calls_free(&none);
}

static void api_kinds(void)
{
    static const struct {
        const char *name;
        opcost_event_kind kind;
    } cases[] = {
        {"cudaLaunchKernel_v7000", OPCOST_EVENT_LAUNCH},
        {"cudaLaunchKernel_ptsz_v7000", OPCOST_EVENT_LAUNCH},
        {"__cudaLaunchKernel_v13000", OPCOST_EVENT_LAUNCH},
        {"cudaLaunchKernelExC_v11060", OPCOST_EVENT_LAUNCH},
        {"cuLaunchKernel", OPCOST_EVENT_LAUNCH},
        {"cuLaunchKernelEx", OPCOST_EVENT_LAUNCH},
        {"cudaGraphLaunch_v10000", OPCOST_EVENT_LAUNCH},
        {"cuGraphLaunch_ptsz", OPCOST_EVENT_LAUNCH},
        {"cudaMemcpyAsync_v3020", OPCOST_EVENT_LAUNCH},
        {"cudaMemcpy2DAsync_ptsz_v7000", OPCOST_EVENT_LAUNCH},
        {"cuMemcpyHtoDAsync_v2", OPCOST_EVENT_LAUNCH},
        {"cudaMemsetAsync_v3020", OPCOST_EVENT_LAUNCH},
        {"cuMemsetD32Async", OPCOST_EVENT_LAUNCH},
        {"cudaMemset_v3020", OPCOST_EVENT_LAUNCH},
        {"cudaMemcpy_v3020", OPCOST_EVENT_SYNC},
        {"cuMemcpyDtoH_v2", OPCOST_EVENT_SYNC},
        {"cudaDeviceSynchronize_v3020", OPCOST_EVENT_SYNC},
        {"cudaStreamSynchronize_ptsz_v7000", OPCOST_EVENT_SYNC},
        {"cudaEventSynchronize_v3020", OPCOST_EVENT_SYNC},
        {"cuStreamSynchronize", OPCOST_EVENT_SYNC},
        {"cuCtxSynchronize", OPCOST_EVENT_SYNC},
        {"cuEventSynchronize", OPCOST_EVENT_SYNC},
        {"cudaMalloc_v3020", OPCOST_EVENT_ALLOCATION},
        {"cudaMallocAsync_ptsz_v11020", OPCOST_EVENT_ALLOCATION},
        {"cudaFree_v3020", OPCOST_EVENT_ALLOCATION},
        {"cudaFreeHost_v3020", OPCOST_EVENT_ALLOCATION},
        {"cuMemAlloc_v2", OPCOST_EVENT_ALLOCATION},
        {"cuMemFree_v2", OPCOST_EVENT_ALLOCATION},
        {"cudaGetDevice_v3020", OPCOST_EVENT_HOST_API},
        {"cudaStreamWaitEvent_v3020", OPCOST_EVENT_HOST_API},
        {"cudaEventRecord_v3020", OPCOST_EVENT_HOST_API},
        {"cuCtxGetCurrent", OPCOST_EVENT_HOST_API},
        {"", OPCOST_EVENT_HOST_API},
        {NULL, OPCOST_EVENT_HOST_API},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const opcost_event_kind k = opcost_cupti_api_kind(cases[i].name);
        C_EXPECT(k == cases[i].kind, "%s: %s, want %s",
                 cases[i].name ? cases[i].name : "(null)",
                 opcost_event_kind_name(k),
                 opcost_event_kind_name(cases[i].kind));
    }
    C_CHECK(opcost_cupti_kernel_kind(ours) == OPCOST_EVENT_KERNEL_OURS);
    C_CHECK(opcost_cupti_kernel_kind("rowops::fast_kernel<float>") ==
            OPCOST_EVENT_KERNEL_OURS);
    C_CHECK(opcost_cupti_kernel_kind(aten_copy) == OPCOST_EVENT_CONVERSION);
    C_CHECK(opcost_cupti_kernel_kind("CatArrayBatchedCopy") ==
            OPCOST_EVENT_CONVERSION);
    C_CHECK(opcost_cupti_kernel_kind(aten_add) == OPCOST_EVENT_KERNEL_OTHER);
    C_CHECK(opcost_cupti_kernel_kind(NULL) == OPCOST_EVENT_KERNEL_OTHER);
}

int main(void)
{
    walk_two_buffers();
    api_kinds();
    return c_report("test_cupti_buffer");
}
