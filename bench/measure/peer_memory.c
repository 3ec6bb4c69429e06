/* The peers' memory guard (peer_memory.h). */
#include "peer_memory.h"

#include <stdio.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <unistd.h>

int64_t opcost_rss_bytes(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long long size = 0, resident = -1;
    if (f) {
        if (fscanf(f, "%lld %lld", &size, &resident) != 2)
            resident = -1;
        fclose(f);
    }
    const long page = sysconf(_SC_PAGESIZE);
    return resident < 0 || page <= 0 ? -1 : (int64_t)resident * page;
}

int64_t opcost_available_bytes(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return -1;
    char line[256];
    long long kib = -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kib) == 1)
            break;
    fclose(f);
    return kib < 0 ? -1 : (int64_t)kib * 1024;
}

/* A share of the machine's memory from the variable name, in [lo, 1]
 * (lo itself excluded where lo_open), else fallback; a value that breaks
 * the rule is named on stderr once (*warned) and not used. */
static double env_share(const char *name, double lo, int lo_open,
                        double fallback, int *warned)
{
    const char *e = getenv(name);
    if (!e)
        return fallback;
    char *end = NULL;
    const double f = strtod(e, &end);
    if (end != e && *end == '\0' && (lo_open ? f > lo : f >= lo) && f <= 1)
        return f;
    if (!*warned)
        fprintf(stderr,
                "opcost: %s=%s is not used: a share of the machine's "
                "memory in %s%g, 1] is required (using %g)\n",
                name, e, lo_open ? "(" : "[", lo, fallback);
    *warned = 1;
    return fallback;
}

int opcost_peer_memory_refused(size_t inputs, char *why, size_t len)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const int64_t avail = opcost_available_bytes(), rss = opcost_rss_bytes();
    if (pages <= 0 || page <= 0 || avail < 0 || rss < 0)
        return 0;
    const double total = (double)pages * (double)page;
    static int warned_reserve, warned_held;
    /* kept available beyond a peer's need */
    const double share =
        env_share("OPCOST_PEER_MEMORY_RESERVE", 0, 0, 0.1, &warned_reserve);
    const double held_max = env_share("OPCOST_PEER_MEMORY_HELD", 0, 1,
                                      OPCOST_PEER_HELD_MAX, &warned_held);
    const double need = 2.0 * (double)inputs + share * total;
    const double held = (double)rss / total;
    if ((double)avail >= need && held <= held_max && share < 1)
        return 0;
    const double gib = (double)(1 << 30);
    snprintf(why, len,
             "memory: the process holds %.1f of this machine's %.1f GiB "
             "(at most %.0f %% for a peer) and %.1f GiB are available (a "
             "peer here needs %.1f: copies of the sets' %.2f GiB of inputs "
             "with %.0f %% of the memory kept free); the peer is skipped so "
             "the run finishes",
             (double)rss / gib, total / gib, 100 * held_max,
             (double)avail / gib, need / gib, (double)inputs / gib,
             100 * share);
    return 1;
}

void opcost_release_freed_memory(void)
{
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}
