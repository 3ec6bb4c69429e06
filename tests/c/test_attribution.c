/* Attribution: the differential split (parts add up to the median, none
 * negative, each clamped as bench/measure/attribution.h states), and the
 * measured split over hand-built record arrays: nested host ranges,
 * out-of-order records, a graph launch, two streams overlapping, records
 * straddling a window, dropped records, a call with no records; and the kinds
 * the RecordFunction source gives scopes by name. */
#include "attribution.h"
#include "c_samples.h"
#include "scope_kind.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void expect_sum(double median, double kernel, double conv)
{
    const opcost_parts a = opcost_attribute_differential(median, kernel, conv);
    const double sum = opcost_parts_sum(&a);
    /* exact up to the rounding of three additions */
    C_EXPECT(fabs(sum - median) <= 4e-16 * median * 4,
             "median %g kernel %g conv %g: parts sum to %.17g", median, kernel,
             conv, sum);
    C_EXPECT(a.kernel_us >= 0 && a.conversion_us >= 0 && a.dispatch_us >= 0,
             "median %g: a negative part", median);
    C_EXPECT(a.launch_us == 0 && a.idle_us == 0, "CPU: launch and idle zero");
    C_EXPECT(isnan(a.other_kernel_us), "differential: other compute unknown");
}

static void differential(void)
{
    /* the ordinary case: kernel and conversion inside the median */
    opcost_parts a = opcost_attribute_differential(10.0, 4.0, 3.0);
    C_EXPECT(a.kernel_us == 4.0 && a.conversion_us == 3.0 &&
                 a.dispatch_us == 3.0,
             "10 = 4 + 3 + 3, got %g %g %g", a.kernel_us, a.conversion_us,
             a.dispatch_us);
    /* the kernel path itself: all kernel */
    a = opcost_attribute_differential(7.5, 7.5, NAN);
    C_EXPECT(a.kernel_us == 7.5 && a.conversion_us == 0 && a.dispatch_us == 0,
             "kernel path: all kernel");
    /* noise: the kernel path's median above this path's: clamped */
    a = opcost_attribute_differential(5.0, 6.0, 1.0);
    C_EXPECT(a.kernel_us == 5.0 && a.conversion_us == 0 && a.dispatch_us == 0,
             "kernel clamped to the median, got %g %g %g", a.kernel_us,
             a.conversion_us, a.dispatch_us);
    a = opcost_attribute_differential(5.0, 2.0, 4.0);
    C_EXPECT(a.conversion_us == 3.0 && a.dispatch_us == 0,
             "conversion clamped to the remainder, got %g", a.conversion_us);
    /* unknown kernel or conversion time counts as zero */
    a = opcost_attribute_differential(5.0, NAN, NAN);
    C_EXPECT(a.kernel_us == 0 && a.dispatch_us == 5.0, "unknown parts");
    /* no median: nothing to attribute */
    a = opcost_attribute_differential(NAN, 1.0, 1.0);
    C_EXPECT(isnan(a.kernel_us) && isnan(a.dispatch_us), "no median");
    const double medians[] = {0.1, 1.0, 3.3, 17.25, 1234.5678, 1e6};
    for (int i = 0; i < 6; ++i)
        for (double k = 0; k <= 2.0; k += 0.25)
            for (double c = 0; c <= 1.0; c += 0.125)
                expect_sum(medians[i], k * medians[i], c * medians[i]);
}

/* A host record of call c (or -1), times in microseconds. */
static opcost_event host(opcost_event_kind k, double s, double e, int64_t c)
{
    opcost_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = k;
    ev.start_ns = (int64_t)(s * 1e3);
    ev.end_ns = (int64_t)(e * 1e3);
    ev.call = c;
    snprintf(ev.name, sizeof ev.name, "%s", opcost_event_kind_name(k));
    return ev;
}

static opcost_event device(opcost_event_kind k, double s, double e, int stream,
                           int64_t c)
{
    opcost_event ev = host(k, s, e, c);
    ev.on_device = 1;
    ev.stream = stream;
    return ev;
}

static opcost_call_window window(double s, double e)
{
    return (opcost_call_window){(int64_t)(s * 1e3), (int64_t)(e * 1e3), 0};
}

#define NEAR(a, b) (fabs((a) - (b)) < 1e-9)

