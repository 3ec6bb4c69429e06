/* The one parser of shape files; the format is in shape_file.h. */
#define _POSIX_C_SOURCE 200809L /* opendir, stat: C11 cannot list a dir */

#include "shape_file.h"
#include "errorf.h"
#include "infile.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Quoted values are cut here so one huge field cannot swamp a message. */
#define QUOTE_MAX 80

/* "..." when a quoted value was cut at QUOTE_MAX. */
static const char *cut(const char *s)
{
    return strlen(s) > QUOTE_MAX ? "..." : "";
}

/* ---- text files ---------------------------------------------------- */

int opcost_text_open(opcost_text *text, const char *path, char *err,
                     size_t errlen)
{
    memset(text, 0, sizeof *text);
    char *data;
    size_t len;
    if (opcost_read_file(path, OPCOST_READ_MAX, &data, &len, err, errlen))
        return -1;
    const char *nul = memchr(data, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *p = data; p < nul; ++p)
            line += *p == '\n';
        free(data);
        return opcost_errorf(err, errlen,
                             "%s:%d: contains a NUL byte; expected UTF-8 text",
                             path, line);
    }
    text->data = data;
    /* Editors on some systems start UTF-8 files with a byte-order mark. */
    text->next = strncmp(data, "\xEF\xBB\xBF", 3) == 0 ? data + 3 : data;
    return 0;
}

char *opcost_text_line(opcost_text *text)
{
    char *s = text->next;
    if (!s || !*s) {
        text->next = NULL;
        return NULL;
    }
    char *nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        text->next = nl + 1;
    } else {
        text->next = NULL;
    }
    const size_t n = strlen(s);
    if (n && s[n - 1] == '\r')
        s[n - 1] = '\0';
    text->line++;
    return s;
}

void opcost_text_close(opcost_text *text)
{
    free(text->data);
    memset(text, 0, sizeof *text);
}

/* ---- names ----------------------------------------------------------- */

static const char *const layout_names[OPCOST_LAYOUT_COUNT] = {
    "contiguous", "transposed", "row_strided", "misaligned"};

const char *opcost_layout_name(opcost_layout layout)
{
    return (unsigned)layout < OPCOST_LAYOUT_COUNT ? layout_names[layout]
                                                  : "unknown";
}

int opcost_op_from_name(const char *name, rowops_op *op)
{
    return rowops_op_from_name(name, op);
}

int opcost_dtype_from_name(const char *name, rowops_dtype *dtype)
{
    for (int i = 0; i < ROWOPS_DTYPE_COUNT; ++i)
        if (strcmp(name, rowops_dtype_name((rowops_dtype)i)) == 0) {
            *dtype = (rowops_dtype)i;
            return 0;
        }
    return -1;
}

int opcost_layout_from_name(const char *name, opcost_layout *layout)
{
    for (int i = 0; i < OPCOST_LAYOUT_COUNT; ++i)
        if (strcmp(name, layout_names[i]) == 0) {
            *layout = (opcost_layout)i;
            return 0;
        }
    return -1;
}

/* ---- rows ------------------------------------------------------------ */

enum { COL_OP, COL_B, COL_N, COL_DTYPE, COL_LAYOUT, COL_FREQ, COLS };
static const char *const col_names[COLS] = {"op",    "B",      "N",
                                            "dtype", "layout", "freq"};

/* The accepted values of an enum column, for its error message. */
static void enum_choices(int col, char *buf, size_t len)
{
    int count = col == COL_OP      ? ROWOPS_OP_COUNT
                : col == COL_DTYPE ? ROWOPS_DTYPE_COUNT
                                   : OPCOST_LAYOUT_COUNT;
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < count && used < len; ++i) {
        const char *name = col == COL_OP ? rowops_op_name((rowops_op)i)
                           : col == COL_DTYPE
                               ? rowops_dtype_name((rowops_dtype)i)
                               : opcost_layout_name((opcost_layout)i);
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? ", " : "",
                                 name);
    }
}

