/* One column table drives the header, the writer, the parser and the
 * checks. Text is RFC 4180: a field holding a comma, quote, CR or LF is
 * quoted, with quotes doubled; lines end in LF (the parser also accepts
 * CRLF). Numbers are written in the C locale whatever the process locale:
 * doubles with %.6g (6 significant digits, relative error <= 5e-7, far
 * below run-to-run noise), sidecar samples with %.9g (1 ns below 1 s) so
 * statistics recomputed from the sidecar match; integers exactly. */
#define _POSIX_C_SOURCE 200809L
#include "results_csv.h"
#include "infile.h"
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *opcost_attribution_source_name(opcost_attribution_source s)
{
    static const char *const names[] = {"differential", "record_function",
                                        "cupti"};
    return (unsigned)s < OPCOST_ATTRIBUTION_SOURCE_COUNT ? names[s] : "?";
}

typedef enum col_type { T_TEXT, T_INT, T_NUM, T_STATUS, T_CACHE } col_type;

typedef struct column {
    const char *name;
    col_type type;
    size_t offset;
    size_t size;
    int required; /* may not be empty */
    int since;    /* the schema version that added it */
} column;

/* The type comes from the struct member itself, so table and struct cannot
 * disagree; the two enums are named explicitly (both are unsigned int). */
#define MEMBER(f) (((opcost_result *)0)->f)
#define KIND(f)                                                                \
    _Generic(MEMBER(f), char * : T_TEXT, int64_t : T_INT, double : T_NUM)
#define SIZE(f) sizeof MEMBER(f)
#define COL(f, req) #f, KIND(f), offsetof(opcost_result, f), SIZE(f), req
#define ENUM_COL(f, t) #f, t, offsetof(opcost_result, f), SIZE(f), 1

static const column columns[] = {
    {COL(schema_version, 1), 1},
    {COL(run_id, 1), 1},
    {COL(timestamp_utc, 1), 1},
    {COL(git_sha, 0), 1},
    {COL(host, 0), 1},
    {COL(cpu, 0), 1},
    {COL(gpu, 0), 1},
    {COL(torch_version, 0), 1},
    {COL(device, 0), 1},
    {COL(threads, 0), 1},
    {COL(distribution, 0), 1},
    {COL(op, 1), 1},
    {COL(B, 0), 1},
    {COL(N, 0), 1},
    {COL(dtype, 0), 1},
    {COL(weight_dtype, 0), 1},
    {COL(layout, 0), 1},
    {COL(freq, 0), 1},
    {COL(path, 1), 1},
    {COL(variant, 0), 1},
    {COL(dispatch_path, 0), 1},
    {ENUM_COL(cache_state, T_CACHE), 1},
    {ENUM_COL(status, T_STATUS), 1},
    {COL(reps, 0), 1},
    {COL(n_samples, 0), 1},
    {COL(median_us, 0), 1},
    {COL(min_us, 0), 1},
    {COL(p90_us, 0), 1},
    {COL(mean_us, 0), 1},
    {COL(stddev_us, 0), 1},
    {COL(ci95_rel, 0), 1},
    {COL(compile_ms, 0), 1},
    {COL(kernel_us, 0), 1},
    {COL(conversion_us, 0), 1},
    {COL(launch_us, 0), 1},
    {COL(dispatch_us, 0), 1},
    {COL(idle_us, 0), 1},
    {COL(bytes, 0), 1},
    {COL(gbps, 0), 1},
    {COL(ceiling_gbps, 0), 1},
    {COL(frac_of_peak, 0), 1},
    {COL(note, 0), 1},
    /* version 2: measured attribution, the GPU, ceilings per op mix */
    {COL(device_us, 0), 2},
    {COL(other_kernel_us, 0), 2},
    {COL(attribution_source, 0), 2},
    {COL(tracer_overhead, 0), 2},
    {COL(sm_clock_mhz, 0), 2},
    {COL(throttle_reasons, 0), 2},
    {COL(ceiling_kind, 0), 2},
    {COL(working_set_bytes, 0), 2},
    {COL(ci95_pooled_rel, 0), 2},
    /* version 3: intervals that include the run-to-run noise */
    {COL(ci95_reps_rel, 0), 3},
    {COL(run_noise_rel, 0), 3},
    /* version 4: paired measurement in rounds */
    {COL(paired_with, 0), 4},
    {COL(ratio, 0), 4},
    {COL(ratio_ci95_rel, 0), 4},
    {COL(p_value, 0), 4},
    {COL(verdict, 0), 4},
    {COL(rounds, 0), 4},
    {COL(frac_of_peak_ci95_rel, 0), 4},
    {COL(frac_of_peak_best, 0), 4},
    {COL(probe_gbps, 0), 4},
    {COL(stopped_by, 0), 4},
    {COL(side, 0), 4},
    /* version 5: the model paths' evidence */
    {COL(norm_share, 0), 5},
    {COL(graph_breaks, 0), 5},
    {COL(recompiles, 0), 5},
    {COL(op_calls, 0), 5},
    {COL(copies_around, 0), 5},
    {COL(fusion_boundary, 0), 5},
    /* version 6: the bandwidth state of the paired fraction's rounds */
    {COL(probe_state, 0), 6},
    /* version 7: the measured error at verification */
    {COL(out_err_units, 0), 7},
    {COL(residual_err_units, 0), 7},
};
#define NCOLS (sizeof columns / sizeof columns[0])

