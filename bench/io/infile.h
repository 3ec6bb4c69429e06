/* The one way the bench reads a file a user gave it (results CSVs and
 * their sidecars, shape files, traces, the history's CSVs and gates.csv):
 * a regular file only, checked on the opened descriptor (a FIFO, a
 * device such as /dev/zero, a directory, or a link to one, is refused,
 * never read until it ends), whole, at most a bound. */
#ifndef OPCOST_INFILE_H
#define OPCOST_INFILE_H

#include <stddef.h>

/* The most a file may hold (2 GiB): a results CSV of a million rows is
 * far below it; /dev/zero behind a regular name is not. */
#define OPCOST_READ_MAX ((size_t)1 << 31)

/* Reads path into a fresh buffer (*data, NUL-terminated, *len bytes;
 * free() it). 0, or -1 with err "PATH: ...": cannot open (the reason),
 * is not a regular file (saying what it is), holds more than max bytes,
 * or a read failed. */
int opcost_read_file(const char *path, size_t max, char **data, size_t *len,
                     char *err, size_t errlen);

/* What kind of file st_mode is, for messages: "a directory", "a FIFO",
 * "a character device", ... */
const char *opcost_file_kind(unsigned mode);

#endif
