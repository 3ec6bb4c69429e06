/* The results CSV's writer (results_csv.h): RFC 4180 text, a field
 * holding a comma, quote, CR or LF quoted with its quotes doubled, lines
 * ending in LF; numbers in the C locale whatever the process locale:
 * doubles with %.6g (6 significant digits, relative error <= 5e-7, far
 * below run-to-run noise), integers exactly. Every row is written as the
 * newest schema version. */
#define _POSIX_C_SOURCE 200809L
#include "results_writer.h"
#include "c_numeric.h"
#include "results_schema.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void opcost_csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    putc('"', f);
    for (; *s; ++s) {
        if (*s == '"')
            putc('"', f);
        putc(*s, f);
    }
    putc('"', f);
}

static void write_row(FILE *f, const opcost_result *r)
{
    for (size_t i = 0; i < RESULTS_NCOLS; ++i) {
        const column *c = &results_columns[i];
        const void *p = results_field_ptr(r, c);
        if (i)
            putc(',', f);
        if (c->type == T_TEXT) {
            opcost_csv_text(f, p);
        } else if (c->offset == offsetof(opcost_result, schema_version)) {
            /* every column of this version is written: a row read from an
             * older file is written as this version */
            fprintf(f, "%d", OPCOST_RESULTS_SCHEMA_VERSION);
        } else if (c->type == T_INT) {
            if (*(const int64_t *)p != OPCOST_INT_NA)
                fprintf(f, "%" PRId64, *(const int64_t *)p);
        } else if (c->type == T_NUM) {
            if (!isnan(*(const double *)p))
                fprintf(f, "%.6g", *(const double *)p);
        } else {
            size_t count;
            fputs(results_enum_names(c, &count)[results_enum_value(r, c)], f);
        }
    }
    putc('\n', f);
}

/* The header (optionally) and rows, as the writer formats them. */
static void print_rows(FILE *f, const opcost_result *rows, size_t n, int header)
{
    const c_numeric_scope scope = c_numeric_enter();
    for (size_t i = 0; header && i < RESULTS_NCOLS; ++i)
        fprintf(f, "%s%s", i ? "," : "", results_columns[i].name);
    if (header)
        putc('\n', f);
    for (size_t i = 0; i < n; ++i)
        write_row(f, &rows[i]);
    c_numeric_leave(scope);
}

int results_open_temp(opcost_outfile *o, const char *path,
                      const opcost_result *rows, size_t n, char *err,
                      size_t errlen)
{
    if (!path || !path[0]) {
        snprintf(err, errlen, "path: must be a non-empty file name");
        return -1;
    }
    if (n && !rows) {
        snprintf(err, errlen, "rows: NULL with n = %zu", n);
        return -1;
    }
    for (size_t i = 0; i < n; ++i) {
        char where[64];
        snprintf(where, sizeof where, "rows[%zu]", i);
        if (opcost_result_check(&rows[i], where, err, errlen))
            return -1;
    }
    if (opcost_outfile_open(o, "results", path, err, errlen))
        return -1;
    print_rows(o->f, rows, n, 1);
    return 0;
}

int opcost_results_write(const char *path, const opcost_result *rows, size_t n,
                         char *err, size_t errlen)
{
    opcost_outfile o;
    return results_open_temp(&o, path, rows, n, err, errlen) ||
                   opcost_outfile_commit(&o, err, errlen)
               ? -1
               : 0;
}

int opcost_results_fprint(FILE *f, const opcost_result *rows, size_t n,
                          int header, char *err, size_t errlen)
{
    for (size_t i = 0; i < n; ++i) {
        char where[64];
        snprintf(where, sizeof where, "rows[%zu]", i);
        if (opcost_result_check(&rows[i], where, err, errlen))
            return -1;
    }
    print_rows(f, rows, n, header);
    return 0;
}
