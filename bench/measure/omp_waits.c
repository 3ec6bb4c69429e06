/* How opcost ab's OpenMP threads wait (omp_waits.h). */
#define _DEFAULT_SOURCE /* realpath */
#include "omp_waits.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void opcost_omp_waits_set(void)
{
    /* an idle process's threads sleep at once: spinning (GOMP's default,
     * milliseconds) they would take one of the cores another process's
     * sample runs on (on 2 vCPUs it widened the intervals of the large
     * points 3-5x) */
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    /* ... but not between the calls of one sample: there they spin
     * ~30 us (GOMP_SPINCOUNT overrides PASSIVE's 0), as in opcost run
     * where GOMP's default spins milliseconds. Asleep, every call of a
     * call split over threads paid a wake-up: bfloat16 B = 10 took 35-37
     * us a call in opcost ab against 9 in opcost run (9-10 with this), and
     * a kernel's change was diluted to a third there */
    setenv("GOMP_SPINCOUNT", "3000", 0);
}

static void describe(char *note, size_t len, const char *how)
{
    const char *policy = getenv("OMP_WAIT_POLICY");
    const char *spin = getenv("GOMP_SPINCOUNT");
    snprintf(note, len,
             "coordinator's OpenMP threads: OMP_WAIT_POLICY=%s "
             "GOMP_SPINCOUNT=%s (%s)",
             policy ? policy : "(unset)", spin ? spin : "(unset)", how);
}

void opcost_omp_waits_coordinator(int argc, char **argv, char *note, size_t len)
{
    if (getenv("OPCOST_AB_WAITS_SET")) {
        describe(note, len, "set by opcost ab");
        return;
    }
    if (getenv("OMP_WAIT_POLICY") || getenv("GOMP_SPINCOUNT")) {
        describe(note, len, "as the environment says");
        return;
    }
    char self[PATH_MAX];
    char **args = calloc((size_t)argc + 2, sizeof *args);
    if (!args || !realpath("/proc/self/exe", self)) {
        free(args);
        describe(note, len, "GOMP's default: could not execute itself again");
        return;
    }
    opcost_omp_waits_set();
    setenv("OPCOST_AB_WAITS_SET", "1", 1); /* and no third time */
    args[0] = self;
    for (int i = 0; i < argc; ++i)
        args[i + 1] = argv[i];
    fflush(NULL);
    execv(self, args);
    /* still here: exec failed, and this libgomp spins as it loaded */
    const int e = errno;
    free(args);
    char how[PATH_MAX + 160];
    snprintf(how, sizeof how,
             "set after libgomp loaded, so GOMP's default holds: exec %.*s: "
             "%s",
             PATH_MAX, self, strerror(e));
    describe(note, len, how);
}