static const char *const status_names[] = {"ok", "skipped", "wrong", "error"};
static const char *const cache_names[] = {"cold", "warm"};
#define NSTATUS (sizeof status_names / sizeof status_names[0])
#define NCACHE (sizeof cache_names / sizeof cache_names[0])

/* The sidecar's columns; version 2 (results schema 4) added round. */
static const char *const sample_columns[] = {
    "run_id", "point", "path", "variant", "rep", "sample", "us", "round"};
#define NSAMPLE_COLS (sizeof sample_columns / sizeof sample_columns[0])
#define NSAMPLE_COLS_V1 (NSAMPLE_COLS - 1)

size_t opcost_results_ncolumns(void)
{
    return NCOLS;
}

const char *opcost_results_column_name(size_t i)
{
    return i < NCOLS ? columns[i].name : NULL;
}

int opcost_results_header(char *buf, size_t len)
{
    size_t used = 0;
    for (size_t i = 0; i < NCOLS; ++i) {
        const int w = snprintf(buf + used, len > used ? len - used : 0, "%s%s",
                               i ? "," : "", columns[i].name);
        used += (size_t)w;
    }
    return used < len ? (int)used : -1;
}

const char *opcost_status_name(opcost_status s)
{
    return (unsigned)s < NSTATUS ? status_names[s] : "?";
}

const char *opcost_cache_state_name(opcost_cache_state c)
{
    return (unsigned)c < NCACHE ? cache_names[c] : "?";
}

void opcost_result_init(opcost_result *row)
{
    memset(row, 0, sizeof *row);
    for (size_t i = 0; i < NCOLS; ++i) {
        void *p = (char *)row + columns[i].offset;
        if (columns[i].type == T_INT)
            *(int64_t *)p = OPCOST_INT_NA;
        else if (columns[i].type == T_NUM)
            *(double *)p = NAN;
    }
    row->schema_version = OPCOST_RESULTS_SCHEMA_VERSION;
    row->status = OPCOST_STATUS_OK;
    row->cache_state = OPCOST_CACHE_WARM;
}

/* ---- Field access through the table. */
static const void *field_ptr(const opcost_result *r, const column *c)
{
    return (const char *)r + c->offset;
}

static unsigned enum_value(const opcost_result *r, const column *c)
{
    return c->type == T_STATUS
               ? (unsigned)*(const opcost_status *)field_ptr(r, c)
               : (unsigned)*(const opcost_cache_state *)field_ptr(r, c);
}

static const char *const *enum_names(const column *c, size_t *count)
{
    *count = c->type == T_STATUS ? NSTATUS : NCACHE;
    return c->type == T_STATUS ? status_names : cache_names;
}

static size_t column_index(const char *name)
{
    for (size_t i = 0; i < NCOLS; ++i)
        if (!strcmp(columns[i].name, name))
            return i;
    return 0;
}

/* The text columns of version 4 that hold one of a few names (or are
 * empty: does not apply). */
static int check_names(const opcost_result *r, size_t *bad, char *msg,
                       size_t len)
{
    static const struct {
        const char *column;
        size_t offset;
        const char *names[6];
    } named[] = {
        {"verdict",
         offsetof(opcost_result, verdict),
         {"same", "faster", "slower", "unsure"}},
        {"stopped_by",
         offsetof(opcost_result, stopped_by),
         {"target", "budget", "rounds", "interrupted", "failed"}},
        {"side", offsetof(opcost_result, side), {"base", "new"}},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; ++i) {
        const char *v = (const char *)r + named[i].offset;
        int known = !v[0];
        char list[128] = "";
        for (int k = 0; k < 6 && named[i].names[k]; ++k) {
            known |= !strcmp(v, named[i].names[k]);
            const size_t u = strlen(list);
            snprintf(list + u, sizeof list - u, "%s%s", k ? ", " : "",
                     named[i].names[k]);
        }
        if (!known) {
            *bad = column_index(named[i].column);
            snprintf(msg, len, "%s: \"%.64s\" is not one of %s (or empty)",
                     named[i].column, v, list);
            return -1;
        }
    }
    return 0;
}

/* ---- Row rules, shared by writer and parser. On failure *bad is the
 * offending column and msg says which rule it breaks. */
