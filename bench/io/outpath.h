/* Where the bench may write a result: an existing regular file (replaced
 * or appended to) or a new name in an existing directory where files can
 * be created. Checked before any work, so a run or a comparison never
 * ends by failing to write, and never turns a device node, a FIFO or a
 * socket into a regular file (as root, rename(2) over /dev/null would). */
#ifndef OPCOST_OUTPATH_H
#define OPCOST_OUTPATH_H

#include <stddef.h>

/* 0 if results may be written to path; else -1 with a message naming
 * `what` (the option, e.g. "--out"), the path and the rule: not a regular
 * file (a directory, a character or block device, a FIFO, a socket), a
 * directory that does not exist (none is created), or one where a file
 * cannot be created (a real create-and-remove probe: read-only mounts,
 * /proc, permissions). */
int opcost_output_path_check(const char *what, const char *path, char *err,
                             size_t errlen);

/* Two runs never write the same results file: a run takes an advisory
 * lock (flock) on <path>.lock, holding its pid, for as long as it runs.
 * 0 with *fd the lock's descriptor, or -1 with err naming `what`, the
 * path and the run that holds it (its pid) or why the lock could not be
 * made. A lock file left by a run that ended (killed) is taken over. */
int opcost_output_lock(const char *what, const char *path, int *fd, char *err,
                       size_t errlen);

/* Releases the lock taken on path (removes <path>.lock). */
void opcost_output_unlock(const char *path, int fd);

#endif
