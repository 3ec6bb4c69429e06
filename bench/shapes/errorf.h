/* The bench's error convention: a message into a caller's buffer, -1 back.
 * Every function that can fail takes (char *err, size_t errlen). */
#ifndef OPCOST_ERRORF_H
#define OPCOST_ERRORF_H

#include <stddef.h>

/* Formats into err (when err and errlen are set) and returns -1. */
int opcost_errorf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
