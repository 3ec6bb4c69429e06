/* The reading of the results files (csv_reader.h). */
#define _POSIX_C_SOURCE 200809L
#include "csv_reader.h"
#include "c_numeric.h"
#include "infile.h"
#include "results_csv.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int csv_fail_at(csv_reader *r, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%d:%d: %s", r->path, line, col, msg);
    return -1;
}

static int oom(csv_reader *r)
{
    snprintf(r->err, r->errlen, "%s: out of memory", r->path);
    return -1;
}

static int append(csv_reader *r, char ch)
{
    if (r->used == r->cap) {
        const size_t cap = r->cap ? 2 * r->cap : 1024;
        char *p = realloc(r->scratch, cap);
        if (!p)
            return oom(r);
        r->scratch = p;
        r->cap = cap;
    }
    r->scratch[r->used++] = ch;
    return 0;
}

static void advance(csv_reader *r)
{
    if (r->buf[r->pos++] == '\n') {
        ++r->line;
        r->col = 1;
    } else {
        ++r->col;
    }
}

static int push_field(csv_reader *r, csv_field f)
{
    if (r->nfields == r->fcap) {
        const size_t cap = r->fcap ? 2 * r->fcap : 64;
        csv_field *p = realloc(r->fields, cap * sizeof *p);
        if (!p)
            return oom(r);
        r->fields = p;
        r->fcap = cap;
    }
    f.len = r->used - f.off;
    r->fields[r->nfields++] = f;
    return append(r, '\0');
}

/* Returns 1 with a record in fields, 0 at end of file, -1 on error. */
static int read_record(csv_reader *r)
{
    if (r->pos >= r->len)
        return 0;
    r->nfields = 0;
    r->used = 0;
    for (;;) {
        csv_field f = {r->used, 0, r->line, r->col};
        if (r->pos < r->len && r->buf[r->pos] == '"') {
            advance(r);
            for (;;) {
                if (r->pos >= r->len)
                    return csv_fail_at(r, f.line, f.col,
                                       "quoted field is not "
                                       "closed before the end of the file");
                const char ch = r->buf[r->pos];
                if (ch == '\0')
                    return csv_fail_at(r, r->line, r->col, "NUL byte");
                if (ch == '"') {
                    advance(r);
                    if (r->pos < r->len && r->buf[r->pos] == '"') {
                        advance(r);
                        if (append(r, '"'))
                            return -1;
                        continue;
                    }
                    break;
                }
                advance(r);
                if (append(r, ch))
                    return -1;
            }
            const char next = r->pos < r->len ? r->buf[r->pos] : '\n';
            const int crlf = next == '\r' && r->pos + 1 < r->len &&
                             r->buf[r->pos + 1] == '\n';
            if (next != ',' && next != '\n' && !crlf)
                return csv_fail_at(r, r->line, r->col,
                                   "expected a comma or the "
                                   "end of the line after a closing quote");
        } else {
            while (r->pos < r->len) {
                const char ch = r->buf[r->pos];
                if (ch == ',' || ch == '\n')
                    break;
                if (ch == '\r' && r->pos + 1 < r->len &&
                    r->buf[r->pos + 1] == '\n')
                    break;
                if (ch == '"')
                    return csv_fail_at(r, r->line, r->col,
                                       "quote inside an "
                                       "unquoted field (quote the whole field "
                                       "and double the quote)");
                if (ch == '\r')
                    return csv_fail_at(r, r->line, r->col,
                                       "carriage return "
                                       "outside quotes");
                if (ch == '\0')
                    return csv_fail_at(r, r->line, r->col, "NUL byte");
                advance(r);
                if (append(r, ch))
                    return -1;
            }
        }
        if (push_field(r, f))
            return -1;
        r->end_line = r->line;
        r->end_col = r->col;
        if (r->pos >= r->len)
            return 1;
        const char ch = r->buf[r->pos];
        advance(r);
        if (ch == ',')
            continue;
        if (ch == '\r')
            advance(r); /* the '\n' of CRLF, checked above */
        return 1;
    }
}

const char *csv_field_text(const csv_reader *r, size_t i)
{
    return r->scratch + r->fields[i].off;
}

static int load_file(csv_reader *r, const char *path, char *err, size_t errlen)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    r->err = err;
    r->errlen = errlen;
    r->line = r->col = 1;
    if (!path || !path[0]) {
        snprintf(err, errlen, "path: must be a non-empty file name");
        return -1;
    }
    return opcost_read_file(path, OPCOST_READ_MAX, &r->buf, &r->len, err,
                            errlen);
}

