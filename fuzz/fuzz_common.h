/* Shared by the libFuzzer targets: the input goes to a real file because
 * both parsers read from a path, and every error must name file:line. */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#define _POSIX_C_SOURCE 200809L /* mkstemp, ftruncate, pwrite */

#include <ctype.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One temp file per process: creating one per input would dominate the
 * run time. Removed at exit so runs leave nothing behind. */
static char fuzz_path[4096];

static void fuzz_remove_file(void)
{
    unlink(fuzz_path);
}

static const char *fuzz_write_input(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0) {
        const char *tmp = getenv("TMPDIR");
        snprintf(fuzz_path, sizeof fuzz_path, "%s/opcost_fuzz.XXXXXX",
                 tmp && tmp[0] ? tmp : "/tmp");
        fd = mkstemp(fuzz_path);
        if (fd < 0) {
            perror(fuzz_path);
            abort();
        }
        atexit(fuzz_remove_file);
    }
    /* Rewrite in place: truncate first so a shorter input leaves no tail. */
    if (ftruncate(fd, 0) != 0) {
        perror(fuzz_path);
        abort();
    }
    for (size_t done = 0; done < size;) {
        const ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
        if (n <= 0) {
            perror(fuzz_path);
            abort();
        }
        done += (size_t)n;
    }
    return fuzz_path;
}

/* A refusal must be "<path>:<line>" followed by ':' and more text; anything
 * else (an empty message, a message without the line) is a finding. */
static void fuzz_check_error(const char *path, const char *err)
{
    const size_t n = strlen(path);
    const char *p = err + n;
    int ok =
        strncmp(err, path, n) == 0 && *p++ == ':' && isdigit((unsigned char)*p);
    while (ok && isdigit((unsigned char)*p))
        ++p;
    if (!ok || *p != ':') {
        fprintf(stderr, "error does not start with '%s:<line>:': '%s'\n", path,
                err);
        abort();
    }
}

#endif
