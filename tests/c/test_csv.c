/* The results CSV: exact header, RFC 4180 quoting round trips, empty fields
 * as NAN / OPCOST_INT_NA, atomic writes that leave nothing behind on
 * failure, parser errors with file:line:column, and the samples sidecar. */
#define _POSIX_C_SOURCE 200809L
#include "c_samples.h"
#include "c_tempdir.h"
#include "results_csv.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The schema as the tasks specify it, verbatim: version 1 (the bench-core
 * issue), and version 2 (measured attribution: device_us, other_kernel_us,
 * attribution_source, tracer_overhead, sm_clock_mhz, throttle_reasons,
 * ceiling_kind, working_set_bytes, ci95_pooled_rel, added at the end),
 * version 3 (intervals with the run noise: ci95_reps_rel,
 * run_noise_rel), and version 4 (paired measurement: paired_with, ratio,
 * ratio_ci95_rel, verdict, rounds; frac_of_peak paired with its interval,
 * the best probe's figure beside it; p_value, probe_gbps, stopped_by and
 * side with them). */
#define V1_COLUMNS                                                             \
    "schema_version,run_id,timestamp_utc,git_sha,host,cpu,gpu,torch_version,"  \
    "device,threads,distribution,op,B,N,dtype,weight_dtype,layout,freq,path,"  \
    "variant,dispatch_path,cache_state,status,reps,n_samples,median_us,"       \
    "min_us,p90_us,mean_us,stddev_us,ci95_rel,compile_ms,kernel_us,"           \
    "conversion_us,launch_us,dispatch_us,idle_us,bytes,gbps,ceiling_gbps,"     \
    "frac_of_peak,note"
#define V2_COLUMNS                                                             \
    V1_COLUMNS ",device_us,other_kernel_us,attribution_source,"                \
               "tracer_overhead,sm_clock_mhz,throttle_reasons,ceiling_kind,"   \
               "working_set_bytes,ci95_pooled_rel"
#define V3_COLUMNS V2_COLUMNS ",ci95_reps_rel,run_noise_rel"
#define V4_COLUMNS                                                             \
    V3_COLUMNS ",paired_with,ratio,ratio_ci95_rel,p_value,verdict,rounds,"     \
               "frac_of_peak_ci95_rel,frac_of_peak_best,probe_gbps,"           \
               "stopped_by,side"
static const char v1_header[] = V1_COLUMNS;
static const char v2_header[] = V2_COLUMNS;
static const char v3_header[] = V3_COLUMNS;
#define V5_COLUMNS                                                             \
    V4_COLUMNS ",norm_share,graph_breaks,recompiles,op_calls,copies_around,"   \
               "fusion_boundary"
#define V6_COLUMNS V5_COLUMNS ",probe_state"
static const char v4_header[] = V4_COLUMNS;
static const char v5_header[] = V5_COLUMNS;
static const char v6_header[] = V6_COLUMNS;
/* The current version's header, written out: the one line a new column
 * changes here (counts and versions below follow from it). */
static const char spec_header[] =
    V6_COLUMNS ",out_err_units,residual_err_units";

/* Columns of spec_header. */
static int spec_columns(void)
{
    int n = 1;
    for (const char *c = spec_header; *c; ++c)
        n += *c == ',';
    return n;
}

static const char *dir; /* c_tempdir() */

