/* Each intra-op thread on a CPU of its own, the same CPU in every process
 * of a comparison. On a 2-vCPU VM the two vCPUs run at different speeds
 * for seconds at a time (a busy sibling on the host's core): two members
 * whose calls ran on different vCPUs differed by that, and since the
 * scheduler moves a thread rarely, their per-round ratios were correlated
 * over hundreds of rounds (lag-1 autocorrelation up to 0.6 between two
 * processes of one build; pinned, below 0.1, and the intervals 3-10x
 * narrower on a Zen 5 host, docs/measurement.md). Thread i goes to the
 * i-th CPU the process may run on, so the coordinator and both sides of
 * opcost ab place their threads alike. Torch-free: the caller passes the
 * parallel loop (the bridge's at::parallel_for; a test's threads). */
#ifndef OPCOST_AFFINITY_H
#define OPCOST_AFFINITY_H

#include <stddef.h>
#include <stdint.h>

/* Runs fn(ctx, begin, end) over [0, n) in chunks of at least grain on the
 * thread pool, as rowops_bridge_parallel_for does. */
typedef void (*opcost_parallel_for)(int64_t n, int64_t grain,
                                    void (*fn)(void *ctx, int64_t begin,
                                               int64_t end),
                                    void *ctx);

/* The CPUs this process may run on (as it started, before any thread was
 * pinned), in increasing order, at most max; their count (0 where the
 * affinity cannot be read). */
int opcost_affinity_cpus(int *cpus, int max);

/* The calling thread back on all of them (a child about to exec, which
 * would otherwise inherit its parent thread's one CPU). */
void opcost_affinity_reset(void);

/* Pins thread i of a pool of `threads` to the i-th allowed CPU through pf
 * (every thread must receive exactly one index, each a thread of its
 * own). Returns the number of threads pinned, with desc saying where
 * ("2 threads pinned to CPUs 0,1"), or 0 with desc saying why not (more
 * threads than CPUs: the scheduler places them), or -1 with desc when a
 * thread could not be pinned or the pool did not give each index its own
 * thread (threads pinned so far stay pinned). */
int opcost_pin_threads(int threads, opcost_parallel_for pf, char *desc,
                       size_t len);

#endif
