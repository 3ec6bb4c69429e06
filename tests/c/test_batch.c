/* Calls per sample (bench/measure/batch.h), on a simulated device whose
 * sample of k calls takes fill + k * call: the per-call figure a sample
 * gives, (fill + k * call) / k, within 1 + fill / target of the call
 * whatever the call's cost and the calibration's noise; the batch the old
 * rule took (ceil(target / one call with its wait)) was 1 or 2 at an H200's
 * B = 64 and read 1.6x apart. No timing. */
#include "batch.h"
#include "c_samples.h"

#include <math.h>

/* The per-call figure of a sample of k calls on the simulated device. */
static double per_call(double fill, double call, int k)
{
    return (fill + k * call) / k;
}

/* What the calibration reads: one call with its wait (plus noise), and 16
 * pipelined calls with one wait. */
static int batch_for(double target, double fill, double call, double noise)
{
    const double one = fill + call + noise;
    const double sixteen = fill + 16 * call;
    return opcost_batch_calls(target, opcost_batch_call_us(one, sixteen, 16));
}

static void test_gpu_fill_spread_thin(void)
{
    const double fills[] = {5, 19, 40};
    const double calls[] = {1.5, 7.4, 50, 300, 1800};
    const double noises[] = {-2, 0, 3, 8};
    for (int f = 0; f < 3; ++f)
        for (int c = 0; c < 5; ++c)
            for (int e = 0; e < 4; ++e) {
                const int k = batch_for(OPCOST_SAMPLE_US_GPU, fills[f],
                                        calls[c], noises[e]);
                const double bias =
                    per_call(fills[f], calls[c], k) / calls[c] - 1;
                /* fill / target; a call longer than the target is one
                 * a sample (fill / call); a batch is at most
                 * OPCOST_BATCH_MAX calls long */
                const double span = fmin(fmax(OPCOST_SAMPLE_US_GPU, calls[c]),
                                         OPCOST_BATCH_MAX * calls[c]);
                const double bound = fills[f] / span * 1.1;
                C_EXPECT(bias >= 0 && bias <= bound,
                         "fill %g call %g noise %g: batch %d reads %.4f of "
                         "the call (at most %.4f)",
                         fills[f], calls[c], noises[e], k, 1 + bias, 1 + bound);
            }
}

/* The H200's B = 64 (fill 19.3 us, call 7.4): one call with its wait read
 * 17-27 us, and the same kernel beside itself must read alike. */
static void test_same_call_same_figure(void)
{
    double lo = INFINITY, hi = 0;
    for (double noise = -9; noise <= 1; noise += 0.5) {
        const int k = batch_for(OPCOST_SAMPLE_US_GPU, 19.3, 7.4, noise);
        const double us = per_call(19.3, 7.4, k);
        lo = fmin(lo, us);
        hi = fmax(hi, us);
    }
    C_EXPECT(hi / lo - 1 < 0.005,
             "the same call read %.3f to %.3f us a call over the "
             "calibration's noise",
             lo, hi);
    /* what the old rule did with the CPU's target (the default then) */
    const double old1 = per_call(19.3, 7.4, opcost_batch_calls(20, 26.7));
    const double old2 = per_call(19.3, 7.4, opcost_batch_calls(20, 17.0));
    C_EXPECT(old1 / old2 > 1.5,
             "the old rule's two batches read %.2f and %.2f (the bug this "
             "guards against)",
             old1, old2);
}

static void test_cpu_and_edges(void)
{
    /* no pipelined batch (the CPU): the one call is the call */
    C_CHECK(opcost_batch_call_us(7.0, 0, 0) == 7.0);
    C_CHECK(opcost_batch_calls(OPCOST_SAMPLE_US_CPU, 7.0) == 3);
    /* a pipelined batch no longer than one call (noise): its mean */
    C_CHECK(opcost_batch_call_us(30.0, 24.0, 16) == 1.5);
    /* clamps: a call longer than the target is one a sample; a call too
     * short to measure takes the most */
    C_CHECK(opcost_batch_calls(20, 500) == 1);
    C_CHECK(opcost_batch_calls(2000, 0.001) == OPCOST_BATCH_MAX);
    C_CHECK(opcost_batch_calls(2000, 0) == OPCOST_BATCH_MAX);
    C_CHECK(opcost_batch_calls(2000, NAN) == OPCOST_BATCH_MAX);
}

int main(void)
{
    test_gpu_fill_spread_thin();
    test_same_call_same_figure();
    test_cpu_and_edges();
    return c_report("test_batch");
}
