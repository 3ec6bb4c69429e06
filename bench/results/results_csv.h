/* The results CSV: its schema (one column table in results_schema.c from
 * which the header, writer, parser and schema check all derive), the
 * atomic writer (results_writer.c), the parser (results_reader.c), and the
 * raw-samples sidecar (samples_writer.c, samples_reader.c). Columns are
 * documented in results/README.md. */
#ifndef OPCOST_RESULTS_CSV_H
#define OPCOST_RESULTS_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "row.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 added device_us, other_kernel_us, attribution_source,
 * tracer_overhead, sm_clock_mhz, throttle_reasons, ceiling_kind,
 * working_set_bytes and ci95_pooled_rel, and ci95_rel became the interval
 * of another run's median from the repetitions. Version 3 added
 * ci95_reps_rel and run_noise_rel, and ci95_rel became the wider of the
 * repetitions' interval and the run noise's. Version 4 added the paired
 * measurement (paired_with, ratio, ratio_ci95_rel, verdict, rounds,
 * frac_of_peak_ci95_rel, frac_of_peak_best, probe_gbps, stopped_by, side),
 * frac_of_peak became the ratio to the probe measured in the same rounds,
 * and the sidecar gained a round column. Version 5 added the model paths'
 * evidence (norm_share, graph_breaks, recompiles, op_calls, copies_around,
 * fusion_boundary). Version 6 added probe_state, and frac_of_peak of a
 * point streaming from DRAM became the ratio over the rounds at the
 * host's full bandwidth where there are enough (bandwidth_state.h). Files
 * of every earlier version still load (their new columns read as
 * empty). */
#define OPCOST_RESULTS_SCHEMA_VERSION 7

/* opcost check warns of rows whose frac_of_peak exceeds this: their
 * ceiling did not bound them. */
#define OPCOST_FRAC_OF_PEAK_WARN 1.05

/* What a row's note begins with when its file is a run's journal put in
 * place of its results (a run stopped at once by a third signal, or one
 * whose results could not be written: bench/measure/journal.h): the row
 * as its point finished, without what the run settles at its end (the
 * run noise; opcost ab's spread between processes, adjusted p-values and
 * verdicts, its verdict left empty). A file with such rows is incomplete:
 * opcost check exits 1 on it, opcost compare refuses it, opcost ab's
 * groups count its points as not paired. Files without it read as
 * before. */
#define OPCOST_NOTE_UNSETTLED                                                  \
    "unsettled (journal of a run that did not end: no run-wide settling)"

/* Whether row's note begins with OPCOST_NOTE_UNSETTLED. */
int opcost_result_unsettled(const opcost_result *row);

/* Writes s as one RFC 4180 field: quoted, quotes doubled, when it holds a
 * comma, a quote, CR or LF (every CSV opcost writes quotes this way). */
void opcost_csv_text(FILE *f, const char *s);

/* ---- The schema. */
size_t opcost_results_ncolumns(void);
const char *opcost_results_column_name(size_t i); /* NULL past the end */
/* The header line without its newline; returns strlen or -1 if len is too
 * small. */
int opcost_results_header(char *buf, size_t len);

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
 * run_id,point,path,variant,rep,sample,us,round (round since results
 * schema 4: files without it still load). point is the 0-based index of
 * the row in the main CSV; run_id, path and variant repeat that row's
 * (opcost_sample: row.h). */

/* Whether path is a regular file that starts with the results header
 * ("schema_version,"): what the history directory holds beside other
 * CSVs (gates.csv, compare's verdicts). A FIFO or device is not one, and
 * is not opened in a way that waits. */
int opcost_is_results_csv(const char *path);

/* The sidecar's path for a main CSV path, which must end in ".csv". */
int opcost_samples_path(const char *csv_path, char *buf, size_t len, char *err,
                        size_t errlen);

/* Streaming atomic writer: open, add samples as they are taken, then
 * commit (fsync + rename) or abort (removes the temp file). Both free w. */
typedef struct opcost_samples_writer opcost_samples_writer;
int opcost_samples_open(opcost_samples_writer **w, const char *csv_path,
                        char *err, size_t errlen);
int opcost_samples_add(opcost_samples_writer *w, const opcost_result *row,
                       const opcost_sample *s, char *err, size_t errlen);
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

/* A run's results CSV at path and its samples sidecar as one: both written
 * in full to temporaries (opcost_outfile), then the sidecar put in place,
 * then the CSV. A failure before that (a full disk, a bad row) leaves both
 * files at path as they were, a pair; err says which file and why. */
int opcost_run_files_write(const char *path, const opcost_result *rows,
                           size_t nrows, const opcost_sample *samples,
                           size_t nsamples, char *err, size_t errlen);

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
