/* CPU attribution: the parts add up to the median (to rounding), none is
 * negative, and each is clamped as bench/attribution.h states. */
#include "attribution.h"
#include "c_samples.h"

#include <math.h>
#include <stdio.h>

static void expect_sum(double median, double kernel, double conv)
{
    const opcost_attribution a = opcost_attribute_cpu(median, kernel, conv);
    const double sum =
        a.kernel_us + a.conversion_us + a.launch_us + a.dispatch_us + a.idle_us;
    /* exact up to the rounding of three additions */
    C_EXPECT(fabs(sum - median) <= 4e-16 * median * 4,
             "median %g kernel %g conv %g: parts sum to %.17g", median, kernel,
             conv, sum);
    C_EXPECT(a.kernel_us >= 0 && a.conversion_us >= 0 && a.dispatch_us >= 0,
             "median %g: a negative part", median);
    C_EXPECT(a.launch_us == 0 && a.idle_us == 0, "CPU: launch and idle zero");
}

int main(void)
{
    /* the ordinary case: kernel and conversion inside the median */
    opcost_attribution a = opcost_attribute_cpu(10.0, 4.0, 3.0);
    C_EXPECT(a.kernel_us == 4.0 && a.conversion_us == 3.0 &&
                 a.dispatch_us == 3.0,
             "10 = 4 + 3 + 3, got %g %g %g", a.kernel_us, a.conversion_us,
             a.dispatch_us);
    /* the kernel path itself: all kernel */
    a = opcost_attribute_cpu(7.5, 7.5, NAN);
    C_EXPECT(a.kernel_us == 7.5 && a.conversion_us == 0 && a.dispatch_us == 0,
             "kernel path: all kernel");
    /* noise: the kernel path's median above this path's: clamped */
    a = opcost_attribute_cpu(5.0, 6.0, 1.0);
    C_EXPECT(a.kernel_us == 5.0 && a.conversion_us == 0 && a.dispatch_us == 0,
             "kernel clamped to the median, got %g %g %g", a.kernel_us,
             a.conversion_us, a.dispatch_us);
    a = opcost_attribute_cpu(5.0, 2.0, 4.0);
    C_EXPECT(a.conversion_us == 3.0 && a.dispatch_us == 0,
             "conversion clamped to the remainder, got %g", a.conversion_us);
    /* unknown kernel or conversion time counts as zero */
    a = opcost_attribute_cpu(5.0, NAN, NAN);
    C_EXPECT(a.kernel_us == 0 && a.dispatch_us == 5.0, "unknown parts");
    /* no median: nothing to attribute */
    a = opcost_attribute_cpu(NAN, 1.0, 1.0);
    C_EXPECT(isnan(a.kernel_us) && isnan(a.dispatch_us), "no median");
    const double medians[] = {0.1, 1.0, 3.3, 17.25, 1234.5678, 1e6};
    for (int i = 0; i < 6; ++i)
        for (double k = 0; k <= 2.0; k += 0.25)
            for (double c = 0; c <= 1.0; c += 0.125)
                expect_sum(medians[i], k * medians[i], c * medians[i]);
    return c_report("test_attribution");
}