static int check_row(const opcost_result *r, size_t *bad, char *msg, size_t len)
{
    for (size_t i = 0; i < NCOLS; ++i) {
        const column *c = &columns[i];
        const void *p = field_ptr(r, c);
        *bad = i;
        if (c->type == T_TEXT) {
            const char *s = p;
            if (!memchr(s, '\0', c->size)) {
                snprintf(msg, len,
                         "%s: text is not NUL-terminated within "
                         "its %zu bytes",
                         c->name, c->size);
                return -1;
            }
            if (c->required && !s[0]) {
                snprintf(msg, len, "%s: is required (empty)", c->name);
                return -1;
            }
        } else if (c->type == T_INT) {
            const int64_t v = *(const int64_t *)p;
            if (v == OPCOST_INT_NA) {
                if (c->required) {
                    snprintf(msg, len, "%s: is required (empty)", c->name);
                    return -1;
                }
            } else if (c->offset == offsetof(opcost_result, schema_version) &&
                       (v < 1 || v > OPCOST_RESULTS_SCHEMA_VERSION)) {
                snprintf(msg, len,
                         "schema_version: %" PRId64 " is not a version this "
                         "code reads (1 to %d)",
                         v, OPCOST_RESULTS_SCHEMA_VERSION);
                return -1;
            } else if (v < 0) {
                /* Every schema-1 number is a count, size, time or ratio. */
                snprintf(msg, len, "%s: %" PRId64 " must be >= 0", c->name, v);
                return -1;
            }
        } else if (c->type == T_NUM) {
            const double v = *(const double *)p;
            if (!isnan(v) && !(isfinite(v) && v >= 0.0)) {
                snprintf(msg, len,
                         "%s: %g must be finite and >= 0 (NAN for "
                         "empty)",
                         c->name, v);
                return -1;
            }
        } else {
            size_t count;
            enum_names(c, &count);
            if (enum_value(r, c) >= count) {
                snprintf(msg, len, "%s: enum value %u is out of range", c->name,
                         enum_value(r, c));
                return -1;
            }
        }
    }
    if (r->attribution_source[0]) {
        int known = 0;
        for (int k = 0; k < OPCOST_ATTRIBUTION_SOURCE_COUNT; ++k)
            known |= !strcmp(r->attribution_source,
                             opcost_attribution_source_name(k));
        if (!known) {
            *bad = column_index("attribution_source");
            snprintf(msg, len,
                     "attribution_source: \"%.64s\" is not one of "
                     "differential, record_function, cupti",
                     r->attribution_source);
            return -1;
        }
    }
    if (check_names(r, bad, msg, len))
        return -1;
    /* freq weighs the row in every expected cost: a finite number > 0, as
     * the shape files require (a freq of -1 made a gate's regression), or
     * empty (a row of no distribution) */
    char *end;
    const double freq = strtod(r->freq, &end);
    if (r->freq[0] &&
        (end == r->freq || *end || !isfinite(freq) || !(freq > 0))) {
        *bad = column_index("freq");
        snprintf(msg, len, "freq: \"%.64s\" must be a finite number > 0",
                 r->freq);
        return -1;
    }
    if (r->status == OPCOST_STATUS_OK) {
        if (isnan(r->median_us) || isnan(r->min_us)) {
            *bad = column_index(isnan(r->median_us) ? "median_us" : "min_us");
            snprintf(msg, len, "%s: is required when status is ok",
                     columns[*bad].name);
            return -1;
        }
        if (r->n_samples == OPCOST_INT_NA || r->n_samples < 1) {
            *bad = column_index("n_samples");
            snprintf(msg, len, "n_samples: must be >= 1 when status is ok");
            return -1;
        }
        if (!(r->median_us > 0)) {
            *bad = column_index("median_us");
            snprintf(msg, len,
                     "median_us: %g must be > 0 when status is ok (a call "
                     "takes time)",
                     r->median_us);
            return -1;
        }
    }
    if (r->status == OPCOST_STATUS_SKIPPED && !isnan(r->median_us)) {
        *bad = column_index("median_us");
        snprintf(msg, len,
                 "median_us: must be empty when status is skipped "
                 "(nothing was measured)");
        return -1;
    }
    return 0;
}

int opcost_result_check(const opcost_result *row, const char *where, char *err,
                        size_t errlen)
{
    char msg[256];
    size_t bad;
    if (check_row(row, &bad, msg, sizeof msg)) {
        snprintf(err, errlen, "%s: %s", where, msg);
        return -1;
    }
    return 0;
}

/* ---- C numeric locale for printf/strtod, whatever the process set. */
static locale_t c_numeric_locale(void)
{
    /* Idempotent: a race creates a second object, never a wrong one. */
    static locale_t loc = (locale_t)0;
    if (loc == (locale_t)0)
        loc = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
    return loc;
}

typedef struct numeric_scope {
    locale_t old;
    int active;
} numeric_scope;

static numeric_scope enter_c_numeric(void)
{
    numeric_scope s = {(locale_t)0, 0};
    const locale_t c = c_numeric_locale();
    if (c != (locale_t)0) {
        s.old = uselocale(c);
        s.active = s.old != (locale_t)0;
    }
    return s;
}

static void leave_c_numeric(numeric_scope s)
{
    if (s.active)
        uselocale(s.old);
}

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

/* ---- Writing. */
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
    for (size_t i = 0; i < NCOLS; ++i) {
        const column *c = &columns[i];
        const void *p = field_ptr(r, c);
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
            fputs(enum_names(c, &count)[enum_value(r, c)], f);
        }
    }
    putc('\n', f);
}

