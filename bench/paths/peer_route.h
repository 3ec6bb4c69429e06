/* Shared by the peer paths (peer-vllm, peer-zentorch): a kernel a user
 * would pick instead of rowops', from its published package loaded by path
 * (bench/python/opcost_peers.py), timed as the functional op from the
 * point's own layout (the copies it needs are part of its call) in the
 * embedded interpreter, like eager-python; verified against the same
 * float64 reference (within OPCOST_PEER_TOL_SCALE times the contract's
 * tolerances; a peer returns no rstd). Where the peer
 * is not installed, does not load, or cannot run the point, the row is
 * skipped with the reason. */
#ifndef OPCOST_PEER_ROUTE_H
#define OPCOST_PEER_ROUTE_H

#include "python_route.h"

/* A peer is foreign code that may round less carefully than the contract
 * (vLLM truncates to bfloat16 where rowops rounds: 2.5 units of 2^-8 off
 * at N = 4096, the contract's tolerance 2.56 at most): it is wrong beyond
 * this many times the contract's tolerances. */
#define OPCOST_PEER_TOL_SCALE 4

int opcost_peer_prepare(opcost_path_run *r, char *why, size_t len);
/* The peer's outputs against the float64 reference within
 * OPCOST_PEER_TOL_SCALE times the tolerances (its rstd: none). */
int opcost_peer_verify(opcost_path_run *r, int set, char *why, size_t len);
/* The Python paths' note and how the peer was verified. */
void opcost_peer_annotate(opcost_path_run *r, char *note, size_t len);

/* The in-place forms' rows (rowops' and the peers'): at the fused op's
 * points only, as the row normalization has no in-place form. */
int opcost_fused_only(const opcost_case *c);

/* Defines a peer path as the functional op, one line per path file: its
 * ratio is against rowops' functional op from Python (eager-python), in
 * the same rounds. */
#define OPCOST_PEER_PATH(ident, path_name, text)                               \
    OPCOST_PEER_PATH_OF(ident, path_name, text, NULL, "eager-python", 0,       \
                        OPCOST_ON_CPU)
/* A peer on a GPU (or both devices), as the functional op. */
#define OPCOST_PEER_PATH_ON(ident, path_name, text, on)                        \
    OPCOST_PEER_PATH_OF(ident, path_name, text, NULL, "eager-python", 0, on)
/* A peer's in-place form: the fused op's points only, its ratio against
 * rowops' in-place op (eager-python-inplace). */
#define OPCOST_PEER_INPLACE_PATH(ident, path_name, text)                       \
    OPCOST_PEER_PATH_OF(ident, path_name, text, opcost_fused_only,             \
                        "eager-python-inplace", 1, OPCOST_ON_CPU)
/* The same with rows only where applies(c) (NULL: every point), paired
 * with the path named rowops_path, in place or not, on the devices on
 * (OPCOST_ON_*). */
#define OPCOST_PEER_PATH_OF(ident, path_name, text, applies_fn, rowops_path,   \
                            is_in_place, on)                                   \
    const opcost_path ident = {                                                \
        .name = path_name,                                                     \
        .description = text,                                                   \
        .devices = on,                                                         \
        .needs_torch = 1,                                                      \
        .peer = 1,                                                             \
        .applies = applies_fn,                                                 \
        .paired_with = rowops_path,                                            \
        .in_place = is_in_place,                                               \
        .prepare = opcost_peer_prepare,                                        \
        .run = opcost_python_run,                                              \
        .verify = opcost_peer_verify,                                          \
        .release = opcost_python_release,                                      \
        .compile_ms = opcost_python_compile_ms,                                \
        .annotate = opcost_peer_annotate,                                      \
    }

#endif
