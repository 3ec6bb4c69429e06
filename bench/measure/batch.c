#include "batch.h"

#include <math.h>

double opcost_batch_call_us(double one_us, double pipelined_us,
                            int pipelined_calls)
{
    if (pipelined_calls < 2 || !(pipelined_us > 0))
        return one_us;
    const double slope = (pipelined_us - one_us) / (pipelined_calls - 1);
    /* noise can make the batch of n read no longer than one call: the
     * batch's mean is then an upper bound, and a smaller batch is safe */
    return slope > 0 ? slope : pipelined_us / pipelined_calls;
}

int opcost_batch_calls(double target_us, double call_us)
{
    if (!(call_us > 0))
        return OPCOST_BATCH_MAX;
    const double b = ceil(target_us / call_us);
    return b < 1 ? 1 : b > OPCOST_BATCH_MAX ? OPCOST_BATCH_MAX : (int)b;
}
