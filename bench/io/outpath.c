#define _POSIX_C_SOURCE 200809L
#include "outpath.h"
#include "infile.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int opcost_output_path_check(const char *what, const char *path, char *err,
                             size_t errlen)
{
    if (!path || !path[0]) {
        snprintf(err, errlen, "%s: must be a file name (got '')", what);
        return -1;
    }
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        snprintf(err, errlen,
                 "%s: '%.900s' is %s: results are written only to regular "
                 "files or new paths",
                 what, path, opcost_file_kind(st.st_mode));
        return -1;
    }
    char dir[4096];
    if (opcost_dir_of(path, dir, sizeof dir)) {
        snprintf(err, errlen, "%s: '%.900s': path too long", what, path);
        return -1;
    }
    const int exists = stat(dir, &st) == 0;
    if (!exists || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen,
                 "%s: directory '%.900s' %s (no directory is created: make "
                 "it first)",
                 what, dir, exists ? "is not a directory" : "does not exist");
        return -1;
    }
    /* the file itself is written as a temp file beside it, then renamed */
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.opcost-probe.%ld", dir, (long)getpid());
    const int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        snprintf(err, errlen,
                 "%s: directory '%.900s' is not writable: cannot create a "
                 "file there: %s",
                 what, dir, strerror(errno));
        return -1;
    }
    close(fd);
    unlink(probe);
    return 0;
}
