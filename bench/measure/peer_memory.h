/* A peer path runs foreign code, which may keep memory it is given:
 * zentorch 2.13 under torch 2.15 keeps every input tensor it is handed
 * (a cold llama-3.1-8b-conv run with its in-place form grew to 7 GB, one
 * with a fresh copy per call to 24 GB and was killed for memory). Past
 * 70 % of the machine's memory the peer paths are skipped from there on,
 * with the reason, so the run finishes instead of being killed. */
#ifndef OPCOST_PEER_MEMORY_H
#define OPCOST_PEER_MEMORY_H

#include <stddef.h>
#include <stdint.h>

/* The process's resident bytes now (/proc/self/statm); -1 if unknown. */
int64_t opcost_rss_bytes(void);

/* 1, with the reason in why, when the process holds more than 70 % of
 * the machine's memory (OPCOST_PEER_MEMORY_FRACTION: another share, for
 * tests): a peer path is then skipped. */
int opcost_peer_memory_refused(char *why, size_t len);

#endif
