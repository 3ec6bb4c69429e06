/* Cost attribution of one row (docs/measurement.md, "Attribution"): the path's
 * median split into parts that add up to it exactly.
 *
 * Measured (opcost_attribute_events): in an attribution pass separate from
 * the timing run, a tracer records each call's intervals
 * (bench/tracers/events.h); every instant of a call's host window gets exactly
 * one label, so no part holds another's time:
 *   1. a device record is running (GPU): ours -> kernel_us, a conversion
 *      (memcpy, memset) -> conversion_us, any other -> other_kernel_us, in
 *      that order of precedence when streams overlap;
 *   2. else the innermost host record: ours -> kernel_us, another compute
 *      kernel -> other_kernel_us, a conversion -> conversion_us, a launch
 *      API call -> launch_us (the device idle while the host launches), a
 *      synchronization -> idle_us (the device idle while the host waits);
 *      a framework range, an API call or an allocation -> dispatch_us;
 *   3. no record: dispatch_us (dispatcher, Python, guards, wrapper code).
 * The tracer's own cost (each record's cost_ns) is taken out of the
 * dispatch part, where the tracer spends it, so the parts of a call sum to
 * its window less that cost. The summed parts of the traced calls give
 * each part's share, applied to the untraced median (opcost_parts_apply;
 * calls of more than twice the median length, interrupted, left out).
 *
 * Differential (opcost_attribute_differential), where no tracer ran:
 *   kernel     = the `kernel` path's median on the same point, at most the
 *                median;
 *   conversion = the median of the path's conversions timed alone, at most
 *                what remains;
 *   dispatch   = the remainder, which then also holds unfused compute;
 *   other_kernel is not measured (NAN); launch and idle are zero. */
#ifndef OPCOST_ATTRIBUTION_H
#define OPCOST_ATTRIBUTION_H

#include "events.h"
#include "row.h" /* opcost_attribution_source */

#include <stddef.h>

typedef struct opcost_parts {
    double kernel_us, other_kernel_us, conversion_us, launch_us, dispatch_us,
        idle_us;
} opcost_parts;

/* The sum of the parts, NAN parts counted as zero. */
double opcost_parts_sum(const opcost_parts *p);

/* kernel_median_us and conversion_us may be NAN (unknown / none: 0). */
opcost_parts opcost_attribute_differential(double median_us,
                                           double kernel_median_us,
                                           double conversion_us);

/* Parts of each call: per_call[i] covers win[i] (its parts sum to the
 * window's length less its records' cost_ns, never below the rest). Events may
 * be of any call and in any order; an event with call = i belongs to call i
 * alone, one with call = -1 to every window it overlaps; events are clipped to
 * the window. A dropped call's parts are NAN. Returns the number of calls
 * attributed, or -1 if memory ran out. */
long opcost_attribute_events(const opcost_event *ev, size_t nev,
                             const opcost_call_window *win, size_t ncalls,
                             opcost_parts *per_call);

/* The shares of the parts summed over the attributed (non-NAN) calls,
 * applied to median_us: parts that add up to it. A call longer than twice
 * the attributed calls' median length (interrupted) is left out. All NAN
 * when no call was attributed or the calls took no time. */
opcost_parts opcost_parts_apply(const opcost_parts *per_call, size_t ncalls,
                                double median_us);

#endif