/* Digits only: strtoll alone would accept leading blanks and signs. */
int opcost_parse_count(const char *s, int64_t *v)
{
    if (!isdigit((unsigned char)s[0]))
        return -1;
    char *end;
    errno = 0;
    const long long x = strtoll(s, &end, 10);
    if (*end)
        return -1;
    if (errno == ERANGE)
        return -2;
    if (x < 1)
        return -1;
    *v = (int64_t)x;
    return 0;
}

static int parse_row(char *line, const char *path, int lineno,
                     opcost_shape *row, char *err, size_t errlen)
{
    char *field[COLS];
    int n = 0;
    for (char *p = line;; ++p) {
        if (n < COLS)
            field[n] = p;
        n++;
        p = strchr(p, ',');
        if (!p)
            break;
        *p = '\0';
    }
    if (n != COLS)
        return opcost_errorf(err, errlen,
                             "%s:%d: expected %d columns (" OPCOST_SHAPE_HEADER
                             "), got %d",
                             path, lineno, COLS, n);
    row->line = lineno;
    for (int c = 0; c < COLS; ++c) {
        const char *s = field[c];
        int bad = 0;
        switch (c) {
        case COL_OP: bad = opcost_op_from_name(s, &row->op); break;
        case COL_DTYPE: bad = opcost_dtype_from_name(s, &row->dtype); break;
        case COL_LAYOUT: bad = opcost_layout_from_name(s, &row->layout); break;
        case COL_B:
        case COL_N: {
            const int r = opcost_parse_count(s, c == COL_B ? &row->B : &row->N);
            if (r == -2)
                return opcost_errorf(
                    err, errlen,
                    "%s:%d: column '%s': must be a positive integer "
                    "no larger than %lld, got '%.*s%s'",
                    path, lineno, col_names[c], (long long)INT64_MAX, QUOTE_MAX,
                    s, cut(s));
            if (r)
                return opcost_errorf(err, errlen,
                                     "%s:%d: column '%s': must be a positive "
                                     "integer, got '%.*s%s'",
                                     path, lineno, col_names[c], QUOTE_MAX, s,
                                     cut(s));
            break;
        }
        case COL_FREQ: {
            char *end;
            row->freq = strtod(s, &end);
            if (end == s || *end || isspace((unsigned char)s[0]) ||
                !isfinite(row->freq) || row->freq <= 0)
                return opcost_errorf(
                    err, errlen,
                    "%s:%d: column 'freq': must be a finite number "
                    "> 0, got '%.*s%s'",
                    path, lineno, QUOTE_MAX, s, cut(s));
            break;
        }
        }
        if (bad) {
            char choices[160];
            enum_choices(c, choices, sizeof choices);
            return opcost_errorf(
                err, errlen,
                "%s:%d: column '%s': must be one of %s; got '%.*s%s'", path,
                lineno, col_names[c], choices, QUOTE_MAX, s, cut(s));
        }
    }
    return 0;
}

/* Rows ordered by (op, B, N, dtype, layout), then line: equal keys end up
 * adjacent, the earliest first. */
