/* `opcost run`: the ceiling probe, then every point (shape x path x
 * variant) verified and timed, interleaved across paths, then the results
 * written atomically and summarised. */
#ifndef OPCOST_RUN_H
#define OPCOST_RUN_H

#include "config.h"

/* Returns the process exit status: 0 when every row was written (rows may
 * be skipped, wrong or error: the CSV says which), 1 on a fatal error. */
int opcost_run(const opcost_plan *cfg);

int opcost_run_main(int argc, char **argv);

#endif
