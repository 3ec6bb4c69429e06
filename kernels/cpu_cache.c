/* The last-level cache size, from sysfs (the cache this core shares: on
 * AMD the L3 of its CCX), else sysconf (glibc may report the whole
 * package's L3 there: 384 MiB on a 32 MiB-per-CCX EPYC), else a
 * fallback. */
#define _POSIX_C_SOURCE 200809L
#include "cpu_cache.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_line(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    const int ok = fgets(buf, (int)len, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

/* "32768K", "1M", "512" -> bytes; 0 if unreadable. */
static size_t parse_size(const char *s)
{
    char *end;
    errno = 0;
    const unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return 0;
    const unsigned shift = *end == 'K'   ? 10
                           : *end == 'M' ? 20
                           : *end == 'G' ? 30
                                         : 0;
    if ((shift && end[1]) || (!shift && *end))
        return 0;
    return (size_t)(v << shift);
}

size_t rowops_cpu_llc_bytes(char *source, size_t len)
{
    static const char dir[] = "/sys/devices/system/cpu/cpu0/cache";
    int best_level = 0, best_index = -1;
    size_t best = 0;
    char best_type[32] = "";
    for (int i = 0; i < 16; ++i) {
        char path[128], level[32], type[32], size[32];
        snprintf(path, sizeof path, "%s/index%d/level", dir, i);
        if (read_line(path, level, sizeof level))
            continue;
        snprintf(path, sizeof path, "%s/index%d/type", dir, i);
        if (read_line(path, type, sizeof type) || !strcmp(type, "Instruction"))
            continue;
        snprintf(path, sizeof path, "%s/index%d/size", dir, i);
        if (read_line(path, size, sizeof size))
            continue;
        const int lv = atoi(level);
        const size_t bytes = parse_size(size);
        if (bytes && lv > best_level) {
            best_level = lv;
            best_index = i;
            best = bytes;
            snprintf(best_type, sizeof best_type, "%s", type);
        }
    }
    if (best) {
        if (source)
            snprintf(source, len, "sysfs %s/index%d (L%d %s)", dir, best_index,
                     best_level, best_type);
        return best;
    }
#ifdef _SC_LEVEL3_CACHE_SIZE
    const long sc = sysconf(_SC_LEVEL3_CACHE_SIZE);
    if (sc > 0) {
        if (source)
            snprintf(source, len, "sysconf(_SC_LEVEL3_CACHE_SIZE)");
        return (size_t)sc;
    }
#endif
    if (source)
        snprintf(source, len,
                 "fallback: no LLC size in sysfs or sysconf, "
                 "assumed 32 MiB");
    return ROWOPS_LLC_FALLBACK_BYTES;
}

size_t rowops_cpu_llc_bytes_cached(void)
{
    /* Idempotent: a race between threads writes the same value. */
    static volatile size_t cached = 0;
    if (!cached)
        cached = rowops_cpu_llc_bytes(NULL, 0);
    return cached;
}

size_t rowops_cpu_cache_level_bytes(int want)
{
    static const char dir[] = "/sys/devices/system/cpu/cpu0/cache";
    for (int i = 0; i < 16; ++i) {
        char path[128], level[32], type[32], size[32];
        snprintf(path, sizeof path, "%s/index%d/level", dir, i);
        if (read_line(path, level, sizeof level) || atoi(level) != want)
            continue;
        snprintf(path, sizeof path, "%s/index%d/type", dir, i);
        if (read_line(path, type, sizeof type) || !strcmp(type, "Instruction"))
            continue;
        snprintf(path, sizeof path, "%s/index%d/size", dir, i);
        if (!read_line(path, size, sizeof size))
            return parse_size(size);
    }
    return 0;
}
