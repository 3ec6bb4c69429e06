/* The raw-samples sidecar's reader (results_csv.h): both versions of its
 * header (the first without round), each line's point a row of the main
 * CSV with the same run, path and variant, and every row's samples as
 * many as its n_samples, within its repetitions, their median its
 * median_us. */
#define _POSIX_C_SOURCE 200809L
#include "csv_reader.h"
#include "results_schema.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sample_int(csv_reader *r, size_t i, int64_t *v)
{
    const char *s = csv_field_text(r, i);
    if (csv_parse_int(s, v) || *v < 0)
        return csv_fail_at(r, r->fields[i].line, r->fields[i].col,
                           "column %s: \"%s\" is not an integer >= 0",
                           results_sample_columns[i], s);
    return 0;
}

static int sample_matches(csv_reader *r, size_t i, const char *want)
{
    if (strcmp(csv_field_text(r, i), want))
        return csv_fail_at(r, r->fields[i].line, r->fields[i].col,
                           "column %s: \"%s\" differs from the main CSV's row "
                           "(\"%s\")",
                           results_sample_columns[i], csv_field_text(r, i),
                           want);
    return 0;
}

static int parse_sample(csv_reader *r, const opcost_result *rows, size_t nrows,
                        int with_round, opcost_sample *s)
{
    if (sample_int(r, 1, &s->point) || sample_int(r, 4, &s->rep) ||
        sample_int(r, 5, &s->sample))
        return -1;
    s->round = OPCOST_INT_NA;
    if (with_round && csv_field_text(r, 7)[0] && sample_int(r, 7, &s->round))
        return -1;
    const char *us = csv_field_text(r, 6);
    if (csv_parse_num(us, &s->us) || s->us < 0)
        return csv_fail_at(r, r->fields[6].line, r->fields[6].col,
                           "column us: \"%s\" is not a finite number >= 0", us);
    if (!rows)
        return 0;
    if ((uint64_t)s->point >= nrows)
        return csv_fail_at(r, r->fields[1].line, r->fields[1].col,
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

static int parse_one_sample(csv_reader *r, void *elem, const void *ctx)
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
    const char *const *versions[] = {results_sample_columns,
                                     results_sample_columns};
    const size_t ncols[] = {RESULTS_NSAMPLE_COLS_V1, RESULTS_NSAMPLE_COLS};
    int rc =
        csv_read_table(path, versions, ncols, 2, &ctx.version, sizeof **samples,
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