/* The header (optionally) and rows, as the writer formats them. */
static void print_rows(FILE *f, const opcost_result *rows, size_t n, int header)
{
    const numeric_scope scope = enter_c_numeric();
    for (size_t i = 0; header && i < NCOLS; ++i)
        fprintf(f, "%s%s", i ? "," : "", columns[i].name);
    if (header)
        putc('\n', f);
    for (size_t i = 0; i < n; ++i)
        write_row(f, &rows[i]);
    leave_c_numeric(scope);
}

/* The results CSV at path into an open temporary: the rows checked as
 * the reader checks them, then printed (the caller commits or aborts). */
static int results_open(opcost_outfile *o, const char *path,
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
    return results_open(&o, path, rows, n, err, errlen) ||
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

/* ---- Reading: an RFC 4180 tokenizer over the whole file. */
typedef struct field {
    size_t off, len; /* into scratch, NUL-terminated */
    int line, col;   /* 1-based; col counts bytes */
} field;

typedef struct reader {
    const char *path;
    char *buf;
    size_t len, pos;
    int line, col;
    char *scratch;
    size_t used, cap;
    field *fields;
    size_t nfields, fcap;
    int end_line, end_col; /* where the last record's last field ended */
    char *err;
    size_t errlen;
} reader;

static int fail_at(reader *r, int line, int col, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errlen, "%s:%d:%d: %s", r->path, line, col, msg);
    return -1;
}

static int oom(reader *r)
{
    snprintf(r->err, r->errlen, "%s: out of memory", r->path);
    return -1;
}

static int append(reader *r, char ch)
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

static void advance(reader *r)
{
    if (r->buf[r->pos++] == '\n') {
        ++r->line;
        r->col = 1;
    } else {
        ++r->col;
    }
}

