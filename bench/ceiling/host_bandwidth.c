#define _POSIX_C_SOURCE 200809L /* gethostname */
#include "host_bandwidth.h"
#include "infile.h"
#include "outfile.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* This machine's name: /etc/machine-id (a new VM gets a new one), else
 * the host name; commas and line ends left out (it is a CSV field). */
static void machine_key(char *key, size_t len)
{
    key[0] = '\0';
    FILE *f = fopen("/etc/machine-id", "r");
    if (f) {
        if (!fgets(key, (int)len, f))
            key[0] = '\0';
        fclose(f);
    }
    if (!key[0] && gethostname(key, len))
        key[0] = '\0';
    key[len - 1] = '\0';
    for (char *c = key; *c; ++c)
        if (*c == ',' || *c == '\n' || *c == '\r')
            *c = '\0';
}

/* $OPCOST_CACHE, else $HOME/.cache/opcost; 0, or -1 when neither. */
static int cache_dir(char *dir, size_t len)
{
    const char *c = getenv("OPCOST_CACHE");
    if (c && *c)
        return snprintf(dir, len, "%s", c) < (int)len ? 0 : -1;
    const char *home = getenv("HOME");
    if (!home || !*home)
        return -1;
    return snprintf(dir, len, "%s/.cache/opcost", home) < (int)len ? 0 : -1;
}

static int file_path(char *path, size_t len)
{
    char dir[3000];
    if (cache_dir(dir, sizeof dir))
        return -1;
    return snprintf(path, len, "%s/host-bandwidth.csv", dir) < (int)len ? 0
                                                                        : -1;
}

double opcost_host_bandwidth_recall(int threads)
{
    char path[4096], key[256], err[256];
    if (file_path(path, sizeof path))
        return 0;
    machine_key(key, sizeof key);
    char *data = NULL;
    size_t n = 0;
    if (opcost_read_file(path, (size_t)1 << 24, &data, &n, err, sizeof err))
        return 0;
    const double since = (double)time(NULL) - OPCOST_HOST_BW_DAYS * 86400.0;
    double best = 0;
    for (char *line = data; line && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        char k[256];
        int t;
        double g, when;
        if (sscanf(line, "%255[^,],%d,%lf,%lf", k, &t, &g, &when) == 4 &&
            !strcmp(k, key) && t == threads && isfinite(g) && g > best &&
            when >= since)
            best = g;
        line = end ? end + 1 : NULL;
    }
    free(data);
    return best;
}

void opcost_host_bandwidth_remember(int threads, double gbps)
{
    char path[4096], dir[3000], key[256];
    if (!(gbps > 0) || !isfinite(gbps) || cache_dir(dir, sizeof dir) ||
        file_path(path, sizeof path))
        return;
    machine_key(key, sizeof key);
    if (!key[0])
        return;
    /* the cache directory may not exist yet (its parent usually does) */
    if (mkdir(dir, 0755) && errno != EEXIST)
        return;
    opcost_outfile o;
    char err[512];
    if (opcost_outfile_open_append(&o, "host bandwidth", path, NULL, err,
                                   sizeof err))
        return;
    fprintf(o.f, "%s,%d,%.3f,%lld\n", key, threads, gbps,
            (long long)time(NULL));
    opcost_outfile_commit(&o, err, sizeof err);
}
