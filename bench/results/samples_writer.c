/* The raw-samples sidecar's writer (results_csv.h): its path beside the
 * results CSV, its lines as they are taken (or all at once), numbers in
 * the C locale, times with %.9g (1 ns below 1 s) so that statistics
 * recomputed from the sidecar match the rows. */
#define _POSIX_C_SOURCE 200809L
#include "samples_writer.h"
#include "c_numeric.h"
#include "results_schema.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    for (size_t i = 0; i < RESULTS_NSAMPLE_COLS; ++i)
        fprintf(f, "%s%s", i ? "," : "", results_sample_columns[i]);
    putc('\n', f);
}

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
    const c_numeric_scope scope = c_numeric_enter();
    fprintf(f, ",%" PRId64 ",%" PRId64 ",%.9g,", s->rep, s->sample, s->us);
    if (s->round != OPCOST_INT_NA)
        fprintf(f, "%" PRId64, s->round);
    putc('\n', f);
    c_numeric_leave(scope);
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

int samples_check_args(const opcost_result *rows, size_t nrows,
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

int samples_fill(opcost_samples_writer *w, const opcost_result *rows,
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
    if (samples_check_args(rows, nrows, samples, n, err, errlen) ||
        opcost_samples_open(&w, csv_path, err, errlen) ||
        samples_fill(w, rows, samples, n, err, errlen))
        return -1;
    return opcost_samples_commit(w, err, errlen);
}
