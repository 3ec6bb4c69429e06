/* A peer path runs foreign code, which may keep memory it is given:
 * zentorch 2.13 under torch 2.15 keeps every tensor it is handed, so the
 * peers take their buffers from a few blocks the run keeps
 * (bench/python/opcost_slab.py) and a point's peer adds at most twice its
 * sets' inputs. The process still grows with zentorch loaded beside the
 * paths that allocate (reference-python: a cold run of four points at
 * B = 925-3152 held 3-7 GB with both, 1.6 without zentorch; not found
 * why). So a peer path is skipped at a point, with the reason, where the
 * process holds more than OPCOST_PEER_HELD_MAX of the machine's memory or
 * the machine has less than the peer's need and a tenth of its memory
 * available: the run finishes instead of being killed for memory. */
#ifndef OPCOST_PEER_MEMORY_H
#define OPCOST_PEER_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The share of the machine's memory past which the process runs no peer. */
#define OPCOST_PEER_HELD_MAX 0.7

/* The process's resident bytes now (/proc/self/statm); -1 if unknown. */
int64_t opcost_rss_bytes(void);

/* The machine's available bytes now (/proc/meminfo's MemAvailable); -1
 * if unknown. */
int64_t opcost_available_bytes(void);

/* 1, with the reason in why, when the process holds more than
 * OPCOST_PEER_HELD_MAX of the machine's memory, or the machine has less
 * than 2 * inputs (the peer's copies of a point whose sets' inputs are
 * that many bytes) plus a tenth of its memory available
 * (OPCOST_PEER_MEMORY_RESERVE: another share in [0, 1], for tests; 1
 * refuses always): a peer path is then skipped at the point. 0 where the
 * memory cannot be read. */
int opcost_peer_memory_refused(size_t inputs, char *why, size_t len);

#endif
