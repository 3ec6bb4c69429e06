/* A peer path runs foreign code, which may leak: zentorch 2.13 under
 * torch 2.15 leaks two 32-byte objects a call (its stable-ABI boxer,
 * torch::stable::detail::boxer_impl, for the Tensor& arguments; 96 B of
 * heap a call by mallinfo2). Each is carved from whatever large block
 * another path has just freed, and glibc's heap, serving allocations up
 * to 32 MiB once its mmap threshold has risen, cannot reuse the split
 * block for the next large allocation: a run with reference-python
 * beside it grew by ~200 MB/s (19 GB in 80 s at bfloat16 B = 3152; 1.5
 * with vLLM instead). The pages stay resident after the point, so a
 * point's end hands the allocator's free pages back
 * (opcost_release_freed_memory: make bench's peak from 18.7 to 9.2 GB, no
 * peer row skipped where 130 were). A peer path is still skipped at a
 * point, with the reason, where the process holds more than
 * OPCOST_PEER_HELD_MAX of the machine's memory or the machine has less
 * than the peer's need and a tenth of its memory available: the run
 * finishes instead of being killed for memory. */
#ifndef OPCOST_PEER_MEMORY_H
#define OPCOST_PEER_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The share of the machine's memory past which the process runs no peer
 * (OPCOST_PEER_MEMORY_HELD: another share in (0, 1], for tests). */
#define OPCOST_PEER_HELD_MAX 0.7

/* The process's resident bytes now (/proc/self/statm); -1 if unknown. */
int64_t opcost_rss_bytes(void);

/* The machine's available bytes now (/proc/meminfo's MemAvailable); -1
 * if unknown. */
int64_t opcost_available_bytes(void);

/* 1, with the reason in why, when the process holds more than
 * OPCOST_PEER_HELD_MAX (or OPCOST_PEER_MEMORY_HELD's share) of the
 * machine's memory, or the machine has less
 * than 2 * inputs (the peer's copies of a point whose sets' inputs are
 * that many bytes) plus a tenth of its memory available
 * (OPCOST_PEER_MEMORY_RESERVE: another share in [0, 1], for tests; 1
 * refuses always): a peer path is then skipped at the point. 0 where the
 * memory cannot be read. */
int opcost_peer_memory_refused(size_t inputs, char *why, size_t len);

/* Hands the pages the allocator holds free back to the system (glibc:
 * malloc_trim, every arena), outside any timing: a point's end calls it,
 * so a peer's leak fragments the heap for one point, not the run. */
void opcost_release_freed_memory(void);

#endif
