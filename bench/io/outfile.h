/* The one way the bench writes a file: results and their sidecars, the
 * journal's final place, compare --csv, gates.csv, shape files, the plots'
 * data. A file is written whole into a temporary of a fresh random name
 * beside it (created O_EXCL: never a planted link or someone else's file),
 * flushed to disk, then renamed over the path: a link planted at the path
 * is replaced, never followed; a full disk or a failed write leaves what
 * was at the path as it was. Appending (gates.csv) is a rewrite: the old
 * contents copied into the temporary, then the new lines. */
#ifndef OPCOST_OUTFILE_H
#define OPCOST_OUTFILE_H

#include <stddef.h>
#include <stdio.h>

typedef struct opcost_outfile {
    FILE *f;       /* write here between open and commit */
    char what[64]; /* the option, for messages ("--out") */
    char path[4096];
    char tmp[4200];
} opcost_outfile;

/* Creates the temporary beside path (opcost_output_path_check says
 * before any work whether path may be written at all). 0, or -1 with err
 * naming what, the path and the reason (the directory's errno). */
int opcost_outfile_open(opcost_outfile *o, const char *what, const char *path,
                        char *err, size_t len);

/* The same, the temporary starting with path's current contents (none
 * when path does not exist yet; read as every input is: infile.h): a
 * rewrite that appends. A link at path keeps its target's contents and is
 * replaced by a file of its own. check (NULL: none) sees the contents
 * first, once: 0 to go on, or -1 with err said (nothing is written). */
typedef int (*opcost_outfile_check)(const char *what, const char *path,
                                    const char *data, size_t n, char *err,
                                    size_t len);
int opcost_outfile_open_append(opcost_outfile *o, const char *what,
                               const char *path, opcost_outfile_check check,
                               char *err, size_t len);

/* The directory of path into dir ("." without a slash). 0, or -1 when it
 * does not fit. */
int opcost_dir_of(const char *path, char *dir, size_t len);

/* Flushes, syncs and closes the temporary; 0 when all of it is on disk
 * (nothing renamed yet), else -1 with err (the temporary removed). */
int opcost_outfile_finish(opcost_outfile *o, char *err, size_t len);

/* Renames a finished temporary over its path (and syncs the directory).
 * 0, or -1 with err (the temporary removed). */
int opcost_outfile_rename(opcost_outfile *o, char *err, size_t len);

/* finish, then rename. */
int opcost_outfile_commit(opcost_outfile *o, char *err, size_t len);

/* Drops the temporary (a no-op on a closed or committed one). */
void opcost_outfile_abort(opcost_outfile *o);

/* An output must not be one of the command's inputs (the same file,
 * through any name or link) nor one of its other outputs (the same
 * name): 0, or -1 with err "WHAT: 'OUT' is NAME, an input of this
 * command: ...". names[i] says what paths[i] is ("--shapes", "BASE.csv",
 * "BASE's sidecar"); NULL entries are skipped. */
int opcost_output_not_input(const char *what, const char *out,
                            const char *const *paths, const char *const *names,
                            int n, char *err, size_t len);

#endif