static void join(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    const size_t n = fread(buf, 1, (1 << 20) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Files in dir whose name has ".tmp." (left-over temp files). */
static int temp_files(const char *where)
{
    DIR *d = opendir(where);
    int count = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        count += strstr(e->d_name, ".tmp.") != NULL;
    if (d)
        closedir(d);
    return count;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* A fully-populated ok row with text that needs quoting. */
static void row_ok(opcost_result *r)
{
    opcost_result_init(r);
    snprintf(r->run_id, sizeof r->run_id, "20250101T000000Z-abc");
    snprintf(r->timestamp_utc, sizeof r->timestamp_utc, "2025-01-01T00:00:00Z");
    snprintf(r->git_sha, sizeof r->git_sha, "0123456789abcdef");
    snprintf(r->host, sizeof r->host, "box");
    snprintf(r->cpu, sizeof r->cpu, "AMD EPYC, 2 cores");
    snprintf(r->device, sizeof r->device, "cpu");
    snprintf(r->distribution, sizeof r->distribution, "normal");
    snprintf(r->op, sizeof r->op, "fused_add_rms_norm");
    snprintf(r->dtype, sizeof r->dtype, "bfloat16");
    snprintf(r->weight_dtype, sizeof r->weight_dtype, "float32");
    snprintf(r->layout, sizeof r->layout, "contiguous");
    snprintf(r->freq, sizeof r->freq, "0.25");
    snprintf(r->path, sizeof r->path, "fast");
    snprintf(r->variant, sizeof r->variant, "a,\"b\"");
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "cpu_fast_avx2");
    snprintf(r->note, sizeof r->note, "he said \"hi\", then\nleft\r\nok");
    r->threads = 2;
    r->B = 4096;
    r->N = 8192;
    r->reps = 5;
    r->n_samples = 500;
    r->median_us = 12.3456;
    r->min_us = 11.5;
    r->p90_us = 13.25;
    r->mean_us = 12.5;
    r->stddev_us = 0.75;
    r->ci95_rel = 0.0123;
    r->kernel_us = 10.5;
    r->conversion_us = 0.0;
    r->launch_us = 1.25;
    r->dispatch_us = 0.5;
    r->other_kernel_us = 0.125;
    r->device_us = 9.75;
    snprintf(r->attribution_source, sizeof r->attribution_source, "cupti");
    r->tracer_overhead = 1.03;
    r->sm_clock_mhz = 1980;
    snprintf(r->throttle_reasons, sizeof r->throttle_reasons, "none");
    snprintf(r->ceiling_kind, sizeof r->ceiling_kind, "dram fused nt");
    r->working_set_bytes = 1048576;
    r->bytes = 1048576;
    r->gbps = 85.25;
    r->ceiling_gbps = 120.5;
    r->frac_of_peak = 0.707469;
}

/* A plain row: no text needs quoting, so its line splits on commas. */
static void row_plain(opcost_result *r)
{
    opcost_result_init(r);
    snprintf(r->run_id, sizeof r->run_id, "run1");
    snprintf(r->timestamp_utc, sizeof r->timestamp_utc, "2025-01-01T00:00:00Z");
    snprintf(r->op, sizeof r->op, "rms_norm_rows");
    snprintf(r->path, sizeof r->path, "reference");
    snprintf(r->note, sizeof r->note, "plain");
    r->threads = 1;
    r->B = 2;
    r->N = 8;
    r->reps = 3;
    r->n_samples = 30;
    r->median_us = 1.5;
    r->min_us = 1.25;
}

static int same_double(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

static int same_row(const opcost_result *a, const opcost_result *b)
{
    /* Rows come from opcost_result_init (zeroed) and text is copied with
     * its NUL, so equal rows are equal bytes; the doubles are also compared
     * NAN-aware for a clearer failure. */
    return same_double(a->median_us, b->median_us) &&
           same_double(a->compile_ms, b->compile_ms) &&
           same_double(a->frac_of_peak, b->frac_of_peak) &&
           !memcmp(a, b, sizeof *a);
}

static void test_header(void)
{
    char h[1024];
    C_EXPECT(opcost_results_header(h, sizeof h) == (int)strlen(spec_header),
             "header length");
    C_EXPECT(!strcmp(h, spec_header), "header:\n%s\nwant\n%s", h, spec_header);
    const int ncols = spec_columns();
    C_EXPECT((int)opcost_results_ncolumns() == ncols, "%d columns", ncols);
    C_EXPECT(opcost_results_header(h, 10) == -1, "short buffer");
    C_EXPECT(opcost_results_column_name(ncols) == NULL, "past the end");
}

static void test_round_trip(void)
{
    opcost_result rows[3];
    row_ok(&rows[0]);
    /* skipped: nothing measured, numbers and counts empty */
    opcost_result_init(&rows[1]);
    snprintf(rows[1].run_id, sizeof rows[1].run_id, "20250101T000000Z-abc");
    snprintf(rows[1].timestamp_utc, sizeof rows[1].timestamp_utc,
             "2025-01-01T00:00:00Z");
    snprintf(rows[1].op, sizeof rows[1].op, "fused_add_rms_norm");
    snprintf(rows[1].path, sizeof rows[1].path, "cuda");
    snprintf(rows[1].note, sizeof rows[1].note, "needs CUDA");
    rows[1].status = OPCOST_STATUS_SKIPPED;
    rows[1].cache_state = OPCOST_CACHE_COLD;
    row_plain(&rows[2]);
    rows[2].status = OPCOST_STATUS_ERROR;
    rows[2].compile_ms = 1234.5;
    snprintf(rows[2].note, sizeof rows[2].note, "error: x, y");
    /* a model path's evidence (version 5) */
    rows[2].norm_share = 0.0625;
    rows[2].graph_breaks = 0;
    rows[2].recompiles = 1;
    rows[2].op_calls = 4;
    rows[2].copies_around = 0;
    snprintf(rows[2].fusion_boundary, sizeof rows[2].fusion_boundary,
             "cpp_fused_mul_view mm, \"quoted\"");
    /* the bandwidth state of a paired fraction (version 6) */
    snprintf(rows[0].probe_state, sizeof rows[0].probe_state, "reduced");
    /* the errors measured at verification (version 7) */
    rows[0].out_err_units = 1.875;
    rows[0].residual_err_units = 0;

    char path[512], err[512];
    join(path, sizeof path, "results.csv");
    C_EXPECT(opcost_results_write(path, rows, 3, err, sizeof err) == 0, "%s",
             err);
    C_EXPECT(temp_files(dir) == 0, "no temp file after a write");
    char *text = slurp(path);
    C_EXPECT(text && !strncmp(text, spec_header, strlen(spec_header)) &&
                 text[strlen(spec_header)] == '\n',
             "file starts with the header line");
    C_EXPECT(text && strstr(text, ",\"AMD EPYC, 2 cores\","), "comma quoted");
    C_EXPECT(text && strstr(text, ",\"a,\"\"b\"\"\","), "quotes doubled");
    C_EXPECT(text && strstr(text, "\"he said \"\"hi\"\", then\nleft\r\nok\","),
             "newlines kept inside quotes");
    /* skipped row: every number empty, up to the note and after it */
    char skipped[256] = ",cold,skipped,,,,,,,,,,,,,,,,,,,needs CUDA";
    int note = 0;
    while (opcost_results_column_name(note) &&
           strcmp(opcost_results_column_name(note), "note"))
        ++note;
    for (int c = note + 1; c < spec_columns(); ++c)
        strcat(skipped, ",");
    strcat(skipped, "\n");
    C_EXPECT(text && strstr(text, skipped), "empty numbers in the skipped row");
    free(text);

    opcost_result *back = NULL;
    size_t n = 0;
    C_EXPECT(opcost_results_read(path, &back, &n, err, sizeof err) == 0, "%s",
             err);
    C_EXPECT(n == 3, "3 rows back (got %zu)", n);
    for (size_t i = 0; i < n && i < 3; ++i)
        C_EXPECT(same_row(&rows[i], &back[i]), "row %zu round trips", i);
    if (n == 3) {
        C_EXPECT(isnan(back[1].median_us) && isnan(back[1].ci95_rel) &&
                     back[1].reps == OPCOST_INT_NA,
                 "empty reads back as NAN / OPCOST_INT_NA");
        C_EXPECT(back[0].status == OPCOST_STATUS_OK &&
                     back[1].status == OPCOST_STATUS_SKIPPED &&
                     back[2].status == OPCOST_STATUS_ERROR &&
                     back[1].cache_state == OPCOST_CACHE_COLD,
                 "enums");
        C_EXPECT(!strcmp(back[0].note, "he said \"hi\", then\nleft\r\nok"),
                 "note: %s", back[0].note);
    }
    free(back);
    C_EXPECT(opcost_results_check_file(path, err, sizeof err) == 0, "%s", err);

    /* CRLF line ends parse too. */
    opcost_result plain;
    row_plain(&plain);
    char crlf[512];
    join(crlf, sizeof crlf, "crlf.csv");
    C_EXPECT(opcost_results_write(crlf, &plain, 1, err, sizeof err) == 0, "%s",
             err);
    text = slurp(crlf);
    char *conv = malloc(2 * strlen(text) + 1), *o = conv;
    for (const char *p = text; *p; ++p) {
        if (*p == '\n')
            *o++ = '\r';
        *o++ = *p;
    }
    *o = '\0';
    c_write_file("crlf.csv", conv, crlf, sizeof crlf);
    C_EXPECT(opcost_results_read(crlf, &back, &n, err, sizeof err) == 0 &&
                 n == 1 && same_row(&plain, back),
             "CRLF: %s", err);
    free(back);
    free(text);
    free(conv);
}

static void test_atomic(void)
{
    opcost_result row;
    row_plain(&row);
    char path[1024], err[1024];

    /* The path is a directory: rename fails; the temp file is removed. */
    join(path, sizeof path, "isdir");
    mkdir(path, 0755);
    C_EXPECT(opcost_results_write(path, &row, 1, err, sizeof err) == -1 &&
                 strstr(err, path) && strstr(err, "Is a directory"),
             "directory: %s", err);
    C_EXPECT(temp_files(dir) == 0, "no temp file after a failed rename");

    /* The directory does not exist. */
    join(path, sizeof path, "missing/out.csv");
    C_EXPECT(opcost_results_write(path, &row, 1, err, sizeof err) == -1 &&
                 strstr(err, path) && strstr(err, "No such file"),
             "missing directory: %s", err);
    C_EXPECT(!exists(path), "nothing written");

    /* A read-only directory (root ignores the mode, so only as a user). */
    char ro[512];
    join(ro, sizeof ro, "ro");
    mkdir(ro, 0555);
    chmod(ro, 0555);
    snprintf(path, sizeof path, "%s/out.csv", ro);
    if (geteuid() != 0) {
        C_EXPECT(opcost_results_write(path, &row, 1, err, sizeof err) == -1 &&
                     strstr(err, path) && strstr(err, "Permission denied"),
                 "read-only directory: %s", err);
        C_EXPECT(!exists(path) && temp_files(ro) == 0, "nothing left");
    } else {
        printf("test_csv: read-only directory case skipped (running as "
               "root, which ignores permissions)\n");
    }

    /* A failed write leaves an existing file exactly as it was. */
    join(path, sizeof path, "keep.csv");
    C_EXPECT(opcost_results_write(path, &row, 1, err, sizeof err) == 0, "%s",
             err);
    char *before = slurp(path);
    opcost_result bad = row;
    bad.median_us = INFINITY;
    C_EXPECT(opcost_results_write(path, &bad, 1, err, sizeof err) == -1 &&
                 strstr(err, "rows[0]: median_us: inf must be finite"),
             "inf rejected: %s", err);
    char *after = slurp(path);
    C_EXPECT(before && after && !strcmp(before, after), "file unchanged");
    C_EXPECT(temp_files(dir) == 0, "no temp file after a rejected write");
    free(before);
    free(after);
    C_EXPECT(opcost_results_write("", &row, 1, err, sizeof err) == -1 &&
                 strstr(err, "path"),
             "empty path: %s", err);
}

static void test_writer_checks(void)
{
    opcost_result row;
    char path[512], err[512];
    join(path, sizeof path, "checks.csv");
    static const struct {
        int what;
        const char *msg;
    } cases[] = {
        {0, "rows[0]: median_us: is required when status is ok"},
        {1, NULL}, /* next_version below */
        {2, "rows[0]: run_id: text is not NUL-terminated"},
        {3, "rows[0]: status: enum value 7 is out of range"},
        {4, "rows[0]: run_id: is required"},
        {5, "rows[0]: B: -1 must be >= 0"},
        {6, "rows[0]: median_us: must be empty when status is skipped"},
        {7, "rows[0]: n_samples: must be >= 1 when status is ok"},
    };
    char next_version[128];
    snprintf(next_version, sizeof next_version,
             "rows[0]: schema_version: %d is not a version this code reads "
             "(1 to %d)",
             OPCOST_RESULTS_SCHEMA_VERSION + 1, OPCOST_RESULTS_SCHEMA_VERSION);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        const char *msg = cases[i].msg ? cases[i].msg : next_version;
        row_plain(&row);
        switch (cases[i].what) {
        case 0: row.median_us = NAN; break;
        case 1: row.schema_version = OPCOST_RESULTS_SCHEMA_VERSION + 1; break;
        case 2: memset(row.run_id, 'x', sizeof row.run_id); break;
        case 3: row.status = (opcost_status)7; break;
        case 4: row.run_id[0] = '\0'; break;
        case 5: row.B = -1; break;
        case 6: row.status = OPCOST_STATUS_SKIPPED; break;
        case 7: row.n_samples = OPCOST_INT_NA; break;
        }
        C_EXPECT(opcost_results_write(path, &row, 1, err, sizeof err) == -1 &&
                     strstr(err, msg),
                 "case %d: got \"%s\", want \"%s\"", cases[i].what, err, msg);
        C_EXPECT(!exists(path), "case %d: nothing written", cases[i].what);
    }
}

/* The plain row's line with column `name` replaced by value; *col is the
 * 1-based byte column where that field starts. */
static char *edited_file(const char *name, const char *value, int *col)
{
    opcost_result row;
    row_plain(&row);
    char path[512], err[512];
    join(path, sizeof path, "base.csv");
    opcost_results_write(path, &row, 1, err, sizeof err);
    char *text = slurp(path);
    char *line = strchr(text, '\n') + 1;
    char *out = malloc(strlen(text) + strlen(value) + 1);
    size_t idx = 0;
    while (strcmp(opcost_results_column_name(idx), name))
        ++idx;
    /* Copy up to field idx, then value, then the rest after that field. */
    const char *p = line;
    for (size_t i = 0; i < idx; ++i)
        p = strchr(p, ',') + 1;
    const char *rest = p + strcspn(p, ",\n");
    *col = (int)(p - line) + 1;
    sprintf(out, "%.*s%s%s", (int)(p - text), text, value, rest);
    free(text);
    return out;
}

static void expect_parse_error(const char *text, const char *where,
                               const char *msg, const char *what)
{
    char path[512], err[512], want[1024];
    c_write_file("bad.csv", text, path, sizeof path);
    opcost_result *rows = NULL;
    size_t n = 99;
    const int rc = opcost_results_read(path, &rows, &n, err, sizeof err);
    snprintf(want, sizeof want, "%s:%s: %s", path, where, msg);
    C_EXPECT(rc == -1 && rows == NULL && n == 0 &&
                 !strncmp(err, want, strlen(want)),
             "%s:\n got  %s\n want %s...", what, err, want);
    C_EXPECT(opcost_results_check_file(path, err, sizeof err) == -1,
             "%s: check_file rejects", what);
    free(rows);
}

/* 1-based byte column of field `name` on line 2 (a plain row). */
static int field_col(const char *text, const char *name)
{
    const char *line = strchr(text, '\n') + 1, *p = line;
    for (size_t i = 0; strcmp(opcost_results_column_name(i), name); ++i)
        p = strchr(p, ',') + 1;
    return (int)(p - line) + 1;
}

/* at: the column the error points to when not the edited one; shift: bytes
 * into the field. */
static void expect_field_error_at(const char *name, const char *value,
                                  const char *at, int shift, const char *msg)
{
    int col;
    char *text = edited_file(name, value, &col);
    if (at)
        col = field_col(text, at);
    char where[32];
    snprintf(where, sizeof where, "2:%d", col + shift);
    expect_parse_error(text, where, msg, name);
    free(text);
}

static void expect_field_error(const char *name, const char *value,
                               const char *msg)
{
    expect_field_error_at(name, value, NULL, 0, msg);
}

static void test_parse_errors(void)
{
    expect_field_error("median_us", "12x",
                       "column median_us: \"12x\" is not a finite decimal "
                       "number");
    expect_field_error("median_us", "inf", "column median_us: \"inf\" is not");
    expect_field_error("median_us", " 1.5",
                       "column median_us: \" 1.5\" is not");
    expect_field_error("median_us", "0x10",
                       "column median_us: \"0x10\" is not");
    expect_field_error("B", "1.5", "column B: \"1.5\" is not an integer");
    expect_field_error("B", "99999999999999999999", "column B: \"9999");
    expect_field_error("status", "fine",
                       "column status: \"fine\" is not one of ok, skipped, "
                       "wrong, error");
    expect_field_error("cache_state", "hot",
                       "column cache_state: \"hot\" is not one of cold, warm");
    expect_field_error("cache_state", "", "column cache_state: is required");
    char not_version[128];
    snprintf(not_version, sizeof not_version,
             "schema_version: 1 is not %d, the version of the file's header",
             OPCOST_RESULTS_SCHEMA_VERSION);
    expect_field_error("schema_version", "1", not_version);
    expect_field_error("attribution_source", "guess",
                       "attribution_source: \"guess\" is not one of "
                       "differential, record_function, cupti");
    expect_field_error("verdict", "maybe",
                       "verdict: \"maybe\" is not one of same, faster, "
                       "slower, unsure (or empty)");
    expect_field_error("stopped_by", "bored",
                       "stopped_by: \"bored\" is not one of target, budget, "
                       "rounds, interrupted, failed (or empty)");
    expect_field_error("side", "left",
                       "side: \"left\" is not one of base, new (or empty)");
    expect_field_error("ratio", "-1", "ratio: -1 must be finite and >= 0");
    expect_field_error("run_id", "", "column run_id: is required");
    expect_field_error("threads", "-1", "threads: -1 must be >= 0");
    /* freq weighs every expected cost (a -1 made a gate's regression of
     * nothing): a finite number > 0, as in the shape files */
    expect_field_error("freq", "-1",
                       "freq: \"-1\" must be a finite number > 0");
    expect_field_error("freq", "0", "freq: \"0\" must be a finite number > 0");
    expect_field_error("freq", "nan",
                       "freq: \"nan\" must be a finite number > 0");
    expect_field_error("freq", "often",
                       "freq: \"often\" must be a finite number > 0");
    /* Row rules point at the column that breaks them. */
    expect_field_error("median_us", "0",
                       "median_us: 0 must be > 0 when status is ok");
    expect_field_error_at("status", "skipped", "median_us", 0,
                          "median_us: must be empty when status is skipped");
    expect_field_error_at("note", "x\"y", NULL, 1,
                          "quote inside an unquoted field");

    /* Header: a renamed column, a newer schema's extra column. */
    int col;
    char *text = edited_file("note", "plain", &col);
    char *h = strstr(text, "timestamp_utc");
    memmove(h + 9, h + 13, strlen(h + 13) + 1); /* "timestamp" */
    expect_parse_error(text, "1:23",
                       "header column 3 is \"timestamp\", expected "
                       "\"timestamp_utc\"",
                       "renamed header column");
    free(text);
    text = edited_file("note", "plain", &col);
    char *buf = malloc(strlen(text) + 16);
    const size_t hl = strcspn(text, "\n");
    sprintf(buf, "%.*s,extra%s", (int)hl, text, text + hl);
    char where[32];
    snprintf(where, sizeof where, "1:%d", (int)hl + 2);
    const int ncols = spec_columns();
    char want[256];
    snprintf(want, sizeof want, "header has %d columns, expected %d", ncols + 1,
             ncols);
    expect_parse_error(buf, where, want, "newer header");
    free(buf);

    /* Short and long rows. */
    const size_t line2 = hl + 1;
    buf = malloc(strlen(text) + 16);
    const size_t cut = strrchr(text, ',') - text; /* drops the note field */
    sprintf(buf, "%.*s\n", (int)cut, text);
    snprintf(where, sizeof where, "2:%d", (int)(cut - line2) + 1);
    snprintf(want, sizeof want,
             "row has %d fields, expected %d (missing from column %s)",
             ncols - 1, ncols, opcost_results_column_name(ncols - 1));
    expect_parse_error(buf, where, want, "short row");
    sprintf(buf, "%.*s,x\n", (int)(strlen(text) - 1), text);
    snprintf(where, sizeof where, "2:%d", (int)(strlen(text) - line2) + 1);
    snprintf(want, sizeof want, "row has %d fields, expected %d", ncols + 1,
             ncols);
    expect_parse_error(buf, where, want, "long row");
    /* A blank line is a one-field row. */
    sprintf(buf, "%s\n", text);
    snprintf(want, sizeof want, "row has 1 fields, expected %d", ncols);
    expect_parse_error(buf, "3:1", want, "blank line");

    /* Line numbers count newlines inside quoted fields: row 1 spans lines
     * 2-4, so the next row is line 5. */
    opcost_result ok;
    row_ok(&ok);
    char path[512], err[512];
    join(path, sizeof path, "multi.csv");
    opcost_results_write(path, &ok, 1, err, sizeof err);
    char *multi = slurp(path);
    char *bad_line = edited_file("min_us", "abc", &col);
    char *both = malloc(strlen(multi) + strlen(bad_line) + 1);
    sprintf(both, "%s%s", multi, strchr(bad_line, '\n') + 1);
    snprintf(where, sizeof where, "5:%d", col);
    expect_parse_error(both, where, "column min_us: \"abc\"",
                       "line after a multi-line field");
    free(multi);
    free(bad_line);
    free(both);

    /* Tokenizer errors. */
    sprintf(buf, "%.*s\n\"abc\n", (int)hl, text);
    expect_parse_error(buf, "2:1", "quoted field is not closed",
                       "unterminated quote");
    sprintf(buf, "%.*s\n\"abc\"x,\n", (int)hl, text);
    expect_parse_error(buf, "2:6", "expected a comma or the end of the line",
                       "text after closing quote");
    expect_parse_error("", "1:1", "empty file", "empty file");
    free(buf);
    free(text);

    char missing[512];
    join(missing, sizeof missing, "missing.csv");
    opcost_result *rows;
    size_t n;
    C_EXPECT(opcost_results_read(missing, &rows, &n, err, sizeof err) == -1 &&
                 strstr(err, missing) && strstr(err, "cannot open"),
             "missing file: %s", err);
    C_EXPECT(opcost_results_read(dir, &rows, &n, err, sizeof err) == -1 &&
                 strstr(err, dir),
             "directory: %s", err);
}

/* RFC 4180 text as the writer quotes it (a sidecar written by hand). */
static void write_csv_text(FILE *f, const char *t)
{
    if (!strpbrk(t, ",\"\r\n")) {
        fputs(t, f);
        return;
    }
    putc('"', f);
    for (; *t; ++t) {
        if (*t == '"')
            putc('"', f);
        putc(*t, f);
    }
    putc('"', f);
}

static void test_samples(void)
{
    char err[512], buf[512], path[512];
    C_EXPECT(opcost_samples_path("a/b/r.csv", buf, sizeof buf, err,
                                 sizeof err) == 0 &&
                 !strcmp(buf, "a/b/r.samples.csv"),
             "sidecar path: %s", buf);
    C_EXPECT(opcost_samples_path("r.txt", buf, sizeof buf, err, sizeof err) ==
                     -1 &&
                 strstr(err, "csv_path") && strstr(err, ".csv"),
             "not .csv: %s", err);

    opcost_result rows[2];
    row_ok(&rows[0]);
    row_plain(&rows[1]);
    const opcost_sample s[] = {
        {0, 0, 0, 12.3456789, 0},
        {0, 0, 1, 12.5, 1},
        {0, 1, 0, 11.0, 2},
        {1, 0, 0, 1.5, 0},
        /* row 1's median_us (1.5): a sidecar may not contradict it */
        {1, 0, 1, 1.5, OPCOST_INT_NA},
    };
    const size_t ns = sizeof s / sizeof s[0];
    rows[0].n_samples = 3; /* the sidecar holds each row's n_samples */
    rows[1].n_samples = 2;
    join(path, sizeof path, "run.csv");
    C_EXPECT(opcost_results_write(path, rows, 2, err, sizeof err) == 0, "%s",
             err);
    C_EXPECT(opcost_samples_write(path, rows, 2, s, ns, err, sizeof err) == 0,
             "%s", err);
    C_EXPECT(temp_files(dir) == 0, "no temp file");
    join(buf, sizeof buf, "run.samples.csv");
    char *text = slurp(buf);
    static const char want[] =
        "run_id,point,path,variant,rep,sample,us,round\n"
        "20250101T000000Z-abc,0,fast,\"a,\"\"b\"\"\",0,0,12.3456789,0\n";
    C_EXPECT(text && !strncmp(text, want, strlen(want)), "sidecar text:\n%s",
             text ? text : "(none)");
    /* a sample without a round (an older sidecar's) writes it empty */
    C_EXPECT(text && strstr(text, ",0,1,1.5,\n"), "empty round:\n%s",
             text ? text : "(none)");
    free(text);

    opcost_sample *back = NULL;
    size_t n = 0;
    C_EXPECT(opcost_samples_read(path, rows, 2, &back, &n, err, sizeof err) ==
                 0,
             "%s", err);
    C_EXPECT(n == ns, "%zu samples back", n);
    for (size_t i = 0; i < n && i < ns; ++i)
        C_EXPECT(back[i].point == s[i].point && back[i].rep == s[i].rep &&
                     back[i].sample == s[i].sample && back[i].us == s[i].us &&
                     back[i].round == s[i].round,
                 "sample %zu round trips (%.17g)", i, back[i].us);
    free(back);

    /* a sidecar of schema versions 1-3 (no round column) still loads, its
     * rounds empty */
    {
        char side[512];
        join(side, sizeof side, "run.samples.csv");
        FILE *f = fopen(side, "w");
        fputs("run_id,point,path,variant,rep,sample,us\n", f);
        const char *ids[2] = {rows[0].run_id, rows[1].run_id};
        const char *paths[2] = {rows[0].path, rows[1].path};
        for (size_t i = 0; i < ns; ++i) {
            const int r = (int)s[i].point;
            fprintf(f, "%s,%d,%s,", ids[r], r, paths[r]);
            write_csv_text(f, rows[r].variant);
            fprintf(f, ",%d,%d,%.9g\n", (int)s[i].rep, (int)s[i].sample,
                    s[i].us);
        }
        fclose(f);
        C_EXPECT(
            opcost_samples_read(path, rows, 2, &back, &n, err, sizeof err) == 0,
            "a sidecar without rounds: %s", err);
        C_EXPECT(n == ns && back[0].round == OPCOST_INT_NA &&
                     back[2].us == s[2].us,
                 "a sidecar without rounds: %zu samples, round %lld", n,
                 n ? (long long)back[0].round : -1LL);
        free(back);
        C_EXPECT(opcost_samples_write(path, rows, 2, s, ns, err, sizeof err) ==
                     0,
                 "%s", err);
    }

    /* The sidecar must match the main rows it points at. */
    opcost_result other[2] = {rows[0], rows[1]};
    snprintf(other[1].run_id, sizeof other[1].run_id, "run2");
    C_EXPECT(opcost_samples_read(path, other, 2, &back, &n, err, sizeof err) ==
                     -1 &&
                 strstr(err, "run.samples.csv:5:1: column run_id: \"run1\" "
                             "differs"),
             "run_id mismatch: %s", err);
    C_EXPECT(opcost_samples_read(path, rows, 1, &back, &n, err, sizeof err) ==
                     -1 &&
                 strstr(err, ":5:") && strstr(err, "column point: 1"),
             "point out of range: %s", err);
    /* ... and hold each row's n_samples, in its repetitions: a sidecar cut
     * at a line boundary, or with another run's repetitions, is refused */
    C_EXPECT(opcost_samples_write(path, rows, 2, s, ns - 1, err, sizeof err) ==
                 0,
             "%s", err);
    C_EXPECT(opcost_samples_read(path, rows, 2, &back, &n, err, sizeof err) ==
                     -1 &&
                 strstr(err, "run.samples.csv: point 1 (row 3 of the main "
                             "CSV) has 1 samples, its row says n_samples = "
                             "2 (a truncated or mismatched sidecar)") &&
                 !back && n == 0,
             "truncated sidecar: %s", err);
    opcost_result fewer[2] = {rows[0], rows[1]};
    fewer[0].reps = 1;
    C_EXPECT(opcost_samples_write(path, rows, 2, s, ns, err, sizeof err) == 0,
             "%s", err);
    C_EXPECT(opcost_samples_read(path, fewer, 2, &back, &n, err, sizeof err) ==
                     -1 &&
                 strstr(err, "sample 3: rep 1 of point 0, whose row has "
                             "reps = 1"),
             "rep beyond the row's: %s", err);
    const opcost_sample far = {5, 0, 0, 1.0, 0};
    C_EXPECT(opcost_samples_write(path, rows, 2, &far, 1, err, sizeof err) ==
                     -1 &&
                 strstr(err, "samples[0].point"),
             "write: point out of range: %s", err);

    /* Streaming: abort leaves nothing; bad values are named. */
    join(path, sizeof path, "stream.csv");
    join(buf, sizeof buf, "stream.samples.csv");
    opcost_samples_writer *w;
    C_EXPECT(opcost_samples_open(&w, path, err, sizeof err) == 0, "%s", err);
    const opcost_sample nan_us = {0, 0, 0, NAN, 0}, neg_rep = {0, -1, 0, 1, 0},
                        neg_round = {0, 0, 0, 1, -2}, one = {0, 0, 0, 1, 0};
    C_EXPECT(opcost_samples_add(w, &rows[0], &nan_us, err, sizeof err) == -1 &&
                 strstr(err, "us:"),
             "NAN sample: %s", err);
    C_EXPECT(opcost_samples_add(w, &rows[0], &neg_rep, err, sizeof err) == -1 &&
                 strstr(err, "rep:"),
             "negative rep: %s", err);
    C_EXPECT(opcost_samples_add(w, &rows[0], &neg_round, err, sizeof err) ==
                     -1 &&
                 strstr(err, "round:"),
             "negative round: %s", err);
    opcost_samples_add(w, &rows[0], &one, err, sizeof err);
    opcost_samples_abort(w);
    C_EXPECT(!exists(buf) && temp_files(dir) == 0, "abort leaves nothing");
    C_EXPECT(opcost_samples_open(&w, path, err, sizeof err) == 0, "%s", err);
    opcost_samples_add(w, &rows[0], &one, err, sizeof err);
    C_EXPECT(opcost_samples_commit(w, err, sizeof err) == 0 && exists(buf),
             "commit: %s", err);
    C_EXPECT(opcost_samples_read(path, NULL, 0, &back, &n, err, sizeof err) ==
                     0 &&
                 n == 1 && back[0].us == 1.0,
             "read without rows: %s", err);
    free(back);
}

/* Files of schema versions 1 (the committed runs before measured
 * attribution) and 2 (before the run noise) still load: later versions'
 * columns read as empty, and writing the rows back gives a file of the
 * current version with the same values. */
static void test_older_version(int version, const char *header)
{
    opcost_result row;
    row_plain(&row);
    row.median_us = 7.25;
    row.kernel_us = 3.5;
    row.dispatch_us = 3.75;
    row.ci95_pooled_rel = 0.125;
    char path[512], err[512];
    join(path, sizeof path, "current.csv");
    C_EXPECT(opcost_results_write(path, &row, 1, err, sizeof err) == 0, "%s",
             err);
    /* the same row as that version writes it: drop the later columns */
    char *text = slurp(path);
    char old[4096] = "";
    const char *line = strchr(text, '\n') + 1;
    const char *p = line;
    for (size_t i = 0; opcost_results_column_name(i); ++i) {
        const size_t len = strcspn(p, ",\n");
        const char *name = opcost_results_column_name(i);
        const char *in_old = strstr(header, name);
        const int kept = in_old && (in_old == header || in_old[-1] == ',') &&
                         (in_old[strlen(name)] == ',' || !in_old[strlen(name)]);
        char v[8];
        snprintf(v, sizeof v, "%d", version);
        if (kept)
            snprintf(old + strlen(old), sizeof old - strlen(old), "%s%.*s",
                     old[0] ? "," : "",
                     !strcmp(name, "schema_version") ? (int)strlen(v)
                                                     : (int)len,
                     !strcmp(name, "schema_version") ? v : p);
        p += len + 1;
    }
    char file[8192];
    snprintf(file, sizeof file, "%s\n%s\n", header, old);
    free(text);
    char name[32];
    snprintf(name, sizeof name, "v%d.csv", version);
    c_write_file(name, file, path, sizeof path);
    opcost_result *back = NULL;
    size_t n = 0;
    C_EXPECT(opcost_results_read(path, &back, &n, err, sizeof err) == 0,
             "a version-%d file loads: %s", version, err);
    C_EXPECT(n == 1, "one row (got %zu)", n);
    if (n == 1) {
        C_EXPECT(back[0].schema_version == version, "schema_version %d kept",
                 version);
        C_EXPECT(back[0].median_us == 7.25 && back[0].kernel_us == 3.5 &&
                     back[0].dispatch_us == 3.75 &&
                     !strcmp(back[0].path, "reference"),
                 "version-%d values read", version);
        if (version < 2)
            C_EXPECT(isnan(back[0].other_kernel_us) &&
                         isnan(back[0].device_us) &&
                         isnan(back[0].tracer_overhead) &&
                         isnan(back[0].ci95_pooled_rel) &&
                         !back[0].attribution_source[0],
                     "version-2 columns empty");
        else
            C_EXPECT(back[0].ci95_pooled_rel == 0.125,
                     "version-2 columns read");
        if (version < 3)
            C_EXPECT(isnan(back[0].ci95_reps_rel) &&
                         isnan(back[0].run_noise_rel),
                     "version-3 columns empty");
        if (version < 4)
            C_EXPECT(isnan(back[0].ratio) && isnan(back[0].frac_of_peak_best) &&
                         !back[0].paired_with[0] && !back[0].verdict[0] &&
                         back[0].rounds == OPCOST_INT_NA,
                     "version-4 columns empty");
        if (version < 5)
            C_EXPECT(isnan(back[0].norm_share) &&
                         back[0].graph_breaks == OPCOST_INT_NA &&
                         back[0].recompiles == OPCOST_INT_NA &&
                         back[0].op_calls == OPCOST_INT_NA &&
                         back[0].copies_around == OPCOST_INT_NA &&
                         !back[0].fusion_boundary[0],
                     "version-5 columns empty");
        if (version < 6)
            C_EXPECT(!back[0].probe_state[0], "version-6 columns empty");
        C_EXPECT(isnan(back[0].out_err_units) &&
                     isnan(back[0].residual_err_units),
                 "version-7 columns empty");
        char again[512];
        join(again, sizeof again, "upgraded.csv");
        C_EXPECT(opcost_results_write(again, back, 1, err, sizeof err) == 0,
                 "rows of a version-%d file are written: %s", version, err);
        opcost_result *up = NULL;
        size_t m = 0;
        C_EXPECT(opcost_results_read(again, &up, &m, err, sizeof err) == 0 &&
                     m == 1 &&
                     up[0].schema_version == OPCOST_RESULTS_SCHEMA_VERSION &&
                     up[0].median_us == 7.25,
                 "written back as the current version: %s", err);
        free(up);
    }
    free(back);
    /* an older header with a row of a later version is refused */
    snprintf(file, sizeof file, "%s\n%d%s\n", header,
             OPCOST_RESULTS_SCHEMA_VERSION, strchr(old, ','));
    char want[128];
    snprintf(want, sizeof want,
             "schema_version: %d is not %d, the version of the file's header",
             OPCOST_RESULTS_SCHEMA_VERSION, version);
    expect_parse_error(file, "2:1", want,
                       "a current row under an older header");
}

int main(void)
{
    dir = c_tempdir("opcost_test_csv");
    test_header();
    test_round_trip();
    test_atomic();
    test_writer_checks();
    test_parse_errors();
    test_older_version(1, v1_header);
    test_older_version(2, v2_header);
    test_older_version(3, v3_header);
    test_older_version(4, v4_header);
    test_older_version(5, v5_header);
    test_older_version(6, v6_header);
    test_samples();
    return c_report("test_csv");
}
