/* `opcost run`: the ceiling probe, then every point (shape x path x
 * variant) verified and timed, interleaved across paths, then the results
 * written atomically and summarised. */
#ifndef OPCOST_RUN_H
#define OPCOST_RUN_H

#include "config.h"

/* Runs the plan as asked (opcost_config_parse), settled for the device
 * found. Returns the process exit status: 0 when every row was written
 * (rows may be skipped, wrong or error: the CSV says which), 1 on a fatal
 * error, 2 for bad input (--baseline, --device cuda without a GPU). */
int opcost_run(const opcost_plan *asked);

int opcost_run_main(int argc, char **argv);

#endif