static void expect_parts(const char *what, const opcost_parts *p, double kernel,
                         double other, double conv, double launch,
                         double dispatch, double idle)
{
    C_EXPECT(NEAR(p->kernel_us, kernel) && NEAR(p->other_kernel_us, other) &&
                 NEAR(p->conversion_us, conv) && NEAR(p->launch_us, launch) &&
                 NEAR(p->dispatch_us, dispatch) && NEAR(p->idle_us, idle),
             "%s: kernel %g other %g conversion %g launch %g dispatch %g idle "
             "%g, expected %g %g %g %g %g %g",
             what, p->kernel_us, p->other_kernel_us, p->conversion_us,
             p->launch_us, p->dispatch_us, p->idle_us, kernel, other, conv,
             launch, dispatch, idle);
}

static void one(const char *what, const opcost_event *ev, size_t n,
                opcost_call_window w, opcost_parts *out)
{
    const long got = opcost_attribute_events(ev, n, &w, 1, out);
    C_EXPECT(got == 1, "%s: %ld calls attributed", what, got);
    C_EXPECT(NEAR(opcost_parts_sum(out), (double)(w.end_ns - w.start_ns) / 1e3),
             "%s: parts sum to %g, the window is %g", what,
             opcost_parts_sum(out), (double)(w.end_ns - w.start_ns) / 1e3);
}

