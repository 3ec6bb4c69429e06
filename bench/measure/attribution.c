#include "attribution.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>

static double nz(double v)
{
    return isnan(v) ? 0 : v;
}

double opcost_parts_sum(const opcost_parts *p)
{
    return nz(p->kernel_us) + nz(p->other_kernel_us) + nz(p->conversion_us) +
           nz(p->launch_us) + nz(p->dispatch_us) + nz(p->idle_us);
}

static double clamp(double v, double hi)
{
    if (!(v > 0)) /* NAN or <= 0 */
        return 0;
    return v < hi ? v : hi;
}

opcost_parts opcost_attribute_differential(double median_us,
                                           double kernel_median_us,
                                           double conversion_us)
{
    opcost_parts a = {NAN, NAN, NAN, NAN, NAN, NAN};
    if (!isfinite(median_us))
        return a;
    a.kernel_us = clamp(kernel_median_us, median_us);
    a.conversion_us = clamp(conversion_us, median_us - a.kernel_us);
    a.launch_us = 0;
    a.idle_us = 0;
    a.dispatch_us = median_us - a.kernel_us - a.conversion_us;
    return a;
}

/* ---- measured attribution */

/* The part an instant goes to. */
typedef enum part {
    P_KERNEL,
    P_OTHER,
    P_CONV,
    P_LAUNCH,
    P_DISPATCH,
    P_IDLE
} part;

static part host_part(opcost_event_kind k)
{
    switch (k) {
    case OPCOST_EVENT_KERNEL_OURS: return P_KERNEL;
    case OPCOST_EVENT_KERNEL_OTHER: return P_OTHER;
    case OPCOST_EVENT_CONVERSION: return P_CONV;
    case OPCOST_EVENT_LAUNCH: return P_LAUNCH;
    case OPCOST_EVENT_SYNC: return P_IDLE;
    default: return P_DISPATCH;
    }
}

/* Device records: lower is stronger where streams overlap. */
static int device_rank(opcost_event_kind k)
{
    return k == OPCOST_EVENT_KERNEL_OURS  ? 0
           : k == OPCOST_EVENT_CONVERSION ? 1
                                          : 2;
}

static part device_part(int rank)
{
    return rank == 0 ? P_KERNEL : rank == 1 ? P_CONV : P_OTHER;
}

typedef struct span {
    int64_t start, end;
    const opcost_event *e;
} span;

static int by_start(const void *a, const void *b)
{
    const span *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    /* same start: the longer first, so the inner one is seen last */
    return x->end > y->end ? -1 : x->end < y->end;
}

