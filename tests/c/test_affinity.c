/* Thread pinning (bench/measure/affinity.h) through a pool of plain
 * threads standing in for PyTorch's: every thread on its own CPU, in the
 * order of the process's CPUs; more threads than CPUs left alone; a pool
 * that gives one thread two indices, or runs them all on one thread,
 * refused; a child's mask reset to every CPU after its parent pinned. */
#define _GNU_SOURCE
#include "affinity.h"
#include "c_samples.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

enum { MAXT = 8 };

typedef struct chunk {
    void (*fn)(void *, int64_t, int64_t);
    void *ctx;
    int64_t b, e;
    int cpu; /* the thread's one CPU after fn, or -1: more than one */
} chunk;

static void *run_chunk(void *p)
{
    chunk *c = p;
    c->fn(c->ctx, c->b, c->e);
    cpu_set_t set;
    CPU_ZERO(&set);
    sched_getaffinity(0, sizeof set, &set);
    c->cpu = -1;
    if (CPU_COUNT(&set) == 1)
        for (int i = 0; i < CPU_SETSIZE; ++i)
            if (CPU_ISSET(i, &set))
                c->cpu = i;
    return NULL;
}

static chunk last[MAXT];
static int width = 1; /* indices per chunk */

/* a pool of threads, one per chunk of `width` indices */
static void pool(int64_t n, int64_t grain, void (*fn)(void *, int64_t, int64_t),
                 void *ctx)
{
    (void)grain;
    pthread_t t[MAXT];
    int k = 0;
    for (int64_t b = 0; b < n && k < MAXT; b += width, ++k) {
        last[k] = (chunk){fn, ctx, b, b + width < n ? b + width : n, -2};
        pthread_create(&t[k], NULL, run_chunk, &last[k]);
    }
    for (int i = 0; i < k; ++i)
        pthread_join(t[i], NULL);
}

/* every index on the calling thread, one at a time */
static void inline_pool(int64_t n, int64_t grain,
                        void (*fn)(void *, int64_t, int64_t), void *ctx)
{
    (void)grain;
    for (int64_t i = 0; i < n; ++i)
        fn(ctx, i, i + 1);
}

int main(void)
{
    int cpus[CPU_SETSIZE];
    const int n = opcost_affinity_cpus(cpus, CPU_SETSIZE);
    C_CHECK(n >= 1);
    const int threads = n < MAXT ? n : MAXT;
    char desc[256];

    width = 1;
    int rc = opcost_pin_threads(threads, pool, desc, sizeof desc);
    C_EXPECT(rc == threads, "pinned %d of %d: %s", rc, threads, desc);
    for (int i = 0; i < threads; ++i)
        C_EXPECT(last[i].cpu == cpus[i], "thread %d on CPU %d, not %d", i,
                 last[i].cpu, cpus[i]);
    C_EXPECT(strstr(desc, "pinned to CPU") != NULL, "desc '%s'", desc);

    rc = opcost_pin_threads(n + 1, pool, desc, sizeof desc);
    C_EXPECT(rc == 0 && strstr(desc, "not pinned") != NULL, "%d: %s", rc, desc);

    if (threads >= 2) {
        width = 2;
        rc = opcost_pin_threads(2, pool, desc, sizeof desc);
        C_EXPECT(rc == -1 && strstr(desc, "more than one") != NULL, "%d: %s",
                 rc, desc);
        width = 1;
        rc = opcost_pin_threads(2, inline_pool, desc, sizeof desc);
        C_EXPECT(rc == -1 && strstr(desc, "one thread took") != NULL, "%d: %s",
                 rc, desc);
        /* this thread is now on one CPU; the CPUs as the process began
         * are still known, and reset puts it back on all of them */
        int again[CPU_SETSIZE];
        C_EXPECT(opcost_affinity_cpus(again, CPU_SETSIZE) == n,
                 "the process's CPUs forgotten after pinning");
        opcost_affinity_reset();
        cpu_set_t set;
        CPU_ZERO(&set);
        sched_getaffinity(0, sizeof set, &set);
        C_EXPECT(CPU_COUNT(&set) == n, "reset to %d of %d CPUs",
                 CPU_COUNT(&set), n);
    } else {
        printf("test_affinity: 1 CPU: the refusals of a pool with two "
               "threads not run (SKIPPED)\n");
    }
    return c_report("test_affinity");
}
