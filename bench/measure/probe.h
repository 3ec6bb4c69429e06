/* The paired bandwidth probe: a member of every point's rounds that moves
 * the bytes one call of the op must move (its row tensors: x, and for the
 * fused op residual, read; out, and residual_out, written), on the point's
 * own input sets and output buffers, rotated as the paths rotate them. A
 * row's frac_of_peak is its bandwidth over the probe's measured in the same
 * rounds (bench/measure/point.c), so a slow moment of the host slows both.
 *
 * On the CPU the probe is STREAM's copy (rows mix) or add2 (fused mix) of
 * bench/ceiling/ceiling.c over the buffers' bytes, on PyTorch's thread pool
 * with the kernels' grain (the same threads and the same way of splitting a
 * call as the `kernel` path), with denormals flushed (the bytes are
 * bfloat16 or float32 values seen as doubles: no FP assist may slow it).
 * Two kinds, as the run's ceilings measured them: streaming (non-temporal)
 * stores for data out of every cache (cold points; the better kind at DRAM
 * on every host measured so far), ordinary stores for a warm point, which
 * stays in a cache level. On a GPU: device-to-device copies of the same
 * bytes on the current stream. */
#ifndef OPCOST_PROBE_H
#define OPCOST_PROBE_H

#include "path.h"

#include <stdint.h>

extern const opcost_path opcost_probe_streaming;
extern const opcost_path opcost_probe_plain;
/* The in-place rows' probe (the fused op on the CPU, paths with in_place):
 * its own copy of each set's x and residual, read and written back in
 * place with ordinary stores (ceiling.h's add2_in_place), rotated as the
 * in-place paths rotate theirs. An in-place call reads no line for
 * ownership and leaves its lines dirty for later write-back, which the
 * fused probe's writes to fresh outputs do not: its rows ran faster than
 * that probe (x1.12 of it, results/20261207T023446Z-vm.csv). */
extern const opcost_path opcost_probe_in_place;

/* The bytes one probe call moves on w (reads + writes); 0 when there is
 * nothing to move (a row smaller than 8 bytes). */
int64_t opcost_probe_bytes(const opcost_workload *w);

#endif
