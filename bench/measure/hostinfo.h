/* Where and when a run happens: the identity every results row carries. */
#ifndef OPCOST_HOSTINFO_H
#define OPCOST_HOSTINFO_H

#include <stddef.h>

typedef struct opcost_hostinfo {
    char run_id[64];        /* <UTC time>-<host>, also the CSV's file name */
    char timestamp_utc[32]; /* ISO 8601, e.g. 2026-11-30T04:10:00Z */
    char git_sha[64];       /* short sha, "-dirty" if the tree has changes */
    char host[64];
    char cpu[128];
    char gpu[128]; /* empty on a CPU run */
} opcost_hostinfo;

/* Fills info; git is asked in source_dir ("unknown" when it cannot be). */
void opcost_hostinfo_get(opcost_hostinfo *info, const char *source_dir);

#endif
