/* Inside results/: the results CSV's schema, one column table from which
 * the header, the writer, the reader and the row rules all follow, the
 * columns each older schema version had (so a file of any version reads
 * into the newest row), and the samples sidecar's columns. Other folders
 * use results_csv.h. */
#ifndef OPCOST_RESULTS_SCHEMA_H
#define OPCOST_RESULTS_SCHEMA_H

#include "results_csv.h"

#include <stddef.h>

typedef enum col_type { T_TEXT, T_INT, T_NUM, T_STATUS, T_CACHE } col_type;

/* A column: its name, the type and place of its field in opcost_result. */
typedef struct column {
    const char *name;
    col_type type;
    size_t offset;
    size_t size;
    int required; /* may not be empty */
    int since;    /* the schema version that added it */
} column;

/* The table, in file order: every column of the newest version.
 * RESULTS_NCOLS is checked against it where it is defined. */
#define RESULTS_NCOLS 73
extern const column results_columns[RESULTS_NCOLS];

/* A row's field of column c, and the value and names of an enum column. */
const void *results_field_ptr(const opcost_result *r, const column *c);
unsigned results_enum_value(const opcost_result *r, const column *c);
const char *const *results_enum_names(const column *c, size_t *count);
/* The table index of a column named name (0 when none is). */
size_t results_column_index(const char *name);

/* The row rules, shared by writer and reader. On failure *bad is the
 * offending column and msg says which rule it breaks. */
int results_check_row(const opcost_result *r, size_t *bad, char *msg,
                      size_t len);

/* The columns of each schema version, in table order: col[v - 1][k] is
 * the table index of version v's k-th column. */
typedef struct results_versions {
    size_t col[OPCOST_RESULTS_SCHEMA_VERSION][RESULTS_NCOLS];
    const char *names[OPCOST_RESULTS_SCHEMA_VERSION][RESULTS_NCOLS];
    size_t n[OPCOST_RESULTS_SCHEMA_VERSION];
} results_versions;

void results_versions_init(results_versions *s);

/* The sidecar's columns; version 2 (results schema 4) added round. */
#define RESULTS_NSAMPLE_COLS 8
#define RESULTS_NSAMPLE_COLS_V1 (RESULTS_NSAMPLE_COLS - 1)
extern const char *const results_sample_columns[RESULTS_NSAMPLE_COLS];

#endif