static int row_key_cmp(const void *pa, const void *pb)
{
    const opcost_shape *a = *(const opcost_shape *const *)pa;
    const opcost_shape *b = *(const opcost_shape *const *)pb;
    const int64_t ka[] = {a->op, a->B, a->N, a->dtype, a->layout, a->line};
    const int64_t kb[] = {b->op, b->B, b->N, b->dtype, b->layout, b->line};
    for (size_t i = 0; i < sizeof ka / sizeof ka[0]; ++i)
        if (ka[i] != kb[i])
            return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

static int same_key(const opcost_shape *a, const opcost_shape *b)
{
    return a->op == b->op && a->B == b->B && a->N == b->N &&
           a->dtype == b->dtype && a->layout == b->layout;
}

/* Reports the first line (in file order) that repeats an earlier row. */
static int check_duplicates(const opcost_shape_set *set, char *err,
                            size_t errlen)
{
    const opcost_shape **order = malloc(set->count * sizeof *order);
    if (!order)
        return opcost_errorf(err, errlen, "%s: out of memory", set->path);
    for (size_t i = 0; i < set->count; ++i)
        order[i] = &set->rows[i];
    qsort(order, set->count, sizeof *order, row_key_cmp);
    const opcost_shape *dup = NULL, *first = NULL;
    size_t group = 0;
    for (size_t i = 1; i < set->count; ++i) {
        if (!same_key(order[i], order[group])) {
            group = i;
            continue;
        }
        if (!dup || order[i]->line < dup->line) {
            dup = order[i];
            first = order[group];
        }
    }
    free(order);
    if (!dup)
        return 0;
    return opcost_errorf(
        err, errlen,
        "%s:%d: row repeats line %d (%s,%lld,%lld,%s,%s): each (op, "
        "B, N, dtype, layout) may appear once",
        set->path, dup->line, first->line, rowops_op_name(dup->op),
        (long long)dup->B, (long long)dup->N, rowops_dtype_name(dup->dtype),
        opcost_layout_name(dup->layout));
}

/* ---- sets ------------------------------------------------------------ */

static int set_name(opcost_shape_set *set, const char *path, char *err,
                    size_t errlen)
{
    if (strlen(path) >= sizeof set->path)
        return opcost_errorf(err, errlen,
                             "%.64s...: path longer than %zu bytes", path,
                             sizeof set->path - 1);
    strcpy(set->path, path);
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".csv") == 0)
        n -= 4;
    if (n >= sizeof set->name)
        return opcost_errorf(
            err, errlen,
            "%s: a shape set name (the file name without .csv) has "
            "at most %zu characters, this one %zu",
            path, sizeof set->name - 1, n);
    memcpy(set->name, base, n);
    set->name[n] = '\0';
    return 0;
}

/* Appends one comment line (and '\n') to set->comments. */
static int add_comment(opcost_shape_set *set, size_t *used, const char *line)
{
    const size_t n = strlen(line);
    char *grown = realloc(set->comments, *used + n + 2);
    if (!grown)
        return -1;
    set->comments = grown;
    memcpy(grown + *used, line, n);
    *used += n;
    grown[(*used)++] = '\n';
    grown[*used] = '\0';
    return 0;
}

static int add_row(opcost_shape_set *set, size_t *cap, const opcost_shape *r)
{
    if (set->count == *cap) {
        const size_t grown_cap = *cap ? *cap * 2 : 64;
        opcost_shape *grown = realloc(set->rows, grown_cap * sizeof *grown);
        if (!grown)
            return -1;
        set->rows = grown;
        *cap = grown_cap;
    }
    set->rows[set->count++] = *r;
    return 0;
}

static int parse_lines(opcost_text *text, opcost_shape_set *set, char *err,
                       size_t errlen)
{
    const char *path = set->path;
    size_t comments_used = 0, cap = 0;
    int header_line = 0;
    char *line;
    set->comments = calloc(1, 1); /* "" until a comment is added */
    if (!set->comments)
        return opcost_errorf(err, errlen, "%s: out of memory", path);
    while ((line = opcost_text_line(text))) {
        if (line[0] == '#') {
            if (!header_line && add_comment(set, &comments_used, line) != 0)
                return opcost_errorf(err, errlen, "%s: out of memory", path);
            continue;
        }
        if (line[0] == '\0')
            continue;
        if (!header_line) {
            if (strcmp(line, OPCOST_SHAPE_HEADER) != 0)
                return opcost_errorf(err, errlen,
                                     "%s:%d: header must be exactly "
                                     "'" OPCOST_SHAPE_HEADER "', got '%.*s%s'",
                                     path, text->line, QUOTE_MAX, line,
                                     cut(line));
            header_line = text->line;
            continue;
        }
        opcost_shape row;
        if (parse_row(line, path, text->line, &row, err, errlen) != 0)
            return -1;
        if (add_row(set, &cap, &row) != 0)
            return opcost_errorf(err, errlen, "%s: out of memory", path);
    }
    if (!header_line)
        return opcost_errorf(err, errlen,
                             "%s:%d: end of file before the header "
                             "'" OPCOST_SHAPE_HEADER "'",
                             path, text->line + 1);
    if (set->count == 0)
        return opcost_errorf(
            err, errlen,
            "%s:%d: the header is followed by no rows; a shape set "
            "needs at least one",
            path, header_line);
    return check_duplicates(set, err, errlen);
}

