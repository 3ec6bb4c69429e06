#define _POSIX_C_SOURCE 200809L
#include "outpath.h"
#include "infile.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
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

int opcost_output_lock(const char *what, const char *path, int *fd, char *err,
                       size_t errlen)
{
    char lock[4200];
    snprintf(lock, sizeof lock, "%.4090s.lock", path);
    *fd = -1;
    for (int again = 0; again < 10; ++again) {
        const int f =
            open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (f < 0) {
            snprintf(err, errlen,
                     "%s: '%.900s': cannot create its lock %.900s: %s", what,
                     path, lock, strerror(errno));
            return -1;
        }
        if (flock(f, LOCK_EX | LOCK_NB)) {
            const int e = errno;
            char pid[32] = "";
            const ssize_t n = pread(f, pid, sizeof pid - 1, 0);
            pid[n > 0 ? n : 0] = '\0';
            pid[strcspn(pid, "\n")] = '\0';
            close(f);
            if (e == EWOULDBLOCK)
                snprintf(err, errlen,
                         "%s: '%.900s' is being written by another opcost "
                         "run (pid %s, holding %.900s): give this run "
                         "another %s, or wait for that one to end",
                         what, path, pid[0] ? pid : "unknown", lock, what);
            else
                snprintf(err, errlen, "%s: '%.900s': cannot lock %.900s: %s",
                         what, path, lock, strerror(e));
            return -1;
        }
        /* the lock of the file still at that name (not one a run that
         * ended removed after this one opened it) */
        struct stat a, b;
        if (fstat(f, &a) || stat(lock, &b) || a.st_ino != b.st_ino ||
            a.st_dev != b.st_dev) {
            close(f);
            continue;
        }
        char pid[32];
        const int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
        if (ftruncate(f, 0) || pwrite(f, pid, (size_t)len, 0) != len) {
            /* the lock holds without its pid: a refusal says "unknown" */
        }
        *fd = f;
        return 0;
    }
    snprintf(err, errlen, "%s: '%.900s': its lock %.900s keeps changing", what,
             path, lock);
    return -1;
}

void opcost_output_unlock(const char *path, int fd)
{
    if (fd < 0)
        return;
    char lock[4200];
    snprintf(lock, sizeof lock, "%.4090s.lock", path);
    unlink(lock); /* while held: the next run creates its own */
    close(fd);
}
