#define _GNU_SOURCE
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *opcost_file_kind(unsigned mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISSOCK(mode) ? "a socket"
           : S_ISREG(mode)  ? "a regular file"
                            : "not a regular file";
}

int opcost_read_file(const char *path, size_t max, char **data, size_t *len,
                     char *err, size_t errlen)
{
    *data = NULL;
    *len = 0;
    if (!path || !path[0]) {
        snprintf(err, errlen, "path: must be a file name (got '')");
        return -1;
    }
    /* O_NONBLOCK: opening a FIFO must not wait for a writer */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%.900s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%.900s: is %s: only regular files are read",
                 path, opcost_file_kind(st.st_mode));
        close(fd);
        return -1;
    }
    if ((size_t)st.st_size > max) {
        snprintf(err, errlen, "%.900s: holds %lld bytes, more than %zu", path,
                 (long long)st.st_size, max);
        close(fd);
        return -1;
    }
    /* the size it has now, and one byte more: a file still growing is
     * read up to the bound, not followed forever */
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char *buf = malloc(cap + 1);
    int saved = buf ? 0 : ENOMEM;
    while (buf && !saved) {
        if (n == cap) {
            if (cap >= max) {
                snprintf(err, errlen, "%.900s: grew past %zu bytes", path, max);
                free(buf);
                close(fd);
                return -1;
            }
            const size_t grown = cap * 2 < max ? cap * 2 : max;
            char *p = realloc(buf, grown + 1);
            if (!p) {
                saved = ENOMEM;
                break;
            }
            buf = p;
            cap = grown;
        }
        const ssize_t got = read(fd, buf + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            saved = errno;
        else if (got == 0)
            break;
        else
            n += (size_t)got;
    }
    close(fd);
    if (saved) {
        snprintf(err, errlen, "%.900s: cannot read: %s", path, strerror(saved));
        free(buf);
        return -1;
    }
    buf[n] = '\0';
    *data = buf;
    *len = n;
    return 0;
}
