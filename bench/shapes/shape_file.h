/* Shape sets: the one parser of the shape files in shapes/ (the format is
 * described in shapes/README.md).
 *
 * A shape file is UTF-8 CSV text. Lines starting with '#' are comments; the
 * comment lines before the column header are returned to the caller, since
 * they name the sources of the set. Blank lines are ignored, "\r\n" line
 * endings and a leading UTF-8 byte-order mark are accepted. The first other
 * line must be exactly OPCOST_SHAPE_HEADER, every later one a row:
 *
 *   op      rms_norm_rows | fused_add_rms_norm
 *   B       rows per call, an integer >= 1
 *   N       row width, an integer >= 1
 *   dtype   float32 | float16 | bfloat16 | float64
 *   layout  contiguous | transposed | row_strided | misaligned
 *   freq    a finite number > 0: the shape's weight within the set
 *
 * Layouts are those of tests/c/c_samples.h: contiguous [B, N]; transposed, a
 * [B, N] view of an [N, B] buffer (strides (1, B)); row_strided, row stride
 * N + 3; misaligned, a storage offset of one element.
 *
 * Every error names file:line, the column and the rule it broke; a file with
 * no rows, or two rows with the same (op, B, N, dtype, layout), is refused. */
#ifndef OPCOST_SHAPE_FILE_H
#define OPCOST_SHAPE_FILE_H

#include "rowops.h"

#include <stddef.h>
#include <stdint.h>

#define OPCOST_SHAPE_HEADER "op,B,N,dtype,layout,freq"

typedef enum opcost_layout {
    OPCOST_CONTIGUOUS = 0,
    OPCOST_TRANSPOSED,
    OPCOST_ROW_STRIDED,
    OPCOST_MISALIGNED,
    OPCOST_LAYOUT_COUNT
} opcost_layout;

const char *opcost_layout_name(opcost_layout layout);

/* Name to enum (the names of rowops_op_name, rowops_dtype_name and
 * opcost_layout_name). 0 on success, -1 for an unknown name. */
int opcost_op_from_name(const char *name, rowops_op *op);
int opcost_dtype_from_name(const char *name, rowops_dtype *dtype);
int opcost_layout_from_name(const char *name, opcost_layout *layout);

typedef struct opcost_shape {
    rowops_op op;
    int64_t B; /* rows */
    int64_t N; /* row width */
    rowops_dtype dtype;
    opcost_layout layout;
    double freq;
    int line; /* 1-based line in the file, for messages */
} opcost_shape;

typedef struct opcost_shape_set {
    char name[64];      /* file name without directory and ".csv" */
    char path[4096];    /* as given to opcost_shape_set_load */
    char *comments;     /* the comment lines before the header, each as in the
                           file ('#' included) and ending in '\n' */
    opcost_shape *rows; /* in file order */
    size_t count;       /* >= 1 */
} opcost_shape_set;

/* Parses the shape file at path into *out. Returns 0, or -1 with a message
 * like "shapes/x.csv:7: column 'N': must be a positive integer, got '0'" in
 * err (*out is then empty and needs no free). */
int opcost_shape_set_load(const char *path, opcost_shape_set *out, char *err,
                          size_t errlen);

void opcost_shape_set_free(opcost_shape_set *set);

/* Where shape-set names resolve by default: the source tree's shapes/
 * (opcost run and opcost shapes check alike, whatever the current
 * directory). */
const char *opcost_default_shapes_dir(void);

/* Finds the file of a shape set: an existing regular file is used as given;
 * a name like "llama-3.1-8b-conv" (no '/', no ".csv") means
 * <shapes_dir>/<name>.csv. Returns 0 with the file in path, or -1 with an
 * error: for an unknown name it lists the sets in shapes_dir. */
int opcost_shape_set_resolve(const char *name_or_file, const char *shapes_dir,
                             char *path, size_t len, char *err, size_t errlen);

/* A positive decimal integer, digits only (no blanks, no sign). Returns 0
 * with the value in *v, -1 if s is not one, -2 if it exceeds INT64_MAX.
 * Shared with the trace reader. */
int opcost_parse_count(const char *s, int64_t *v);

/* Text files read whole and split into lines; shared with the trace reader
 * so both accept the same line endings and refuse the same bytes. */
typedef struct opcost_text {
    char *data;
    char *next; /* start of the next line, NULL at the end */
    int line;   /* number of the line last returned (1-based) */
} opcost_text;

/* Reads path whole. A leading UTF-8 byte-order mark is skipped; a NUL byte
 * is an error (file:line). Returns 0, or -1 with a message in err. */
int opcost_text_open(opcost_text *text, const char *path, char *err,
                     size_t errlen);

/* The next line, NUL-terminated, without its "\n" or "\r\n" (the last line
 * may lack one); NULL after the last line. */
char *opcost_text_line(opcost_text *text);

void opcost_text_close(opcost_text *text);

#endif
