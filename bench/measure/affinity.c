#define _GNU_SOURCE
#include "affinity.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The process's CPUs as they were before any pinning: read once, so that
 * a thread already pinned (this process's main thread) still sees them. */
static cpu_set_t original;
static int have_original = -1;

static const cpu_set_t *original_cpus(void)
{
    if (have_original < 0) {
        CPU_ZERO(&original);
        have_original = sched_getaffinity(0, sizeof original, &original) == 0;
    }
    return have_original ? &original : NULL;
}

int opcost_affinity_cpus(int *cpus, int max)
{
    const cpu_set_t *set = original_cpus();
    int n = 0;
    for (int c = 0; set && c < CPU_SETSIZE && n < max; ++c)
        if (CPU_ISSET(c, set))
            cpus[n++] = c;
    return n;
}

void opcost_affinity_reset(void)
{
    const cpu_set_t *set = original_cpus();
    if (set)
        sched_setaffinity(0, sizeof *set, set);
}

typedef struct pin_job {
    const int *cpus;
    int threads;
    pid_t *tid;    /* per index: the thread that took it */
    int *err;      /* per index: errno of sched_setaffinity, or 0 */
    int bad_chunk; /* an index arrived with another in one chunk */
    pthread_mutex_t mu;
} pin_job;

static void pin_one(void *ctx, int64_t begin, int64_t end)
{
    pin_job *j = ctx;
    if (end - begin != 1 || begin < 0 || end > j->threads) {
        pthread_mutex_lock(&j->mu);
        j->bad_chunk = 1;
        pthread_mutex_unlock(&j->mu);
        return;
    }
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(j->cpus[begin], &one);
    /* pid 0: the calling thread */
    j->err[begin] = sched_setaffinity(0, sizeof one, &one) ? errno : 0;
    j->tid[begin] = (pid_t)syscall(SYS_gettid);
}

int opcost_pin_threads(int threads, opcost_parallel_for pf, char *desc,
                       size_t len)
{
    int cpus[CPU_SETSIZE];
    const int ncpus = opcost_affinity_cpus(cpus, CPU_SETSIZE);
    if (threads < 1 || ncpus < threads) {
        snprintf(desc, len, "not pinned: %d threads on %d CPUs", threads,
                 ncpus);
        return 0;
    }
    pin_job j = {cpus,
                 threads,
                 calloc((size_t)threads, sizeof(pid_t)),
                 calloc((size_t)threads, sizeof(int)),
                 0,
                 PTHREAD_MUTEX_INITIALIZER};
    if (!j.tid || !j.err) {
        free(j.tid);
        free(j.err);
        snprintf(desc, len, "not pinned: out of memory");
        return -1;
    }
    pf(threads, 1, pin_one, &j);
    int rc = threads;
    if (j.bad_chunk)
        rc = -1, snprintf(desc, len,
                          "not pinned: the thread pool gave a thread more "
                          "than one of %d indices",
                          threads);
    for (int i = 0; rc > 0 && i < threads; ++i) {
        if (!j.tid[i])
            rc = -1,
            snprintf(desc, len, "not pinned: no thread took index %d", i);
        else if (j.err[i])
            rc = -1, snprintf(desc, len, "not pinned: CPU %d: %s", cpus[i],
                              strerror(j.err[i]));
        for (int k = 0; rc > 0 && k < i; ++k)
            if (j.tid[k] == j.tid[i])
                rc = -1, snprintf(desc, len,
                                  "not pinned: one thread took indices %d "
                                  "and %d",
                                  k, i);
    }
    if (rc > 0) {
        int at = snprintf(desc, len, "%d thread%s pinned to CPU%s ", threads,
                          threads > 1 ? "s" : "", threads > 1 ? "s" : "");
        for (int i = 0; i < threads && at >= 0 && (size_t)at < len; ++i)
            at += snprintf(desc + at, len - (size_t)at, "%s%d", i ? "," : "",
                           cpus[i]);
    }
    free(j.tid);
    free(j.err);
    return rc;
}
