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

#endif
