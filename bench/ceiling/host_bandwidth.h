/* The full DRAM bandwidth this machine showed in earlier runs: a run spent
 * wholly in the host's reduced-bandwidth state (bandwidth_state.h) sees
 * only that state and would call it full (Zen 5, 2026-12-05: one run's
 * probes read 57-59 GB/s from its first ceiling to its last, the next
 * run's 93-117). So each run remembers its full bandwidth, per machine
 * (/etc/machine-id, else the host name) and thread count, in
 * $OPCOST_CACHE/host-bandwidth.csv (default ~/.cache/opcost/), and the
 * next run starts from the best of the last OPCOST_HOST_BW_DAYS days. */
#ifndef OPCOST_HOST_BANDWIDTH_H
#define OPCOST_HOST_BANDWIDTH_H

/* How long a remembered figure counts. */
#define OPCOST_HOST_BW_DAYS 7

/* The best full DRAM bandwidth remembered for this machine at this many
 * threads within the window; 0 when none (or the file is unreadable). */
double opcost_host_bandwidth_recall(int threads);

/* Remembers gbps (finite and positive; else nothing) for this machine at
 * this many threads. Failing to write is not an error (a read-only home):
 * the next run then starts from its own ceilings. */
void opcost_host_bandwidth_remember(int threads, double gbps);

#endif
