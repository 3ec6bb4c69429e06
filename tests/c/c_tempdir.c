#define _POSIX_C_SOURCE 200809L /* mkdtemp, lstat */
#include "c_tempdir.h"
#include "c_samples.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char tempdir[1024];

/* Depth first: rmdir needs the directory empty. */
static void remove_tree(const char *path)
{
    DIR *d = opendir(path);
    for (const struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char sub[2048];
        snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
        struct stat st;
        if (lstat(sub, &st) == 0 && S_ISDIR(st.st_mode))
            remove_tree(sub);
        else
            unlink(sub);
    }
    if (d)
        closedir(d);
    rmdir(path);
}

static void remove_tempdir(void)
{
    remove_tree(tempdir);
}

const char *c_tempdir(const char *prefix)
{
    if (tempdir[0])
        return tempdir;
    const char *tmp = getenv("TMPDIR");
    snprintf(tempdir, sizeof tempdir, "%s/%s.XXXXXX",
             tmp && tmp[0] ? tmp : "/tmp", prefix);
    if (!mkdtemp(tempdir)) {
        perror(tempdir);
        exit(1);
    }
    atexit(remove_tempdir);
    return tempdir;
}

void c_write_bytes(const char *name, const void *data, size_t size, char *path,
                   size_t len)
{
    snprintf(path, len, "%s/%s", c_tempdir("c_test"), name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
}

void c_write_file(const char *name, const char *text, char *path, size_t len)
{
    c_write_bytes(name, text, strlen(text), path, len);
}

void c_expect_bad_inputs(const char *what, c_reader read,
                         const c_bad_input *cases, size_t count)
{
    for (size_t i = 0; i < count; ++i) {
        char name[32], path[2048], want[4096], err[4096] = "";
        snprintf(name, sizeof name, "bad%zu.csv", i);
        c_write_file(name, cases[i].text, path, sizeof path);
        snprintf(want, sizeof want, cases[i].message, path);
        C_EXPECT(read(path, err, sizeof err) == -1,
                 "%s %zu: %s was read without an error", what, i, path);
        C_EXPECT_STR(err, want, "%s %zu", what, i);
    }
}