static int by_value(const void *a, const void *b)
{
    const int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* True when a is nested inside b as the innermost-record rule reads it:
 * started later, or at the same time and ends first. */
static int inner_than(const span *a, const span *b)
{
    return a->start > b->start || (a->start == b->start && a->end < b->end);
}

/* One window: its spans (clipped, non-empty), sorted by start. */
static void attribute_window(span *s, size_t n, int64_t ws, int64_t we,
                             int64_t *bounds, size_t *active, opcost_parts *out)
{
    double ns[6] = {0}, cost = 0;
    size_t nb = 0;
    bounds[nb++] = ws;
    bounds[nb++] = we;
    for (size_t i = 0; i < n; ++i) {
        bounds[nb++] = s[i].start;
        bounds[nb++] = s[i].end;
        cost += (double)s[i].e->cost_ns;
    }
    qsort(bounds, nb, sizeof *bounds, by_value);
    size_t next = 0, nactive = 0;
    for (size_t b = 0; b + 1 < nb; ++b) {
        const int64_t a = bounds[b], z = bounds[b + 1];
        if (z <= a)
            continue;
        /* spans that started by a join; those that ended by a leave */
        while (next < n && s[next].start <= a)
            active[nactive++] = next++;
        size_t keep = 0;
        for (size_t k = 0; k < nactive; ++k)
            if (s[active[k]].end > a)
                active[keep++] = active[k];
        nactive = keep;
        int dev = 3;
        const span *host = NULL;
        for (size_t k = 0; k < nactive; ++k) {
            const span *x = &s[active[k]];
            if (x->e->on_device) {
                const int r = device_rank(x->e->kind);
                dev = r < dev ? r : dev;
            } else if (!host || inner_than(x, host)) {
                host = x;
            }
        }
        const part p = dev < 3 ? device_part(dev)
                       : host  ? host_part(host->e->kind)
                               : P_DISPATCH;
        ns[p] += (double)(z - a);
    }
    out->kernel_us = ns[P_KERNEL] / 1e3;
    out->other_kernel_us = ns[P_OTHER] / 1e3;
    out->conversion_us = ns[P_CONV] / 1e3;
    out->launch_us = ns[P_LAUNCH] / 1e3;
    ns[P_DISPATCH] = ns[P_DISPATCH] > cost ? ns[P_DISPATCH] - cost : 0;
    out->dispatch_us = ns[P_DISPATCH] / 1e3;
    out->idle_us = ns[P_IDLE] / 1e3;
}

long opcost_attribute_events(const opcost_event *ev, size_t nev,
                             const opcost_call_window *win, size_t ncalls,
                             opcost_parts *per_call)
{
    span *s = malloc((nev ? nev : 1) * sizeof *s);
    int64_t *bounds = malloc((2 * nev + 2) * sizeof *bounds);
    size_t *active = malloc((nev ? nev : 1) * sizeof *active);
    if (!s || !bounds || !active) {
        free(s);
        free(bounds);
        free(active);
        return -1;
    }
    long attributed = 0;
    for (size_t c = 0; c < ncalls; ++c) {
        const int64_t ws = win[c].start_ns, we = win[c].end_ns;
        if (win[c].dropped || we < ws) {
            per_call[c] = (opcost_parts){NAN, NAN, NAN, NAN, NAN, NAN};
            continue;
        }
        size_t n = 0;
        for (size_t i = 0; i < nev; ++i) {
            const opcost_event *e = &ev[i];
            if (e->call >= 0 ? (size_t)e->call != c
                             : e->end_ns <= ws || e->start_ns >= we)
                continue;
            const int64_t a = e->start_ns > ws ? e->start_ns : ws;
            const int64_t z = e->end_ns < we ? e->end_ns : we;
            if (z > a)
                s[n++] = (span){a, z, e};
        }
        qsort(s, n, sizeof *s, by_start);
        attribute_window(s, n, ws, we, bounds, active, &per_call[c]);
        ++attributed;
    }
    free(s);
    free(bounds);
    free(active);
    return attributed;
}

opcost_parts opcost_parts_apply(const opcost_parts *per_call, size_t ncalls,
                                double median_us)
{
    /* A call the OS took the CPU from holds the time slice it lost in
     * whichever part it was in (under load, one such call among hundreds
     * of 2 us made the kernel part 2.6 times its size): calls longer than
     * twice the attributed calls' median length are left out. */
    double bound = INFINITY;
    double *len = malloc((ncalls ? ncalls : 1) * sizeof *len);
    if (len) {
        size_t n = 0;
        for (size_t c = 0; c < ncalls; ++c)
            if (!isnan(per_call[c].kernel_us))
                len[n++] = opcost_parts_sum(&per_call[c]);
        if (n)
            bound = 2 * opcost_median_inplace(len, n);
        free(len);
    }
    opcost_parts sum = {0, 0, 0, 0, 0, 0};
    for (size_t c = 0; c < ncalls; ++c) {
        const opcost_parts *p = &per_call[c];
        if (isnan(p->kernel_us) || opcost_parts_sum(p) > bound)
            continue;
        sum.kernel_us += p->kernel_us;
        sum.other_kernel_us += p->other_kernel_us;
        sum.conversion_us += p->conversion_us;
        sum.launch_us += p->launch_us;
        sum.dispatch_us += p->dispatch_us;
        sum.idle_us += p->idle_us;
    }
    const double total = opcost_parts_sum(&sum);
    if (!(total > 0) || !isfinite(median_us))
        return (opcost_parts){NAN, NAN, NAN, NAN, NAN, NAN};
    const double k = median_us / total;
    opcost_parts a = {sum.kernel_us * k,     sum.other_kernel_us * k,
                      sum.conversion_us * k, sum.launch_us * k,
                      sum.dispatch_us * k,   sum.idle_us * k};
    /* the largest part takes the rounding, so the sum is the median */
    double *parts[] = {&a.kernel_us, &a.other_kernel_us, &a.conversion_us,
                       &a.launch_us, &a.dispatch_us,     &a.idle_us};
    double *big = parts[0];
    for (int i = 1; i < 6; ++i)
        big = *parts[i] > *big ? parts[i] : big;
    double rest = 0;
    for (int i = 0; i < 6; ++i)
        rest += parts[i] == big ? 0 : *parts[i];
    *big = median_us - rest;
    return a;
}
