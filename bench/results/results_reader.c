/* The results CSV's reader (results_csv.h): the exact header of any
 * schema version from 1 on, each record's fields parsed by the column
 * table, then the row rules; a column an older version lacks stays "does
 * not apply", so old results files keep loading. */
#define _POSIX_C_SOURCE 200809L
#include "csv_reader.h"
#include "results_schema.h"

#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int opcost_is_results_csv(const char *path)
{
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return 0;
    struct stat st;
    char head[16] = "";
    ssize_t n = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        n = read(fd, head, sizeof head - 1);
    close(fd);
    head[n > 0 ? n : 0] = '\0';
    return !strncmp(head, "schema_version,", 15);
}

/* Field k of the record into table column i of row. */
static int parse_field(csv_reader *r, size_t k, size_t i, opcost_result *row)
{
    const column *c = &results_columns[i];
    const csv_field *f = &r->fields[k];
    const char *s = csv_field_text(r, k);
    void *p = (char *)row + c->offset;
    if (!f->len && c->required)
        return csv_fail_at(r, f->line, f->col, "column %s: is required (empty)",
                           c->name);
    switch (c->type) {
    case T_TEXT:
        if (f->len >= c->size)
            return csv_fail_at(r, f->line, f->col,
                               "column %s: text of %zu "
                               "bytes is longer than the limit of %zu",
                               c->name, f->len, c->size - 1);
        memcpy(p, s, f->len + 1);
        return 0;
    case T_INT:
        if (!f->len) {
            *(int64_t *)p = OPCOST_INT_NA;
            return 0;
        }
        if (csv_parse_int(s, p))
            return csv_fail_at(r, f->line, f->col,
                               "column %s: \"%s\" is not an "
                               "integer in range",
                               c->name, s);
        return 0;
    case T_NUM:
        if (!f->len) {
            *(double *)p = NAN;
            return 0;
        }
        if (csv_parse_num(s, p))
            return csv_fail_at(r, f->line, f->col,
                               "column %s: \"%s\" is not a "
                               "finite decimal number",
                               c->name, s);
        return 0;
    case T_STATUS:
    case T_CACHE: {
        size_t count;
        const char *const *names = results_enum_names(c, &count);
        for (size_t k = 0; k < count; ++k) {
            if (!strcmp(s, names[k])) {
                if (c->type == T_STATUS)
                    *(opcost_status *)p = (opcost_status)k;
                else
                    *(opcost_cache_state *)p = (opcost_cache_state)k;
                return 0;
            }
        }
        char list[128] = "";
        for (size_t k = 0; k < count; ++k)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
                     k ? ", " : "", names[k]);
        return csv_fail_at(r, f->line, f->col,
                           "column %s: \"%s\" is not one of "
                           "%s",
                           c->name, s, list);
    }
    }
    return 0;
}

/* What parse_result reads a record with: the file's schema version. */
typedef struct result_ctx {
    const results_versions *schema;
    int index; /* version - 1, set by csv_read_table from the header */
} result_ctx;

/* One record of the results CSV into *row: fields, then the row rules. A
 * column the file's version lacks stays "does not apply". */
static int parse_result(csv_reader *r, void *elem, const void *ctx)
{
    const result_ctx *c = ctx;
    const size_t *col = c->schema->col[c->index];
    const int version = c->index + 1;
    opcost_result *row = elem;
    opcost_result_init(row);
    int rc = 0;
    for (size_t k = 0; k < r->nfields && rc == 0; ++k)
        rc = parse_field(r, k, col[k], row);
    if (rc)
        return rc;
    char msg[256];
    size_t bad;
    if (row->schema_version != version)
        return csv_fail_at(r, r->fields[0].line, r->fields[0].col,
                           "schema_version: %" PRId64 " is not %d, the version "
                           "of the file's header",
                           row->schema_version, version);
    if (results_check_row(row, &bad, msg, sizeof msg)) {
        size_t k = 0;
        while (k + 1 < r->nfields && col[k] != bad)
            ++k;
        return csv_fail_at(r, r->fields[k].line, r->fields[k].col, "%s", msg);
    }
    return 0;
}

int opcost_results_read(const char *path, opcost_result **rows, size_t *n,
                        char *err, size_t errlen)
{
    results_versions schema;
    results_versions_init(&schema);
    const char *const *versions[OPCOST_RESULTS_SCHEMA_VERSION];
    for (int v = 0; v < OPCOST_RESULTS_SCHEMA_VERSION; ++v)
        versions[v] = schema.names[v];
    /* csv_read_table sets ctx.index from the header, before any record */
    result_ctx ctx = {&schema, OPCOST_RESULTS_SCHEMA_VERSION - 1};
    void *out;
    const int rc = csv_read_table(
        path, versions, schema.n, OPCOST_RESULTS_SCHEMA_VERSION, &ctx.index,
        sizeof **rows, parse_result, &ctx, &out, n, err, errlen);
    *rows = out;
    return rc;
}

int opcost_results_check_file(const char *path, char *err, size_t errlen)
{
    opcost_result *rows;
    size_t n;
    if (opcost_results_read(path, &rows, &n, err, errlen))
        return -1;
    free(rows);
    return 0;
}

int opcost_result_unsettled(const opcost_result *row)
{
    return !strncmp(row->note, OPCOST_NOTE_UNSETTLED,
                    sizeof OPCOST_NOTE_UNSETTLED - 1);
}
