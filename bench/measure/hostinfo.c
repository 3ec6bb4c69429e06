#define _POSIX_C_SOURCE 200809L
#include "hostinfo.h"
#include "cpu_features.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The first line a shell command prints, trimmed; 0 if it printed one. */
static int first_line(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    out[0] = '\0';
    const int got = fgets(out, (int)len, p) != NULL;
    const int rc = pclose(p);
    out[strcspn(out, "\r\n")] = '\0';
    return got && rc == 0 && out[0] ? 0 : -1;
}

static void cpu_model(char *out, size_t len)
{
    snprintf(out, len, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *v = strchr(line, ':');
            if (v) {
                v += 1 + (v[1] == ' ');
                snprintf(out, len, "%.*s", (int)strcspn(v, "\n"), v);
            }
            break;
        }
    }
    fclose(f);
}

void opcost_hostinfo_get(opcost_hostinfo *info, const char *source_dir)
{
    memset(info, 0, sizeof *info);
    if (gethostname(info->host, sizeof info->host - 1))
        snprintf(info->host, sizeof info->host, "unknown");
    const time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(info->timestamp_utc, sizeof info->timestamp_utc,
             "%Y-%m-%dT%H:%M:%SZ", &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    /* host names may hold characters a file name should not */
    char host[40];
    snprintf(host, sizeof host, "%.39s", info->host);
    for (char *c = host; *c; ++c)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
              (*c >= '0' && *c <= '9') || *c == '-'))
            *c = '-';
    snprintf(info->run_id, sizeof info->run_id, "%.20s-%.39s", stamp, host);
    cpu_model(info->cpu, sizeof info->cpu);
    /* results of a capped run are another host class's: say so in them */
    const char *cap = rowops_cpu_capability();
    if (cap) {
        const size_t used = strlen(info->cpu);
        snprintf(info->cpu + used, sizeof info->cpu - used, " [%s=%s]",
                 ROWOPS_CPU_CAPABILITY_ENV, cap);
    }
    char cmd[4200], sha[48], dirty[8];
    snprintf(cmd, sizeof cmd,
             "git -C '%s' rev-parse --short=12 HEAD 2>/dev/null", source_dir);
    if (first_line(cmd, sha, sizeof sha)) {
        snprintf(info->git_sha, sizeof info->git_sha, "unknown");
        return;
    }
    snprintf(cmd, sizeof cmd,
             "git -C '%s' status --porcelain --untracked-files=no 2>/dev/null "
             "| head -1 | cut -c1-2",
             source_dir);
    const int is_dirty = first_line(cmd, dirty, sizeof dirty) == 0;
    snprintf(info->git_sha, sizeof info->git_sha, "%s%s", sha,
             is_dirty ? "-dirty" : "");
}