int opcost_shape_set_load(const char *path, opcost_shape_set *out, char *err,
                          size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (set_name(out, path, err, errlen) != 0)
        return -1;
    opcost_text text;
    if (opcost_text_open(&text, path, err, errlen) != 0)
        return -1;
    const int r = parse_lines(&text, out, err, errlen);
    opcost_text_close(&text);
    if (r != 0)
        opcost_shape_set_free(out);
    return r;
}

void opcost_shape_set_free(opcost_shape_set *set)
{
    free(set->comments);
    free(set->rows);
    memset(set, 0, sizeof *set);
}

/* ---- resolving names ------------------------------------------------- */

static int is_regular_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static int str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "a, b, c": the shape sets (*.csv) in dir, sorted, into buf. */
static void list_sets(const char *dir, char *buf, size_t len)
{
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(buf, len, "(cannot list %s: %s)", dir, strerror(errno));
        return;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    const struct dirent *e;
    while ((e = readdir(d))) {
        const size_t n = strlen(e->d_name);
        if (n <= 4 || strcmp(e->d_name + n - 4, ".csv") != 0)
            continue;
        if (count == cap) {
            cap = cap ? cap * 2 : 16;
            char **grown = realloc(names, cap * sizeof *grown);
            if (!grown)
                break;
            names = grown;
        }
        names[count] = malloc(n - 3);
        if (!names[count])
            break;
        memcpy(names[count], e->d_name, n - 4);
        names[count++][n - 4] = '\0';
    }
    closedir(d);
    qsort(names, count, sizeof *names, str_ptr_cmp);
    size_t used = 0;
    buf[0] = '\0';
    if (count == 0)
        snprintf(buf, len, "(none)");
    for (size_t i = 0; i < count; ++i) {
        if (used < len)
            used += (size_t)snprintf(buf + used, len - used, "%s%s",
                                     i ? ", " : "", names[i]);
        free(names[i]);
    }
    free(names);
}

#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

const char *opcost_default_shapes_dir(void)
{
    return OPCOST_SOURCE_DIR "/shapes";
}

int opcost_shape_set_resolve(const char *name_or_file, const char *shapes_dir,
                             char *path, size_t len, char *err, size_t errlen)
{
    if (is_regular_file(name_or_file)) {
        if (strlen(name_or_file) >= len)
            return opcost_errorf(err, errlen, "%s: path longer than %zu bytes",
                                 name_or_file, len - 1);
        strcpy(path, name_or_file);
        return 0;
    }
    /* With a directory part or a .csv suffix it was meant as a file. */
    const size_t n = strlen(name_or_file);
    if (strchr(name_or_file, '/') ||
        (n >= 4 && strcmp(name_or_file + n - 4, ".csv") == 0)) {
        struct stat st;
        if (stat(name_or_file, &st) != 0)
            return opcost_errorf(err, errlen, "%s: cannot open: %s",
                                 name_or_file, strerror(errno));
        return opcost_errorf(err, errlen, "%s: not a regular file",
                             name_or_file);
    }
    const int w = snprintf(path, len, "%s/%s.csv", shapes_dir, name_or_file);
    if (n && w >= 0 && (size_t)w < len && is_regular_file(path))
        return 0;
    char sets[1024];
    list_sets(shapes_dir, sets, sizeof sets);
    return opcost_errorf(
        err, errlen,
        "unknown shape set '%s': not a file, nor a name in %s/; "
        "available: %s",
        name_or_file, shapes_dir, sets);
}
