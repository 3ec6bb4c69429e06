/* The results CSV: its schema (one column table in results_csv.c from which
 * the header, writer, parser and schema check all derive), the atomic
 * writer, the parser, and the raw-samples sidecar. Columns are documented
 * in results/README.md. */
#ifndef OPCOST_RESULTS_CSV_H
#define OPCOST_RESULTS_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Where a row's parts come from (the attribution_source column). */
typedef enum opcost_attribution_source {
    OPCOST_ATTRIBUTION_DIFFERENTIAL = 0,
    OPCOST_ATTRIBUTION_RECORD_FUNCTION,
    OPCOST_ATTRIBUTION_CUPTI,
    OPCOST_ATTRIBUTION_SOURCE_COUNT
} opcost_attribution_source;

const char *opcost_attribution_source_name(opcost_attribution_source s);

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 added device_us, other_kernel_us, attribution_source,
 * tracer_overhead, sm_clock_mhz, throttle_reasons, ceiling_kind,
 * working_set_bytes and ci95_pooled_rel, and ci95_rel became the interval
 * of another run's median from the repetitions. Version 3 added
 * ci95_reps_rel and run_noise_rel, and ci95_rel became the wider of the
 * repetitions' interval and the run noise's. Files of every earlier
 * version still load (their new columns read as empty). */
#define OPCOST_RESULTS_SCHEMA_VERSION 3

/* Capacity of text fields, including the terminating NUL. */
#define OPCOST_TEXT_MAX 128
#define OPCOST_NOTE_MAX 1024

/* opcost check warns of rows whose frac_of_peak exceeds this: their
 * ceiling did not bound them. */
#define OPCOST_FRAC_OF_PEAK_WARN 1.05

/* An integer column left empty (does not apply). */
#define OPCOST_INT_NA INT64_MIN

typedef enum opcost_status {
    OPCOST_STATUS_OK = 0,
    OPCOST_STATUS_SKIPPED,
    OPCOST_STATUS_WRONG,
    OPCOST_STATUS_ERROR
} opcost_status;

typedef enum opcost_cache_state {
    OPCOST_CACHE_COLD = 0,
    OPCOST_CACHE_WARM
} opcost_cache_state;

/* One row, one field per column in column order. A double that does not
 * apply is NAN (written empty); an integer that does not apply is
 * OPCOST_INT_NA (written empty); text may be empty unless required. */
typedef struct opcost_result {
    int64_t schema_version;
    char run_id[OPCOST_TEXT_MAX];
    char timestamp_utc[OPCOST_TEXT_MAX];
    char git_sha[OPCOST_TEXT_MAX];
    char host[OPCOST_TEXT_MAX];
    char cpu[OPCOST_TEXT_MAX];
    char gpu[OPCOST_TEXT_MAX];
    char torch_version[OPCOST_TEXT_MAX];
    char device[OPCOST_TEXT_MAX];
    int64_t threads;
    char distribution[OPCOST_TEXT_MAX];
    char op[OPCOST_TEXT_MAX];
    int64_t B;
    int64_t N;
    char dtype[OPCOST_TEXT_MAX];
    char weight_dtype[OPCOST_TEXT_MAX];
    char layout[OPCOST_TEXT_MAX];
    char freq[OPCOST_TEXT_MAX];
    char path[OPCOST_TEXT_MAX];
    char variant[OPCOST_TEXT_MAX];
    char dispatch_path[OPCOST_TEXT_MAX];
    opcost_cache_state cache_state;
    opcost_status status;
    int64_t reps;
    int64_t n_samples;
    double median_us;
    double min_us;
    double p90_us;
    double mean_us;
    double stddev_us;
    double ci95_rel;
    double device_us; /* GPU: device time per call (CUDA events) */
    double compile_ms;
    double kernel_us;
    double other_kernel_us; /* compute of kernels other than ours */
    double conversion_us;
    double launch_us;
    double dispatch_us;
    double idle_us;
    /* differential, record_function or cupti (bench/measure/attribution.h) */
    char attribution_source[OPCOST_TEXT_MAX];
    double tracer_overhead; /* traced median / untraced median */
    int64_t bytes;
    double gbps;
    double ceiling_gbps;
    double frac_of_peak;
    double sm_clock_mhz;                    /* GPU: SM clock at the point */
    char throttle_reasons[OPCOST_TEXT_MAX]; /* GPU: clock event reasons */
    /* which ceiling frac_of_peak divides by ("dram fused nt", "l3 rows
     * plain", ...) and the bytes one call touches (its level) */
    char ceiling_kind[OPCOST_TEXT_MAX];
    int64_t working_set_bytes;
    /* the distribution-free interval of the pooled samples' median (what
     * ci95_rel was in version 1) */
    double ci95_pooled_rel;
    /* version 3 */
    double ci95_reps_rel; /* the repetitions' own interval (v2's ci95_rel) */
    double run_noise_rel; /* the run's run-to-run noise (per run) */
    char note[OPCOST_NOTE_MAX];
} opcost_result;