static void measured(void)
{
    opcost_parts p;
    /* nested host ranges (CPU): op 0..10 holds our kernel 2..8; aten
     * composite 12..20 holds a copy 13..15 (itself holding an allocation
     * 13..13.5) and a compute kernel 16..19 */
    const opcost_event nested[] = {
        host(OPCOST_EVENT_HOST_API, 0, 10, -1),
        host(OPCOST_EVENT_KERNEL_OURS, 2, 8, -1),
        host(OPCOST_EVENT_HOST_API, 12, 20, -1),
        host(OPCOST_EVENT_CONVERSION, 13, 15, -1),
        host(OPCOST_EVENT_ALLOCATION, 13, 13.5, -1),
        host(OPCOST_EVENT_KERNEL_OTHER, 16, 19, -1),
    };
    one("nested", nested, 6, window(0, 22), &p);
    /* dispatch: 0-2, 8-10, 10-12 (no record), 12-13, 13-13.5 (allocation),
     * 15-16, 19-20, 20-22 */
    expect_parts("nested", &p, 6, 3, 1.5, 0, 11.5, 0);

    /* out of order: the same records reversed give the same parts */
    opcost_event rev[6];
    for (int i = 0; i < 6; ++i)
        rev[i] = nested[5 - i];
    one("out of order", rev, 6, window(0, 22), &p);
    expect_parts("out of order", &p, 6, 3, 1.5, 0, 11.5, 0);

    /* same start: the shorter range is the inner one */
    const opcost_event same_start[] = {
        host(OPCOST_EVENT_KERNEL_OURS, 0, 4, -1),
        host(OPCOST_EVENT_HOST_API, 0, 10, -1),
    };
    one("same start", same_start, 2, window(0, 10), &p);
    expect_parts("same start", &p, 4, 0, 0, 0, 6, 0);

    /* a graph launch (GPU): one API record 1..3, four kernels of its
     * correlation on the device, ours and others, the host waiting in a
     * synchronize 3..20 */
    opcost_event graph[] = {
        host(OPCOST_EVENT_LAUNCH, 1, 3, 0),
        device(OPCOST_EVENT_KERNEL_OTHER, 5, 7, 1, 0),
        device(OPCOST_EVENT_KERNEL_OURS, 7, 10, 1, 0),
        device(OPCOST_EVENT_KERNEL_OTHER, 11, 12, 1, 0),
        device(OPCOST_EVENT_CONVERSION, 12, 14, 1, 0),
        host(OPCOST_EVENT_SYNC, 3, 20, 0),
    };
    for (int i = 0; i < 6; ++i)
        graph[i].correlation = 42;
    one("graph launch", graph, 6, window(0, 21), &p);
    /* launch 1-3; device busy 5-7, 7-10, 11-12, 12-14; idle (host in the
     * synchronize, device idle) 3-5, 10-11, 14-20; dispatch 0-1, 20-21 */
    expect_parts("graph launch", &p, 3, 3, 2, 2, 2, 9);

    /* two streams overlapping: our kernel on stream 1 at 2..6, another on
     * stream 2 at 4..9, a memcpy on stream 3 at 8..10: ours wins where it
     * runs, a conversion beats another kernel */
    const opcost_event streams[] = {
        device(OPCOST_EVENT_KERNEL_OURS, 2, 6, 1, -1),
        device(OPCOST_EVENT_KERNEL_OTHER, 4, 9, 2, -1),
        device(OPCOST_EVENT_CONVERSION, 8, 10, 3, -1),
        host(OPCOST_EVENT_SYNC, 1, 11, -1),
    };
    one("two streams", streams, 4, window(0, 12), &p);
    expect_parts("two streams", &p, 4, 2, 2, 0, 2, 2);

    /* records straddling windows: a kernel 8..14 spans calls [0, 10) and
     * [10, 20); a launch before the first window starts is clipped */
    const opcost_event straddle[] = {
        host(OPCOST_EVENT_LAUNCH, -5, 1, -1),
        host(OPCOST_EVENT_KERNEL_OTHER, 8, 14, -1),
    };
    const opcost_call_window two[] = {window(0, 10), window(10, 20)};
    opcost_parts pp[2];
    C_EXPECT(opcost_attribute_events(straddle, 2, two, 2, pp) == 2,
             "straddling: two calls");
    expect_parts("straddling, first", &pp[0], 0, 2, 0, 1, 7, 0);
    expect_parts("straddling, second", &pp[1], 0, 4, 0, 0, 6, 0);

    /* a record assigned to call 1 by correlation is not call 0's even where
     * the windows' times overlap it */
    opcost_event owned = device(OPCOST_EVENT_KERNEL_OURS, 2, 4, 1, 1);
    C_EXPECT(opcost_attribute_events(&owned, 1, two, 2, pp) == 2,
             "owned: two calls");
    expect_parts("owned, call 0", &pp[0], 0, 0, 0, 0, 10, 0);
    expect_parts("owned, call 1", &pp[1], 0, 0, 0, 0, 10, 0);

    /* dropped records: the call is not attributed, the others are */
    opcost_call_window lost[] = {window(0, 10), window(10, 20), window(20, 30)};
    lost[1].dropped = 1;
    opcost_parts three[3];
    const opcost_event k = host(OPCOST_EVENT_KERNEL_OURS, 0, 30, -1);
    C_EXPECT(opcost_attribute_events(&k, 1, lost, 3, three) == 2,
             "dropped: two of three calls attributed");
    C_EXPECT(isnan(three[1].kernel_us) && isnan(three[1].dispatch_us),
             "dropped: the call's parts are NAN");
    const opcost_parts applied = opcost_parts_apply(three, 3, 5.0);
    expect_parts("dropped, applied", &applied, 5, 0, 0, 0, 0, 0);

    /* the tracer's cost per record comes out of dispatch: 6 records of
     * 0.25 us each from the nested call's 11.5 us of dispatch */
    opcost_event costly[6];
    memcpy(costly, nested, sizeof costly);
    for (int i = 0; i < 6; ++i)
        costly[i].cost_ns = 250;
    opcost_call_window cw = window(0, 22);
    C_EXPECT(opcost_attribute_events(costly, 6, &cw, 1, &p) == 1, "costly");
    expect_parts("tracer cost", &p, 6, 3, 1.5, 0, 10, 0);
    /* ... never below zero */
    for (int i = 0; i < 6; ++i)
        costly[i].cost_ns = 5000;
    C_EXPECT(opcost_attribute_events(costly, 6, &cw, 1, &p) == 1, "costly");
    expect_parts("tracer cost above dispatch", &p, 6, 3, 1.5, 0, 0, 0);

    /* a call with no records: all dispatch */
    one("no records", NULL, 0, window(3, 7), &p);
    expect_parts("no records", &p, 0, 0, 0, 0, 4, 0);

    /* shares applied to the untraced median: 6/22 of 11 is kernel, ... */
    opcost_event again[6];
    memcpy(again, nested, sizeof again);
    opcost_parts calls[2];
    const opcost_call_window w2[] = {window(0, 22), window(0, 22)};
    C_EXPECT(opcost_attribute_events(again, 6, w2, 2, calls) == 2,
             "two identical calls");
    const opcost_parts a = opcost_parts_apply(calls, 2, 11.0);
    expect_parts("applied", &a, 3, 1.5, 0.75, 0, 5.75, 0);
    C_EXPECT(opcost_parts_sum(&a) == 11.0, "applied parts sum to the median");
    /* a call interrupted inside the kernel (a time slice lost there) is
     * left out: the shares are those of the typical calls */
    opcost_parts slices[9];
    for (int i = 0; i < 9; ++i)
        slices[i] = calls[0];
    slices[4].kernel_us += 4000;
    const opcost_parts robust = opcost_parts_apply(slices, 9, 11.0);
    expect_parts("one interrupted call of nine", &robust, 3, 1.5, 0.75, 0, 5.75,
                 0);
    /* nothing attributed: no parts */
    const opcost_parts none = opcost_parts_apply(three + 1, 1, 5.0);
    C_EXPECT(isnan(none.kernel_us), "nothing attributed: NAN parts");
}

