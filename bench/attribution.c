#include "attribution.h"

#include <math.h>

static double clamp(double v, double hi)
{
    if (!(v > 0)) /* NAN or <= 0 */
        return 0;
    return v < hi ? v : hi;
}

opcost_attribution opcost_attribute_cpu(double median_us,
                                        double kernel_median_us,
                                        double conversion_us)
{
    opcost_attribution a = {NAN, NAN, NAN, NAN, NAN};
    if (!isfinite(median_us))
        return a;
    a.kernel_us = clamp(kernel_median_us, median_us);
    a.conversion_us = clamp(conversion_us, median_us - a.kernel_us);
    a.launch_us = 0;
    a.idle_us = 0;
    a.dispatch_us = median_us - a.kernel_us - a.conversion_us;
    return a;
}
