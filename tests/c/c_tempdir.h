/* Input files for the C tests: a scratch directory, one per process, made
 * on first use and removed with everything in it at exit; files written
 * there; and a reader's errors on a table of malformed inputs. A fixture
 * that cannot be made ends the test (exit 1): nothing after it would mean
 * anything. */
#ifndef C_TEMPDIR_H
#define C_TEMPDIR_H

#include <stddef.h>

/* The directory, $TMPDIR/<prefix>.XXXXXX (or under /tmp); the prefix of the
 * first call names it. */
const char *c_tempdir(const char *prefix);

/* Writes size bytes of data to <tempdir>/name (name may hold a
 * subdirectory that exists) and puts that path into path. */
void c_write_bytes(const char *name, const void *data, size_t size, char *path,
                   size_t len);

/* c_write_bytes for a NUL-terminated text. */
void c_write_file(const char *name, const char *text, char *path, size_t len);

/* A malformed input and the exact error its reader must give; %s in
 * message stands for the file's path. */
typedef struct c_bad_input {
    const char *text;
    const char *message;
} c_bad_input;

/* A reader under test, by the bench's convention: 0, or -1 with a message
 * in err. It frees whatever it loaded. */
typedef int (*c_reader)(const char *path, char *err, size_t errlen);

/* Defines the c_reader fn over a loader of the bench's form
 * load(path, T *out, err, errlen), freeing what it loads with drop. */
#define C_READER(fn, T, load, drop)                                            \
    static int fn(const char *path, char *err, size_t errlen)                  \
    {                                                                          \
        T loaded;                                                              \
        const int rc = load(path, &loaded, err, errlen);                       \
        if (rc == 0)                                                           \
            drop(&loaded);                                                     \
        return rc;                                                             \
    }

/* Writes each case to <tempdir>/bad<i>.csv and expects read to refuse it
 * with exactly its message; what names the cases in failures. */
void c_expect_bad_inputs(const char *what, c_reader read,
                         const c_bad_input *cases, size_t count);

#endif
