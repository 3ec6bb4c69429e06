/* The CUPTI tracer's life (open, calls bracketed, collect, close) against
 * tests/c/fake_cupti.c, which simulates what needs a driver: an enable
 * failing half-way is undone, torch.profiler active is refused before
 * anything is touched, one tracer per process, calls and their kernels
 * get their call ids, times land on opcost_now_ns's clock (through the
 * timestamp callback, and through the measured offset when the callback
 * is refused as without a driver), dropped records reach the log, close
 * leaves nothing enabled and the callbacks inert. Usage:
 * test_cupti_tracer FAKE_LIBRARY */
#include "c_samples.h"
#include "cupti_tracer.h"
#include "timer.h"

#include <cupti.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static struct {
    void (*reset)(void);
    void (*fail_enable)(int kind);
    void (*fail_timestamp_callback)(int fail);
    void (*drop)(size_t n);
    unsigned long long (*enabled)(void);
    int (*depth)(void);
    int (*registered)(void);
    int (*request_probe)(void);
    void (*call)(uint32_t cbid, const char *kernel);
} fake;

static int bind(void *h, void *field, size_t size, const char *sym)
{
    void *p = dlsym(h, sym);
    if (!p)
        fprintf(stderr, "fake library: no %s\n", sym);
    memcpy(field, &p, size);
    return p ? 0 : -1;
}

#define BIND(h, f) bind(h, &fake.f, sizeof fake.f, "fake_cupti_" #f)

static const char *lib;

static int active(void *ctx)
{
    return *(const int *)ctx;
}

static void refusals(void)
{
    opcost_cupti *t = (opcost_cupti *)1;
    char err[512] = "";
    /* torch.profiler active: refused before CUPTI is touched */
    int on = 1;
    opcost_cupti_options o = {
        .profiler_active = active, .ctx = &on, .library = lib};
    C_CHECK(opcost_cupti_open(&t, &o, err, sizeof err) == -1 && t == NULL);
    C_EXPECT_STR(err,
                 "cupti unavailable: torch.profiler: Kineto is active in "
                 "this process and owns CUPTI",
                 "profiler active");
    C_CHECK(!fake.registered() && fake.enabled() == 0);

    /* no library */
    o = (opcost_cupti_options){.library = "/nonexistent/libcupti.so.13"};
    C_CHECK(opcost_cupti_open(&t, &o, err, sizeof err) == -1 && t == NULL);
    const char *want = "cupti unavailable: load /nonexistent/libcupti.so.13: "
                       "/nonexistent/libcupti.so.13: cannot open";
    C_EXPECT(strncmp(err, want, strlen(want)) == 0, "load failure: %s", err);

    /* the third kind fails: the first two are disabled again */
    o = (opcost_cupti_options){.library = lib};
    fake.fail_enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    C_CHECK(opcost_cupti_open(&t, &o, err, sizeof err) == -1 && t == NULL);
    C_EXPECT_STR(err,
                 "cupti unavailable: enable CONCURRENT_KERNEL: "
                 "CUPTI_ERROR_NOT_SUPPORTED",
                 "enable failure");
    C_EXPECT(fake.enabled() == 0, "left enabled: %#llx", fake.enabled());
    C_CHECK(!fake.request_probe());
    fake.reset();
}

/* A traced run: calls 0..2 each launch our kernel, one launch outside a
 * call; every record where and when it happened. */
