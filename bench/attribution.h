/* CPU cost attribution of one row (README, "Attribution"): the median
 * split into kernel, conversion and dispatch microseconds that add up to
 * it exactly; launch and idle are zero on the CPU.
 *   kernel     = the `kernel` path's median on the same point (the rowops
 *                kernel alone on the layout it wants), at most the median;
 *   conversion = the median of the path's layout conversions timed alone,
 *                at most what remains;
 *   dispatch   = the remainder: dispatcher, allocation, eligibility, and
 *                the extra memory passes of strided or unfused execution. */
#ifndef OPCOST_ATTRIBUTION_H
#define OPCOST_ATTRIBUTION_H

typedef struct opcost_attribution {
    double kernel_us, conversion_us, launch_us, dispatch_us, idle_us;
} opcost_attribution;

/* kernel_median_us and conversion_us may be NAN (unknown / none: 0). */
opcost_attribution opcost_attribute_cpu(double median_us,
                                        double kernel_median_us,
                                        double conversion_us);

#endif
