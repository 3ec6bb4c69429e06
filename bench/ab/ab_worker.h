/* One side of `opcost ab`: a build's own opcost serving the coordinator
 * (bench/ab/ab_coordinator.h) over a socket: each point's block of shared
 * memory attached, each requested path and variant of this build prepared,
 * verified against the C double reference, calibrated and warmed up on
 * it, then one sample at a time on request (bench/ab/ab_wire.h). */
#ifndef OPCOST_AB_WORKER_H
#define OPCOST_AB_WORKER_H

#include "path.h"
#include "variant.h"

/* How this build names its paths and variants (its registry). */
typedef struct opcost_ab_names {
    const opcost_path *(*path)(const char *name);
    const opcost_variant *(*variant)(const char *name);
} opcost_ab_names;

/* Serves requests on sock until AB_QUIT or the coordinator goes away.
 * Returns the process exit status (0 after AB_QUIT). */
int opcost_ab_serve(int sock, const opcost_ab_names *names);

#endif