static void traced(int timestamp_callback)
{
    fake.reset();
    fake.fail_timestamp_callback(!timestamp_callback);
    opcost_cupti_options o = {.library = lib};
    opcost_cupti *t = NULL, *u = NULL;
    char err[512] = "";
    const int64_t t0 = opcost_now_ns();
    C_EXPECT(opcost_cupti_open(&t, &o, err, sizeof err) == 0 && t, "open: %s",
             err);
    if (!t)
        return;
    const unsigned long long all =
        1ull << CUPTI_ACTIVITY_KIND_RUNTIME |
        1ull << CUPTI_ACTIVITY_KIND_DRIVER |
        1ull << CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL |
        1ull << CUPTI_ACTIVITY_KIND_MEMCPY |
        1ull << CUPTI_ACTIVITY_KIND_MEMSET |
        1ull << CUPTI_ACTIVITY_KIND_SYNCHRONIZATION |
        1ull << CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
    C_EXPECT(fake.enabled() == all, "enabled %#llx, want %#llx", fake.enabled(),
             all);
    char what[256];
    opcost_cupti_describe(t, what, sizeof what);
    C_EXPECT(strncmp(what, "libcupti 1", 10) == 0 && strstr(what, "fake"),
             "describe: %s", what);
    /* one tracer per process */
    C_CHECK(opcost_cupti_open(&u, &o, err, sizeof err) == -1 && u == NULL);
    C_EXPECT_STR(err,
                 "cupti unavailable: open: a tracer is already open in this "
                 "process",
                 "second open");

    for (uint64_t call = 0; call < 3; ++call) {
        C_CHECK(opcost_cupti_call_begin(t, call) == 0);
        fake.call(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
                  "rowops_cuda::fast_kernel");
        C_CHECK(opcost_cupti_call_end(t) == 0);
    }
    C_CHECK(opcost_cupti_call_end(t) == -1); /* nothing open */
    C_CHECK(fake.depth() == 0);
    fake.call(CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020, NULL);
    const int64_t t1 = opcost_now_ns();

    opcost_event_log log = {0};
    C_EXPECT(opcost_cupti_collect(t, &log, err, sizeof err) == 0, "collect: %s",
             err);
    C_EXPECT(log.n == 7 && log.dropped == 0, "%zu events, %zu dropped", log.n,
             log.dropped);
    int launches[3] = {0}, kernels[3] = {0}, outside = 0;
    /* the measured offset is good to the width of a bracketed read */
    const int64_t slack = timestamp_callback ? 0 : 1000000;
    for (size_t i = 0; i < log.n; ++i) {
        const opcost_event *e = &log.ev[i];
        C_EXPECT(e->start_ns >= t0 - slack && e->end_ns <= t1 + slack &&
                     e->start_ns <= e->end_ns,
                 "%s: [%lld, %lld] outside [%lld, %lld]", e->name,
                 (long long)e->start_ns, (long long)e->end_ns, (long long)t0,
                 (long long)t1);
        if (e->call >= 0 && e->call < 3 && e->kind == OPCOST_EVENT_LAUNCH &&
            strcmp(e->name, "cudaLaunchKernel") == 0 && !e->on_device)
            ++launches[e->call];
        else if (e->call >= 0 && e->call < 3 &&
                 e->kind == OPCOST_EVENT_KERNEL_OURS && e->on_device &&
                 e->stream == 7)
            ++kernels[e->call];
        else if (e->call == -1 && e->kind == OPCOST_EVENT_ALLOCATION &&
                 strcmp(e->name, "cudaMalloc") == 0)
            ++outside;
        else
            C_EXPECT(0, "unexpected event %s (%s, call %lld)", e->name,
                     opcost_event_kind_name(e->kind), (long long)e->call);
    }
    for (int c = 0; c < 3; ++c)
        C_EXPECT(launches[c] == 1 && kernels[c] == 1,
                 "call %d: %d launches, %d kernels", c, launches[c],
                 kernels[c]);
    C_CHECK(outside == 1);

    /* dropped records reach the log; a second collect starts afresh */
    opcost_event_log_clear(&log);
    fake.drop(5);
    fake.call(CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020, NULL);
    C_EXPECT(opcost_cupti_collect(t, &log, err, sizeof err) == 0, "collect: %s",
             err);
    C_EXPECT(log.n == 1 && log.dropped == 5, "%zu events, %zu dropped", log.n,
             log.dropped);
    /* a call left open is closed by close */
    C_CHECK(opcost_cupti_call_begin(t, 9) == 0);
    opcost_cupti_close(t);
    C_EXPECT(fake.enabled() == 0, "after close: %#llx", fake.enabled());
    C_CHECK(fake.depth() == 0);
    /* CUPTI's callbacks stay registered (they cannot be removed): they
     * must hand out nothing now */
    C_CHECK(!fake.request_probe());
    opcost_event_log_free(&log);
    /* and a new tracer can open */
    C_EXPECT(opcost_cupti_open(&u, &o, err, sizeof err) == 0, "reopen: %s",
             err);
    opcost_cupti_close(u);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_cupti_tracer FAKE_LIBRARY\n");
        return 2;
    }
    lib = argv[1];
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h || BIND(h, reset) || BIND(h, fail_enable) ||
        BIND(h, fail_timestamp_callback) || BIND(h, drop) || BIND(h, enabled) ||
        BIND(h, depth) || BIND(h, registered) || BIND(h, request_probe) ||
        BIND(h, call)) {
        fprintf(stderr, "cannot use %s: %s\n", lib, h ? "" : dlerror());
        return 1;
    }
    refusals();
    traced(1);
    traced(0);
    opcost_cupti_close(NULL);
    return c_report("test_cupti_tracer");
}