static void reader_free(csv_reader *r)
{
    free(r->buf);
    free(r->scratch);
    free(r->fields);
}

/* The first record must be exactly one of the header lines names[v]
 * (ncols[v] names each, v < nversions, the last the newest); *version is
 * the index matched. A header that matches none is reported against the
 * version with as many columns, else the newest. */
static int check_header(csv_reader *r, const char *const *const *versions,
                        const size_t *ncols, int nversions, int *version)
{
    const int got = read_record(r);
    if (got < 0)
        return -1;
    if (got == 0)
        return csv_fail_at(r, 1, 1, "empty file: expected the header line");
    int v = nversions - 1;
    for (int k = 0; k < nversions; ++k)
        if (ncols[k] == r->nfields)
            v = k;
    *version = v;
    const char *const *names = versions[v];
    const size_t count = ncols[v];
    const size_t n = r->nfields < count ? r->nfields : count;
    for (size_t i = 0; i < n; ++i) {
        if (strcmp(csv_field_text(r, i), names[i]))
            return csv_fail_at(r, r->fields[i].line, r->fields[i].col,
                               "header column %zu is \"%s\", expected \"%s\"",
                               i + 1, csv_field_text(r, i), names[i]);
    }
    if (r->nfields > count)
        return csv_fail_at(
            r, r->fields[count].line, r->fields[count].col,
            "header has %zu columns, expected %zu: written by a "
            "newer schema version? (this reader knows version %d)",
            r->nfields, count, OPCOST_RESULTS_SCHEMA_VERSION);
    if (r->nfields < count)
        return csv_fail_at(r, r->end_line, r->end_col,
                           "header has %zu columns, expected %zu (missing from "
                           "\"%s\")",
                           r->nfields, count, names[r->nfields]);
    return 0;
}

static int check_field_count(csv_reader *r, const char *const *names,
                             size_t count)
{
    if (r->nfields < count)
        return csv_fail_at(r, r->end_line, r->end_col,
                           "row has %zu fields, expected %zu (missing from "
                           "column %s)",
                           r->nfields, count, names[r->nfields]);
    if (r->nfields > count)
        return csv_fail_at(r, r->fields[count].line, r->fields[count].col,
                           "row has %zu fields, expected %zu", r->nfields,
                           count);
    return 0;
}

int csv_parse_int(const char *s, int64_t *v)
{
    const char *d = s + (*s == '-' || *s == '+');
    if (!*d || strspn(d, "0123456789") != strlen(d))
        return -1;
    errno = 0;
    char *end;
    const long long x = strtoll(s, &end, 10);
    if (errno == ERANGE || *end || x == OPCOST_INT_NA)
        return -1;
    *v = (int64_t)x;
    return 0;
}

int csv_parse_num(const char *s, double *v)
{
    if (!*s || strspn(s, "0123456789+-.eE") != strlen(s) ||
        !strpbrk(s, "0123456789"))
        return -1;
    char *end;
    const double x = strtod(s, &end);
    if (*end || !isfinite(x))
        return -1;
    *v = x;
    return 0;
}

int csv_read_table(const char *path, const char *const *const *versions,
                   const size_t *ncols_of, int nversions, int *version,
                   size_t elem_size,
                   int (*parse)(csv_reader *, void *, const void *),
                   const void *ctx, void **out, size_t *n, char *err,
                   size_t errlen)
{
    *out = NULL;
    *n = 0;
    csv_reader r;
    if (load_file(&r, path, err, errlen)) {
        reader_free(&r);
        return -1;
    }
    char *elems = NULL;
    size_t count = 0, cap = 0;
    int rc = check_header(&r, versions, ncols_of, nversions, version);
    const char *const *names = versions[*version];
    const size_t ncols = ncols_of[*version];
    const c_numeric_scope scope = c_numeric_enter();
    while (rc == 0) {
        const int got = read_record(&r);
        if (got <= 0) {
            rc = got;
            break;
        }
        if ((rc = check_field_count(&r, names, ncols)))
            break;
        if (count == cap) {
            cap = cap ? 2 * cap : 64;
            char *p = realloc(elems, cap * elem_size);
            if (!p) {
                rc = oom(&r);
                break;
            }
            elems = p;
        }
        if ((rc = parse(&r, elems + count * elem_size, ctx)))
            break;
        ++count;
    }
    c_numeric_leave(scope);
    reader_free(&r);
    if (rc) {
        free(elems);
        return -1;
    }
    *out = elems;
    *n = count;
    return 0;
}
