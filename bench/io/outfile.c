#define _GNU_SOURCE
#include "outfile.h"
#include "infile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int opcost_dir_of(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    const int n = slash
                      ? snprintf(dir, len, "%.*s",
                                 (int)(slash == path ? 1 : slash - path), path)
                      : snprintf(dir, len, ".");
    return n < 0 || (size_t)n >= len ? -1 : 0;
}

/* A fresh temporary beside o->path: "<dir>/.<name>.tmp.XXXXXX", O_EXCL by
 * mkostemp (an existing name, a planted link included, is never
 * opened), mode as a new file of this process would get. */
static int make_tmp(opcost_outfile *o, char *err, size_t len)
{
    char dir[4096];
    opcost_dir_of(o->path, dir, sizeof dir);
    const char *slash = strrchr(o->path, '/');
    const char *name = slash ? slash + 1 : o->path;
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s/.%.200s.tmp.XXXXXX", dir,
                         name) >= sizeof o->tmp) {
        snprintf(err, len, "%s: '%.900s': path too long", o->what, o->path);
        return -1;
    }
    const int fd = mkostemp(o->tmp, O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, len, "%s: cannot create a file beside '%.900s': %s",
                 o->what, o->path, strerror(errno));
        o->tmp[0] = '\0';
        return -1;
    }
    const mode_t mask = umask(0);
    umask(mask);
    if (fchmod(fd, 0666 & ~mask) == 0)
        o->f = fdopen(fd, "w");
    if (!o->f) {
        snprintf(err, len, "%s: '%.900s': %s", o->what, o->tmp,
                 strerror(errno));
        close(fd);
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return -1;
    }
    return 0;
}

int opcost_outfile_open(opcost_outfile *o, const char *what, const char *path,
                        char *err, size_t len)
{
    memset(o, 0, sizeof *o);
    snprintf(o->what, sizeof o->what, "%s", what);
    if (!path || !path[0]) {
        snprintf(err, len, "%s: path: must be a non-empty file name", what);
        return -1;
    }
    if ((size_t)snprintf(o->path, sizeof o->path, "%s", path) >=
        sizeof o->path) {
        snprintf(err, len, "%s: path too long", what);
        return -1;
    }
    return make_tmp(o, err, len);
}

int opcost_outfile_open_append(opcost_outfile *o, const char *what,
                               const char *path, opcost_outfile_check check,
                               char *err, size_t len)
{
    if (opcost_outfile_open(o, what, path, err, len))
        return -1;
    /* the current contents, read as every input is (a regular file, or a
     * link to one: the link itself is then replaced by the rename) */
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT)
        return 0;
    char *data, e[1200];
    size_t n;
    if (opcost_read_file(path, OPCOST_READ_MAX, &data, &n, e, sizeof e)) {
        snprintf(err, len, "%s: %s", what, e);
        opcost_outfile_abort(o);
        return -1;
    }
    if (check && check(what, path, data, n, err, len)) {
        free(data);
        opcost_outfile_abort(o);
        return -1;
    }
    const int bad = fwrite(data, 1, n, o->f) != n;
    free(data);
    if (bad) {
        snprintf(err, len, "%s: cannot copy '%.900s': %s", what, path,
                 strerror(errno ? errno : EIO));
        opcost_outfile_abort(o);
        return -1;
    }
    return 0;
}

int opcost_outfile_finish(opcost_outfile *o, char *err, size_t len)
{
    if (!o->f) {
        snprintf(err, len, "%s: '%.900s': not open", o->what, o->path);
        return -1;
    }
    /* the step that failed, with its own errno: a full disk says so (a
     * write that failed earlier is tried once more, for its reason) */
    const int earlier = errno;
    const char *step = NULL;
    int saved = 0;
    if (ferror(o->f)) {
        clearerr(o->f);
        step = "write";
        saved = fflush(o->f) != 0 ? errno : earlier ? earlier : EIO;
    } else if (fflush(o->f) != 0)
        step = "write", saved = errno;
    else if (fsync(fileno(o->f)) != 0)
        step = "sync", saved = errno;
    FILE *f = o->f;
    o->f = NULL;
    if (fclose(f) != 0 && !step)
        step = "write", saved = errno;
    if (step) {
        snprintf(err, len, "%s: cannot %s '%.900s': %s", o->what, step, o->path,
                 strerror(saved ? saved : EIO));
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return -1;
    }
    return 0;
}

int opcost_outfile_rename(opcost_outfile *o, char *err, size_t len)
{
    if (!o->tmp[0] || o->f) {
        snprintf(err, len, "%s: '%.900s': not finished", o->what, o->path);
        return -1;
    }
    if (rename(o->tmp, o->path) != 0) {
        snprintf(err, len, "%s: cannot rename '%.900s' over '%.900s': %s",
                 o->what, o->tmp, o->path, strerror(errno));
        unlink(o->tmp);
        o->tmp[0] = '\0';
        return -1;
    }
    o->tmp[0] = '\0';
    char dir[4096];
    opcost_dir_of(o->path, dir, sizeof dir);
    const int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) { /* best effort: the rename itself durable */
        fsync(fd);
        close(fd);
    }
    return 0;
}

int opcost_outfile_commit(opcost_outfile *o, char *err, size_t len)
{
    return opcost_outfile_finish(o, err, len) ||
                   opcost_outfile_rename(o, err, len)
               ? -1
               : 0;
}

void opcost_outfile_abort(opcost_outfile *o)
{
    if (o->f) {
        fclose(o->f);
        o->f = NULL;
    }
    if (o->tmp[0])
        unlink(o->tmp);
    o->tmp[0] = '\0';
}

int opcost_output_not_input(const char *what, const char *out,
                            const char *const *paths, const char *const *names,
                            int n, char *err, size_t len)
{
    struct stat so;
    const int out_exists = stat(out, &so) == 0;
    for (int i = 0; i < n; ++i) {
        if (!paths[i])
            continue;
        struct stat si;
        const int same_file = out_exists && stat(paths[i], &si) == 0 &&
                              si.st_dev == so.st_dev && si.st_ino == so.st_ino;
        if (same_file || !strcmp(paths[i], out)) {
            snprintf(err, len,
                     "%s: '%.900s' is %s ('%.900s'), which this command "
                     "reads or writes: an output must be a file of its own",
                     what, out, names[i], paths[i]);
            return -1;
        }
    }
    return 0;
}
