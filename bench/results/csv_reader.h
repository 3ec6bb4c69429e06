/* Inside results/: the reading of both results files (the main CSV and
 * its samples sidecar): an RFC 4180 tokenizer over the whole file, the
 * exact header of one of its versions, records of exactly its fields,
 * each parsed by the caller, and the strict number parsers they share.
 * Every refusal names path:line:column. */
#ifndef OPCOST_CSV_READER_H
#define OPCOST_CSV_READER_H

#include <stddef.h>
#include <stdint.h>

typedef struct csv_field {
    size_t off, len; /* into scratch, NUL-terminated */
    int line, col;   /* 1-based; col counts bytes */
} csv_field;

typedef struct csv_reader {
    const char *path;
    char *buf;
    size_t len, pos;
    int line, col;
    char *scratch;
    size_t used, cap;
    csv_field *fields;
    size_t nfields, fcap;
    int end_line, end_col; /* where the last record's last field ended */
    char *err;
    size_t errlen;
} csv_reader;

/* Fails with path:line:col: and the message in r's err; returns -1. */
int csv_fail_at(csv_reader *r, int line, int col, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Field i of the record just read, NUL-terminated. */
const char *csv_field_text(const csv_reader *r, size_t i);

/* Strict integer: optional sign and digits only (never OPCOST_INT_NA). */
int csv_parse_int(const char *s, int64_t *v);
/* Strict decimal number: no spaces, hex, inf or nan. */
int csv_parse_num(const char *s, double *v);

/* The one reading loop of both files: the exact header, then records of
 * exactly ncols fields, each parsed by parse into an array of elem_size
 * elements grown as needed. *out is malloc'd; NULL and *n = 0 on error. */
int csv_read_table(const char *path, const char *const *const *versions,
                   const size_t *ncols_of, int nversions, int *version,
                   size_t elem_size,
                   int (*parse)(csv_reader *, void *, const void *),
                   const void *ctx, void **out, size_t *n, char *err,
                   size_t errlen);

#endif
