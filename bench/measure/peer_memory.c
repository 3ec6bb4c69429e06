/* The peers' memory guard (peer_memory.h). */
#include "peer_memory.h"

#include <stdio.h>
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

/* The share of the machine's memory kept available beyond a peer's need:
 * a tenth, or OPCOST_PEER_MEMORY_RESERVE's in [0, 1]. */
static double reserve_share(void)
{
    const char *e = getenv("OPCOST_PEER_MEMORY_RESERVE");
    char *end = NULL;
    const double f = e ? strtod(e, &end) : 0.1;
    return e && end != e && *end == '\0' && f >= 0 && f <= 1 ? f : 0.1;
}

int opcost_peer_memory_refused(size_t inputs, char *why, size_t len)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const int64_t avail = opcost_available_bytes(), rss = opcost_rss_bytes();
    if (pages <= 0 || page <= 0 || avail < 0 || rss < 0)
        return 0;
    const double total = (double)pages * (double)page;
    const double share = reserve_share();
    const double need = 2.0 * (double)inputs + share * total;
    const double held = (double)rss / total;
    if ((double)avail >= need && held <= OPCOST_PEER_HELD_MAX && share < 1)
        return 0;
    const double gib = (double)(1 << 30);
    snprintf(why, len,
             "memory: the process holds %.1f of this machine's %.1f GiB "
             "(at most %.0f %% for a peer) and %.1f GiB are available (a "
             "peer here needs %.1f: copies of the sets' %.2f GiB of inputs "
             "with %.0f %% of the memory kept free); the peer is skipped so "
             "the run finishes",
             (double)rss / gib, total / gib, 100 * OPCOST_PEER_HELD_MAX,
             (double)avail / gib, need / gib, (double)inputs / gib,
             100 * share);
    return 1;
}