/* A row with schema_version set, every number "does not apply", every text
 * empty, status ok and cache_state warm. */
void opcost_result_init(opcost_result *row);

/* ---- The schema. */
size_t opcost_results_ncolumns(void);
const char *opcost_results_column_name(size_t i); /* NULL past the end */
/* The header line without its newline; returns strlen or -1 if len is too
 * small. */
int opcost_results_header(char *buf, size_t len);

const char *opcost_status_name(opcost_status s);
const char *opcost_cache_state_name(opcost_cache_state c);

/* Checks a row as the writer and parser do. where prefixes the message
 * (e.g. "rows[3]"). Returns 0, or -1 naming the column and the rule. */
int opcost_result_check(const opcost_result *row, const char *where, char *err,
                        size_t errlen);

/* ---- Atomic write: writes <path>.tmp.<pid> beside path, flushes and
 * fsyncs it, then rename(2)s it over path. On any failure the temp file is
 * removed, path is left as it was, and err names the path and the reason.
 * Every row is checked before anything is written. */
int opcost_results_write(const char *path, const opcost_result *rows, size_t n,
                         char *err, size_t errlen);

/* The writer's text to an open stream, without the atomic file: the
 * header (when header) and the rows, each checked first (run.c's journal
 * of a run, appended point by point). */
int opcost_results_fprint(FILE *f, const opcost_result *rows, size_t n,
                          int header, char *err, size_t errlen);

/* ---- Parser: the exact header of one schema version (1 or later), its
 * fields a row (a column the file's version lacks reads as empty), types,
 * enums and the row rules, with "path:line:column: " errors. *rows is malloc'd
 * (free it); NULL and *n = 0 on error. */
int opcost_results_read(const char *path, opcost_result **rows, size_t *n,
                        char *err, size_t errlen);

/* Schema check of a file: opcost_results_read, discarding the rows. */
int opcost_results_check_file(const char *path, char *err, size_t errlen);

/* ---- Raw-samples sidecar: <csv_path minus .csv>.samples.csv with columns
 * run_id,point,path,variant,rep,sample,us. point is the 0-based index of
 * the row in the main CSV; run_id, path and variant repeat that row's. */
typedef struct opcost_sample {
    int64_t point;
    int64_t rep;    /* 0-based repetition */
    int64_t sample; /* 0-based index within the repetition */
    double us;
} opcost_sample;

/* The sidecar's path for a main CSV path, which must end in ".csv". */
int opcost_samples_path(const char *csv_path, char *buf, size_t len, char *err,
                        size_t errlen);

/* Streaming atomic writer: open, add samples as they are taken, then
 * commit (fsync + rename) or abort (removes the temp file). Both free w. */
typedef struct opcost_samples_writer opcost_samples_writer;
int opcost_samples_open(opcost_samples_writer **w, const char *csv_path,
                        char *err, size_t errlen);
int opcost_samples_add(opcost_samples_writer *w, const opcost_result *row,
                       int64_t point, int64_t rep, int64_t sample, double us,
                       char *err, size_t errlen);
int opcost_samples_commit(opcost_samples_writer *w, char *err, size_t errlen);
void opcost_samples_abort(opcost_samples_writer *w);

/* The sidecar's text to an open stream (the header when header), as
 * opcost_samples_add writes it; samples[i].point indexes rows. */
int opcost_samples_fprint(FILE *f, const opcost_result *rows, size_t nrows,
                          const opcost_sample *samples, size_t n, int header,
                          char *err, size_t errlen);

/* All at once: samples[i].point indexes rows[0..nrows-1]. */
int opcost_samples_write(const char *csv_path, const opcost_result *rows,
                         size_t nrows, const opcost_sample *samples, size_t n,
                         char *err, size_t errlen);

/* Reads the sidecar of csv_path. With rows non-NULL, each line's point
 * must index rows[0..nrows-1] and its run_id, path and variant must match
 * that row's. *samples is malloc'd (free it). */
int opcost_samples_read(const char *csv_path, const opcost_result *rows,
                        size_t nrows, opcost_sample **samples, size_t *n,
                        char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