static int push_field(reader *r, field f)
{
    if (r->nfields == r->fcap) {
        const size_t cap = r->fcap ? 2 * r->fcap : 64;
        field *p = realloc(r->fields, cap * sizeof *p);
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
static int read_record(reader *r)
{
    if (r->pos >= r->len)
        return 0;
    r->nfields = 0;
    r->used = 0;
    for (;;) {
        field f = {r->used, 0, r->line, r->col};
        if (r->pos < r->len && r->buf[r->pos] == '"') {
            advance(r);
            for (;;) {
                if (r->pos >= r->len)
                    return fail_at(r, f.line, f.col,
                                   "quoted field is not "
                                   "closed before the end of the file");
                const char ch = r->buf[r->pos];
                if (ch == '\0')
                    return fail_at(r, r->line, r->col, "NUL byte");
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
                return fail_at(r, r->line, r->col,
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
                    return fail_at(r, r->line, r->col,
                                   "quote inside an "
                                   "unquoted field (quote the whole field "
                                   "and double the quote)");
                if (ch == '\r')
                    return fail_at(r, r->line, r->col,
                                   "carriage return "
                                   "outside quotes");
                if (ch == '\0')
                    return fail_at(r, r->line, r->col, "NUL byte");
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

static const char *field_text(const reader *r, size_t i)
{
    return r->scratch + r->fields[i].off;
}

static int load_file(reader *r, const char *path, char *err, size_t errlen)
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

static void reader_free(reader *r)
{
    free(r->buf);
    free(r->scratch);
    free(r->fields);
}

/* The first record must be exactly one of the header lines names[v]
 * (ncols[v] names each, v < nversions, the last the newest); *version is
 * the index matched. A header that matches none is reported against the
 * version with as many columns, else the newest. */
static int check_header(reader *r, const char *const *const *versions,
                        const size_t *ncols, int nversions, int *version)
{
    const int got = read_record(r);
    if (got < 0)
        return -1;
    if (got == 0)
        return fail_at(r, 1, 1, "empty file: expected the header line");
    int v = nversions - 1;
    for (int k = 0; k < nversions; ++k)
        if (ncols[k] == r->nfields)
            v = k;
    *version = v;
    const char *const *names = versions[v];
    const size_t count = ncols[v];
    const size_t n = r->nfields < count ? r->nfields : count;
    for (size_t i = 0; i < n; ++i) {
        if (strcmp(field_text(r, i), names[i]))
            return fail_at(r, r->fields[i].line, r->fields[i].col,
                           "header column %zu is \"%s\", expected \"%s\"",
                           i + 1, field_text(r, i), names[i]);
    }
    if (r->nfields > count)
        return fail_at(r, r->fields[count].line, r->fields[count].col,
                       "header has %zu columns, expected %zu: written by a "
                       "newer schema version? (this reader knows version %d)",
                       r->nfields, count, OPCOST_RESULTS_SCHEMA_VERSION);
    if (r->nfields < count)
        return fail_at(r, r->end_line, r->end_col,
                       "header has %zu columns, expected %zu (missing from "
                       "\"%s\")",
                       r->nfields, count, names[r->nfields]);
    return 0;
}

static int check_field_count(reader *r, const char *const *names, size_t count)
{
    if (r->nfields < count)
        return fail_at(r, r->end_line, r->end_col,
                       "row has %zu fields, expected %zu (missing from "
                       "column %s)",
                       r->nfields, count, names[r->nfields]);
    if (r->nfields > count)
        return fail_at(r, r->fields[count].line, r->fields[count].col,
                       "row has %zu fields, expected %zu", r->nfields, count);
    return 0;
}

/* Strict integer: optional sign and digits only. */
static int parse_int(const char *s, int64_t *v)
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

/* Strict decimal number: no spaces, hex, inf or nan. */
static int parse_num(const char *s, double *v)
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

/* Field k of the record into table column i of row. */
static int parse_field(reader *r, size_t k, size_t i, opcost_result *row)
{
    const column *c = &columns[i];
    const field *f = &r->fields[k];
    const char *s = field_text(r, k);
    void *p = (char *)row + c->offset;
    if (!f->len && c->required)
        return fail_at(r, f->line, f->col, "column %s: is required (empty)",
                       c->name);
    switch (c->type) {
    case T_TEXT:
        if (f->len >= c->size)
            return fail_at(r, f->line, f->col,
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
        if (parse_int(s, p))
            return fail_at(r, f->line, f->col,
                           "column %s: \"%s\" is not an "
                           "integer in range",
                           c->name, s);
        return 0;
    case T_NUM:
        if (!f->len) {
            *(double *)p = NAN;
            return 0;
        }
        if (parse_num(s, p))
            return fail_at(r, f->line, f->col,
                           "column %s: \"%s\" is not a "
                           "finite decimal number",
                           c->name, s);
        return 0;
    case T_STATUS:
    case T_CACHE: {
        size_t count;
        const char *const *names = enum_names(c, &count);
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
        return fail_at(r, f->line, f->col,
                       "column %s: \"%s\" is not one of "
                       "%s",
                       c->name, s, list);
    }
    }
    return 0;
}

/* The columns of each schema version, in table order: col[v - 1][k] is
 * the table index of version v's k-th column. */
typedef struct schema_versions {
    size_t col[OPCOST_RESULTS_SCHEMA_VERSION][NCOLS];
    const char *names[OPCOST_RESULTS_SCHEMA_VERSION][NCOLS];
    size_t n[OPCOST_RESULTS_SCHEMA_VERSION];
} schema_versions;

static void schema_versions_init(schema_versions *s)
{
    for (int v = 1; v <= OPCOST_RESULTS_SCHEMA_VERSION; ++v) {
        size_t k = 0;
        for (size_t i = 0; i < NCOLS; ++i) {
            if (columns[i].since > v)
                continue;
            s->col[v - 1][k] = i;
            s->names[v - 1][k++] = columns[i].name;
        }
        s->n[v - 1] = k;
    }
}

/* What parse_result reads a record with: the file's schema version. */
typedef struct result_ctx {
    const schema_versions *schema;
    int index; /* version - 1, set by read_table from the header */
} result_ctx;

/* One record of the results CSV into *row: fields, then the row rules. A
 * column the file's version lacks stays "does not apply". */
static int parse_result(reader *r, void *elem, const void *ctx)
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
        return fail_at(r, r->fields[0].line, r->fields[0].col,
                       "schema_version: %" PRId64 " is not %d, the version "
                       "of the file's header",
                       row->schema_version, version);
    if (check_row(row, &bad, msg, sizeof msg)) {
        size_t k = 0;
        while (k + 1 < r->nfields && col[k] != bad)
            ++k;
        return fail_at(r, r->fields[k].line, r->fields[k].col, "%s", msg);
    }
    return 0;
}

/* The one reading loop of both files: the exact header, then records of
 * exactly ncols fields, each parsed by parse into an array of elem_size
 * elements grown as needed. *out is malloc'd; NULL and *n = 0 on error. */
static int read_table(const char *path, const char *const *const *versions,
                      const size_t *ncols_of, int nversions, int *version,
                      size_t elem_size,
                      int (*parse)(reader *, void *, const void *),
                      const void *ctx, void **out, size_t *n, char *err,
                      size_t errlen)
{
    *out = NULL;
    *n = 0;
    reader r;
    if (load_file(&r, path, err, errlen)) {
        reader_free(&r);
        return -1;
    }
    char *elems = NULL;
    size_t count = 0, cap = 0;
    int rc = check_header(&r, versions, ncols_of, nversions, version);
    const char *const *names = versions[*version];
    const size_t ncols = ncols_of[*version];
    const numeric_scope scope = enter_c_numeric();
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
    leave_c_numeric(scope);
    reader_free(&r);
    if (rc) {
        free(elems);
        return -1;
    }
    *out = elems;
    *n = count;
    return 0;
}

int opcost_results_read(const char *path, opcost_result **rows, size_t *n,
                        char *err, size_t errlen)
{
    schema_versions schema;
    schema_versions_init(&schema);
    const char *const *versions[OPCOST_RESULTS_SCHEMA_VERSION];
    for (int v = 0; v < OPCOST_RESULTS_SCHEMA_VERSION; ++v)
        versions[v] = schema.names[v];
    /* read_table sets ctx.index from the header, before any record */
    result_ctx ctx = {&schema, OPCOST_RESULTS_SCHEMA_VERSION - 1};
    void *out;
    const int rc = read_table(
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

/* ---- Samples sidecar. */
int opcost_samples_path(const char *csv_path, char *buf, size_t len, char *err,
                        size_t errlen)
{
    const size_t n = csv_path ? strlen(csv_path) : 0;
    if (n < 4 || strcmp(csv_path + n - 4, ".csv")) {
        snprintf(err, errlen,
                 "csv_path: \"%s\" must end in .csv to name its "
                 "samples sidecar",
                 csv_path ? csv_path : "(null)");
        return -1;
    }
    if ((size_t)snprintf(buf, len, "%.*s.samples.csv", (int)(n - 4),
                         csv_path) >= len) {
        snprintf(err, errlen,
                 "csv_path: \"%s\": sidecar path longer than "
                 "%zu bytes",
                 csv_path, len);
        return -1;
    }
    return 0;
}

static void print_samples_header(FILE *f)
{
    for (size_t i = 0; i < NSAMPLE_COLS; ++i)
        fprintf(f, "%s%s", i ? "," : "", sample_columns[i]);
    putc('\n', f);
}

struct opcost_samples_writer {
    opcost_outfile file;
};

int opcost_samples_open(opcost_samples_writer **w, const char *csv_path,
                        char *err, size_t errlen)
{
    char path[4096];
    *w = NULL;
    if (opcost_samples_path(csv_path, path, sizeof path, err, errlen))
        return -1;
    opcost_samples_writer *s = malloc(sizeof *s);
    if (!s) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    if (opcost_outfile_open(&s->file, "samples", path, err, errlen)) {
        free(s);
        return -1;
    }
    print_samples_header(s->file.f);
    *w = s;
    return 0;
}

static int text_ok(const char *s, size_t size)
{
    return memchr(s, '\0', size) != NULL;
}

/* One sample's line, checked as the reader checks it. */
static int print_sample(FILE *f, const opcost_result *row,
                        const opcost_sample *s, char *err, size_t errlen)
{
    if (!row || !text_ok(row->run_id, sizeof row->run_id) ||
        !text_ok(row->path, sizeof row->path) ||
        !text_ok(row->variant, sizeof row->variant)) {
        snprintf(err, errlen, "row: NULL or with unterminated text");
        return -1;
    }
    const char *neg = s->point < 0                                ? "point"
                      : s->rep < 0                                ? "rep"
                      : s->sample < 0                             ? "sample"
                      : s->round < 0 && s->round != OPCOST_INT_NA ? "round"
                                                                  : NULL;
    if (neg) {
        snprintf(err, errlen, "%s: must be >= 0 (got %" PRId64 ")", neg,
                 s->point < 0    ? s->point
                 : s->rep < 0    ? s->rep
                 : s->sample < 0 ? s->sample
                                 : s->round);
        return -1;
    }
    if (!isfinite(s->us) || s->us < 0) {
        snprintf(err, errlen, "us: %g must be finite and >= 0", s->us);
        return -1;
    }
    opcost_csv_text(f, row->run_id);
    fprintf(f, ",%" PRId64 ",", s->point);
    opcost_csv_text(f, row->path);
    putc(',', f);
    opcost_csv_text(f, row->variant);
    const numeric_scope scope = enter_c_numeric();
    fprintf(f, ",%" PRId64 ",%" PRId64 ",%.9g,", s->rep, s->sample, s->us);
    if (s->round != OPCOST_INT_NA)
        fprintf(f, "%" PRId64, s->round);
    putc('\n', f);
    leave_c_numeric(scope);
    return 0;
}

int opcost_samples_add(opcost_samples_writer *w, const opcost_result *row,
                       const opcost_sample *s, char *err, size_t errlen)
{
    if (!w) {
        snprintf(err, errlen, "w: NULL (did opcost_samples_open fail?)");
        return -1;
    }
    return print_sample(w->file.f, row, s, err, errlen);
}

int opcost_samples_fprint(FILE *f, const opcost_result *rows, size_t nrows,
                          const opcost_sample *samples, size_t n, int header,
                          char *err, size_t errlen)
{
    if (header)
        print_samples_header(f);
    for (size_t i = 0; i < n; ++i) {
        const opcost_sample *s = &samples[i];
        if (s->point < 0 || (uint64_t)s->point >= nrows) {
            snprintf(err, errlen,
                     "samples[%zu].point: %" PRId64 " is not a row index in "
                     "[0, %zu)",
                     i, s->point, nrows);
            return -1;
        }
        if (print_sample(f, &rows[s->point], s, err, errlen))
            return -1;
    }
    return 0;
}

int opcost_samples_commit(opcost_samples_writer *w, char *err, size_t errlen)
{
    if (!w) {
        snprintf(err, errlen, "w: NULL (did opcost_samples_open fail?)");
        return -1;
    }
    const int rc = opcost_outfile_commit(&w->file, err, errlen);
    free(w);
    return rc;
}

void opcost_samples_abort(opcost_samples_writer *w)
{
    if (!w)
        return;
    opcost_outfile_abort(&w->file);
    free(w);
}

/* The checks of opcost_samples_write's arguments. */
static int samples_check(const opcost_result *rows, size_t nrows,
                         const opcost_sample *samples, size_t n, char *err,
                         size_t errlen)
{
    if ((n && !samples) || (nrows && !rows)) {
        snprintf(err, errlen, "%s: NULL with a non-zero count",
                 n && !samples ? "samples" : "rows");
        return -1;
    }
    for (size_t i = 0; i < n; ++i) {
        if (samples[i].point < 0 || (uint64_t)samples[i].point >= nrows) {
            snprintf(err, errlen,
                     "samples[%zu].point: %" PRId64 " is not a "
                     "row index in [0, %zu)",
                     i, samples[i].point, nrows);
            return -1;
        }
    }
    return 0;
}

/* Every sample into an open writer; on failure the writer is aborted. */
static int samples_fill(opcost_samples_writer *w, const opcost_result *rows,
                        const opcost_sample *samples, size_t n, char *err,
                        size_t errlen)
{
    for (size_t i = 0; i < n; ++i) {
        const opcost_sample *s = &samples[i];
        if (opcost_samples_add(w, &rows[s->point], s, err, errlen)) {
            char inner[512];
            snprintf(inner, sizeof inner, "%s", err);
            snprintf(err, errlen, "samples[%zu]: %s", i, inner);
            opcost_samples_abort(w);
            return -1;
        }
    }
    return 0;
}

int opcost_samples_write(const char *csv_path, const opcost_result *rows,
                         size_t nrows, const opcost_sample *samples, size_t n,
                         char *err, size_t errlen)
{
    opcost_samples_writer *w;
    if (samples_check(rows, nrows, samples, n, err, errlen) ||
        opcost_samples_open(&w, csv_path, err, errlen) ||
        samples_fill(w, rows, samples, n, err, errlen))
        return -1;
    return opcost_samples_commit(w, err, errlen);
}

int opcost_run_files_write(const char *path, const opcost_result *rows,
                           size_t nrows, const opcost_sample *samples,
                           size_t nsamples, char *err, size_t errlen)
{
    opcost_outfile csv;
    opcost_samples_writer *side;
    if (samples_check(rows, nrows, samples, nsamples, err, errlen) ||
        results_open(&csv, path, rows, nrows, err, errlen))
        return -1;
    if (opcost_samples_open(&side, path, err, errlen)) {
        opcost_outfile_abort(&csv);
        return -1;
    }
    if (samples_fill(side, rows, samples, nsamples, err, errlen)) {
        opcost_outfile_abort(&csv);
        return -1;
    }
    /* both whole on disk before either is put in place: a full disk
     * leaves the files at path as they were, a pair */
    if (opcost_outfile_finish(&side->file, err, errlen)) {
        opcost_samples_abort(side);
        opcost_outfile_abort(&csv);
        return -1;
    }
    if (opcost_outfile_finish(&csv, err, errlen)) {
        opcost_samples_abort(side);
        return -1;
    }
    /* the sidecar first: the CSV never names samples not in place */
    const int rc = opcost_outfile_rename(&side->file, err, errlen) ||
                           opcost_outfile_rename(&csv, err, errlen)
                       ? -1
                       : 0;
    opcost_outfile_abort(&csv);
    opcost_samples_abort(side);
    return rc;
}

static int sample_int(reader *r, size_t i, int64_t *v)
{
    const char *s = field_text(r, i);
    if (parse_int(s, v) || *v < 0)
        return fail_at(r, r->fields[i].line, r->fields[i].col,
                       "column %s: \"%s\" is not an integer >= 0",
                       sample_columns[i], s);
    return 0;
}

static int sample_matches(reader *r, size_t i, const char *want)
{
    if (strcmp(field_text(r, i), want))
        return fail_at(r, r->fields[i].line, r->fields[i].col,
                       "column %s: \"%s\" differs from the main CSV's row "
                       "(\"%s\")",
                       sample_columns[i], field_text(r, i), want);
    return 0;
}

static int parse_sample(reader *r, const opcost_result *rows, size_t nrows,
                        int with_round, opcost_sample *s)
{
    if (sample_int(r, 1, &s->point) || sample_int(r, 4, &s->rep) ||
        sample_int(r, 5, &s->sample))
        return -1;
    s->round = OPCOST_INT_NA;
    if (with_round && field_text(r, 7)[0] && sample_int(r, 7, &s->round))
        return -1;
    const char *us = field_text(r, 6);
    if (parse_num(us, &s->us) || s->us < 0)
        return fail_at(r, r->fields[6].line, r->fields[6].col,
                       "column us: \"%s\" is not a finite number >= 0", us);
    if (!rows)
        return 0;
    if ((uint64_t)s->point >= nrows)
        return fail_at(r, r->fields[1].line, r->fields[1].col,
                       "column point: %" PRId64 " is not a row of the main "
                       "CSV (it has %zu)",
                       s->point, nrows);
    const opcost_result *row = &rows[s->point];
    if (sample_matches(r, 0, row->run_id) || sample_matches(r, 2, row->path) ||
        sample_matches(r, 3, row->variant))
        return -1;
    return 0;
}

/* The rows a sidecar's points must index (parse_sample's context). */
typedef struct sample_ctx {
    const opcost_result *rows;
    size_t nrows;
    int version; /* index: 0 without round, 1 with; set from the header */
} sample_ctx;

static int parse_one_sample(reader *r, void *elem, const void *ctx)
{
    const sample_ctx *c = ctx;
    return parse_sample(r, c->rows, c->nrows, c->version == 1, elem);
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* From schema 4 on, an ok row's median_us is the median of its samples
 * (every sample of the row pooled): a median_us that contradicts them
 * (edited, or another run's) is refused, beyond the rounding of the
 * CSV's six significant digits. count[p]: row p's samples. */
static int medians_match(const char *path, const opcost_result *rows,
                         size_t nrows, const opcost_sample *s, size_t n,
                         const int64_t *count, char *err, size_t errlen)
{
    size_t *at = malloc((nrows + 1) * sizeof *at);
    double *us = malloc((n ? n : 1) * sizeof *us);
    if (!at || !us) {
        free(at);
        free(us);
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    at[0] = 0;
    for (size_t p = 0; p < nrows; ++p)
        at[p + 1] = at[p] + (size_t)count[p];
    size_t *fill = malloc((nrows ? nrows : 1) * sizeof *fill);
    int rc = fill ? 0 : -1;
    if (fill) {
        memcpy(fill, at, nrows * sizeof *fill);
        for (size_t i = 0; i < n; ++i)
            us[fill[s[i].point]++] = s[i].us;
    } else {
        snprintf(err, errlen, "%s: out of memory", path);
    }
    for (size_t p = 0; p < nrows && rc == 0; ++p) {
        const opcost_result *r = &rows[p];
        const size_t k = at[p + 1] - at[p];
        if (r->schema_version < 4 || r->status != OPCOST_STATUS_OK || !k)
            continue;
        double *v = us + at[p];
        qsort(v, k, sizeof *v, cmp_double);
        const double m = k % 2 ? v[k / 2] : 0.5 * v[k / 2 - 1] + 0.5 * v[k / 2];
        if (!(fabs(r->median_us - m) <= 1e-5 * m + 1e-9)) {
            snprintf(err, errlen,
                     "%s: point %zu (row %zu of the main CSV): median_us %g "
                     "contradicts its %zu samples, whose median is %g",
                     path, p, p + 2, r->median_us, k, m);
            rc = -1;
        }
    }
    free(fill);
    free(at);
    free(us);
    return rc;
}

/* A sidecar that parses may still not be the rows' (truncated at a line,
 * or another run's): each row's samples must number its n_samples (where
 * set) and lie in its repetitions. */
static int samples_match_rows(const char *path, const opcost_result *rows,
                              size_t nrows, const opcost_sample *s, size_t n,
                              char *err, size_t errlen)
{
    int64_t *count = calloc(nrows ? nrows : 1, sizeof *count);
    if (!count) {
        snprintf(err, errlen, "%s: out of memory", path);
        return -1;
    }
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; ++i) {
        const opcost_result *row = &rows[s[i].point];
        ++count[s[i].point];
        if (row->reps != OPCOST_INT_NA && s[i].rep >= row->reps) {
            snprintf(err, errlen,
                     "%s: sample %zu: rep %" PRId64 " of point %" PRId64
                     ", whose row has reps = %" PRId64,
                     path, i + 1, s[i].rep, s[i].point, row->reps);
            rc = -1;
        }
    }
    for (size_t p = 0; p < nrows && rc == 0; ++p) {
        const int64_t want = rows[p].n_samples;
        /* a row without n_samples (an error mid-timing) may keep some */
        if (want != OPCOST_INT_NA && count[p] != want) {
            snprintf(err, errlen,
                     "%s: point %zu (row %zu of the main CSV) has %" PRId64
                     " samples, its row says n_samples = %" PRId64
                     " (a truncated or mismatched sidecar)",
                     path, p, p + 2, count[p], want);
            rc = -1;
        }
    }
    if (rc == 0)
        rc = medians_match(path, rows, nrows, s, n, count, err, errlen);
    free(count);
    return rc;
}

int opcost_samples_read(const char *csv_path, const opcost_result *rows,
                        size_t nrows, opcost_sample **samples, size_t *n,
                        char *err, size_t errlen)
{
    *samples = NULL;
    *n = 0;
    char path[4096];
    if (opcost_samples_path(csv_path, path, sizeof path, err, errlen))
        return -1;
    sample_ctx ctx = {rows, nrows, 0};
    void *out;
    /* version 1 (results schemas 1-3) is version 2 without round */
    const char *const *versions[] = {sample_columns, sample_columns};
    const size_t ncols[] = {NSAMPLE_COLS_V1, NSAMPLE_COLS};
    int rc =
        read_table(path, versions, ncols, 2, &ctx.version, sizeof **samples,
                   parse_one_sample, &ctx, &out, n, err, errlen);
    *samples = out;
    if (rc == 0 && rows)
        rc = samples_match_rows(path, rows, nrows, *samples, *n, err, errlen);
    if (rc) {
        free(*samples);
        *samples = NULL;
        *n = 0;
    }
    return rc;
}
