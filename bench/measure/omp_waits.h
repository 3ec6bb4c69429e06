/* How the OpenMP threads of opcost ab's processes wait. On 2 vCPUs an
 * idle process's threads must not spin on the cores another process's
 * sample runs on: GOMP's default spins milliseconds after every parallel
 * region. The workers (each side's build) and the coordinator (which runs
 * the bandwidth probe of every round on the op's threads, through the
 * bridge's at::parallel_for) both wait passively, but spin ~30 us between
 * the calls of one sample. libgomp reads these settings when it loads,
 * before main: a worker gets them from its parent before exec, the
 * coordinator by executing itself again with them. */
#ifndef OPCOST_OMP_WAITS_H
#define OPCOST_OMP_WAITS_H

#include <stddef.h>

/* Sets OMP_WAIT_POLICY=PASSIVE and GOMP_SPINCOUNT=3000 in the environment
 * where it names neither (what the user set is kept). */
void opcost_omp_waits_set(void);

/* The coordinator: where the environment names neither setting, sets them
 * and executes this program again as `opcost ab ARGV...` (argv[0] is "ab",
 * argv[argc] NULL); returns only when it did not (the settings were there
 * already, from the user or the first execution, or exec failed: note
 * then says why). note always says how the threads wait. */
void opcost_omp_waits_coordinator(int argc, char **argv, char *note,
                                  size_t len);

#endif