static void scope_kinds(void)
{
    enum { OP = OPCOST_SCOPE_OP, COMPOSITE = OPCOST_SCOPE_COMPOSITE };
    static const struct {
        const char *name;
        int flags;
        opcost_event_kind kind;
    } cases[] = {
        {"rowops::kernel::cpu_fast_avx512", 0, OPCOST_EVENT_KERNEL_OURS},
        {"rowops::fused_add_rms_norm", OP, OPCOST_EVENT_HOST_API},
        {"rowops::fused_add_rms_norm_reference", OP | COMPOSITE,
         OPCOST_EVENT_HOST_API},
        {"aten::copy_", OP, OPCOST_EVENT_CONVERSION},
        {"aten::contiguous", OP | COMPOSITE, OPCOST_EVENT_CONVERSION},
        {"aten::clone", OP, OPCOST_EVENT_CONVERSION},
        {"aten::_to_copy", OP, OPCOST_EVENT_CONVERSION},
        {"aten::empty_strided", OP, OPCOST_EVENT_ALLOCATION},
        {"aten::empty", OP, OPCOST_EVENT_ALLOCATION},
        {"aten::view", OP, OPCOST_EVENT_HOST_API},
        {"aten::as_strided", OP, OPCOST_EVENT_HOST_API},
        {"aten::t", OP | COMPOSITE, OPCOST_EVENT_HOST_API},
        /* an op with a kernel computes, callees or not (aten::pow calls
         * aten::result_type and aten::to, then computes); a composite only
         * dispatches its callees */
        {"aten::add", OP, OPCOST_EVENT_KERNEL_OTHER},
        {"aten::pow", OP, OPCOST_EVENT_KERNEL_OTHER},
        {"aten::rms_norm", OP | COMPOSITE, OPCOST_EVENT_HOST_API},
        {"aten::square", OP | COMPOSITE, OPCOST_EVENT_HOST_API},
        /* a name that only starts like a conversion is not one */
        {"aten::copysign", OP, OPCOST_EVENT_KERNEL_OTHER},
        {"aten::top", OP, OPCOST_EVENT_KERNEL_OTHER},
        {"graph_0_cpp_fused_add_mean_mul_pow_rsqrt_0", 0,
         OPCOST_EVENT_KERNEL_OTHER},
        {"triton_red_fused_add_mean_0", 0, OPCOST_EVENT_KERNEL_OTHER},
        {"c10d::allgather_", OP, OPCOST_EVENT_HOST_API},
        {"Torch-Compiled Region: 0/0", 0, OPCOST_EVENT_HOST_API},
        {"## Call CompiledFxGraph f123 ##", 0, OPCOST_EVENT_HOST_API},
        {"", 0, OPCOST_EVENT_HOST_API},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const opcost_event_kind k =
            opcost_scope_kind(cases[i].name, cases[i].flags);
        C_EXPECT(k == cases[i].kind, "scope \"%s\" (flags %d): %s, expected %s",
                 cases[i].name, cases[i].flags, opcost_event_kind_name(k),
                 opcost_event_kind_name(cases[i].kind));
    }
    C_EXPECT(opcost_scope_kind(NULL, 0) == OPCOST_EVENT_HOST_API, "NULL name");
}

int main(void)
{
    differential();
    measured();
    scope_kinds();
    return c_report("test_attribution");
}
