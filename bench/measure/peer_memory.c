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

int opcost_peer_memory_refused(char *why, size_t len)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const int64_t rss = opcost_rss_bytes();
    if (pages <= 0 || page <= 0 || rss < 0)
        return 0;
    const double total = (double)pages * (double)page;
    /* OPCOST_PEER_MEMORY_FRACTION: another share, in [0, 1] (tests) */
    const char *e = getenv("OPCOST_PEER_MEMORY_FRACTION");
    char *end = NULL;
    const double f = e ? strtod(e, &end) : 0.7;
    const double share =
        e && end != e && *end == '\0' && f >= 0 && f <= 1 ? f : 0.7;
    if ((double)rss <= total * share)
        return 0;
    snprintf(why, len,
             "memory: the process holds %.1f of this machine's %.1f GiB, "
             "more than %.0f %% (the peers' libraries may keep what they are "
             "given: zentorch 2.13 keeps every tensor it is handed); the "
             "peer paths are skipped from here on so the run finishes",
             (double)rss / (1 << 30), total / (1 << 30), 100 * share);
    return 1;
}
