/* opcost ab's workers: each side's processes started, greeted and
 * stopped, every wait on them bounded, and what each loaded read back
 * (ab_sides.c); the points run over them in ab_coordinator.c. */
#ifndef OPCOST_AB_SIDES_H
#define OPCOST_AB_SIDES_H

#include "ab_contrast.h"
#include "ab_library.h"
#include "plan.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* workers[2 p + AB_BASE] and workers[2 p + AB_NEW]: process p of a side */
enum { AB_BASE = 0, AB_NEW = 1 };

/* Deadlines: how long the coordinator waits for each reply before
 * it kills the worker's process group, times ctx->deadline_scale. A
 * worker's hello loads torch (seconds; tens on a loaded host); a point's
 * opening verifies, calibrates and warms up (compiles, for the compiled
 * paths) each member; a sample is its calls, a multiple of them beside a
 * margin. */
#define AB_DEADLINE_HELLO_S 120.0
#define AB_DEADLINE_OPEN_S 120.0
#define AB_DEADLINE_OPEN_MEMBER_S 60.0
#define AB_DEADLINE_SAMPLE_S 10.0
#define AB_DEADLINE_SAMPLE_MULTIPLE 100.0
#define AB_DEADLINE_REPLY_S 30.0 /* errors, close */
#define AB_DEADLINE_QUIT_S 5.0   /* a quit worker's exit */
/* after a SIGINT or SIGTERM: a worker's reply is waited for this long at
 * most, scaled or not (the run ends within it whatever a worker does) */
#define AB_DEADLINE_INTERRUPT_GRACE_S 3.0

/* A worker: one process of a side. */
typedef struct opcost_ab_side {
    const char *name;   /* "base" or "new" */
    const char *opcost; /* the build's opcost executable */
    char places[4096];  /* OMP_PLACES of its threads; "": not pinned */
    /* set by opcost_ab_start */
    pid_t pid;
    int sock;
    int alive;
    int protocol; /* the newest its worker speaks (hello's reply) */
    char git_sha[64], torch_version[64];
    /* the worker is gone and reaped (its process group killed): why, as
     * said on the console */
    int reaped;
    char why[512];
    /* the rowops library its loader mapped (its /proc/PID/maps after the
     * hello), its size and FNV-1a 64 hash; lib[0] == '\0': none found */
    ab_library lib;
} opcost_ab_side;

/* An A/B run: its workers, each side `processes` of them (4 by default
 * in opcost ab: a process's own placement in memory moves its speed by a
 * few per cent for its whole life, so a side of one process could not
 * tell that from a change; with several, both sides' means average it and
 * the processes' contrasts, new's less base's of the same index, measure
 * it: opcost_members_cross_contrasts, opcost_paired_excess_spread). ctx
 * is owned by the caller and must outlive the run. */
typedef struct opcost_ab_ctx {
    /* workers[2 p] is process p of base, workers[2 p + 1] of new; set
     * name and opcost of each before opcost_ab_start */
    opcost_ab_side workers[2 * OPCOST_AB_MAX_PROCESSES];
    int processes;           /* a side: 1 .. OPCOST_AB_MAX_PROCESSES */
    double threshold, alpha; /* the verdicts' band and significance */
    int failed;              /* a side went away: the comparison is not whole */
    char why[512];
    /* every wait on a worker is bounded: its margins times this
     * (OPCOST_AB_DEADLINE_SCALE, for tests; 1 by default) */
    double deadline_scale;
    /* keep LD_LIBRARY_PATH, LD_PRELOAD and PYTHONPATH for the workers
     * (--keep-loader-env); removed by default, each side loading its own
     * build's libraries */
    int keep_loader_env;
    /* set during the run */
    opcost_ab_contrast *contrasts;
    size_t ncontrasts, capcontrasts;
} opcost_ab_ctx;

/* Sets ctx's workers from the two builds' executables (processes a side)
 * with the threshold and alpha; no worker started. */
void opcost_ab_init(opcost_ab_ctx *ctx, const char *base_exe,
                    const char *new_exe, int processes, double threshold,
                    double alpha);

/* Starts every worker, the sides alternating, each in a process group of
 * its own (killed with it when the coordinator dies: PR_SET_PDEATHSIG),
 * and greets them (same protocol, the plan's threads set) within a
 * deadline; then reads from each worker's maps the rowops library it
 * loaded. 0, or -1 with err (a side that cannot start, gives no answer,
 * dies before its hello (a library it cannot map: named), speaks another
 * protocol, refuses the settings, or whose library is the other side's
 * file or bytes while the two claim different commits). */
int opcost_ab_start(const opcost_plan *plan, opcost_ab_ctx *ctx, char *err,
                    size_t len);

/* The loader's variables removed for the workers (unless
 * keep_loader_env): "LD_LIBRARY_PATH=..., PYTHONPATH=..." into out, ""
 * when none was set. */
void opcost_ab_scrubbed(const opcost_ab_ctx *ctx, char *out, size_t len);

/* Stops every worker (quit, then waits for it a bounded time, then kills
 * its process group) and frees what the run kept. */
void opcost_ab_stop(opcost_ab_ctx *ctx);

/* A request to a worker (with fd when >= 0) and its reply, within
 * seconds (times ab->deadline_scale; a worker that misses it is killed
 * with its process group). 0; -1 when the worker is lost (s->why says
 * how, and the console). */
int opcost_ab_exchange(const opcost_ab_ctx *ab, opcost_ab_side *s,
                       const void *q, size_t qlen, int fd, void *reply,
                       size_t rlen, double seconds, const char *what);

#endif
