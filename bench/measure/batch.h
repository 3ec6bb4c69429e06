/* Calls per sample. A sample times a batch of calls and divides by their
 * number, so whatever one sample costs once is spread over its calls. On
 * the CPU that is two clock reads. On a GPU it is the stream's fill: the
 * timer's events, the first launch's latency and the wait at the end, about
 * 19 us on an H200 (2026-12-04), where a small call pipelined costs 7. The
 * batch was ceil(target / one call with its wait), and one call with its
 * wait is that fill plus the call: at B = 64 it read 15-20 us, so a member
 * took 1 or 2 calls a sample by the noise of its calibration, and the one
 * that took 1 read 1.6x slower than the same kernel beside it, in every
 * part of its attribution. Here the call's cost is the slope between one
 * call and a pipelined batch, and the sample's fixed cost is left at
 * fill / target of a call (1 % at a GPU's default target of 2 ms). */
#ifndef OPCOST_BATCH_H
#define OPCOST_BATCH_H

/* A batch has at most this many calls. */
#define OPCOST_BATCH_MAX 1000

/* The default --sample-us: on the CPU a sample's fixed cost is two clock
 * reads; on a GPU about 19 us of fill, which 2 ms holds to 1 %. */
#define OPCOST_SAMPLE_US_CPU 20.0
#define OPCOST_SAMPLE_US_GPU 2000.0

/* The per-call cost from a calibration: one_us, the best time of one call
 * with its wait; pipelined_us, the time of pipelined_calls calls back to
 * back with one wait at the end (pipelined_calls < 2: none was taken, the
 * CPU's case). The slope (pipelined_us - one_us) / (pipelined_calls - 1)
 * where it is positive, else the pipelined mean. */
double opcost_batch_call_us(double one_us, double pipelined_us,
                            int pipelined_calls);

/* Calls per sample: ceil(target_us / call_us), 1 to OPCOST_BATCH_MAX
 * (OPCOST_BATCH_MAX for a call that took no measurable time). */
int opcost_batch_calls(double target_us, double call_us);

#endif
