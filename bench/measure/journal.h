/* SIGINT and SIGTERM during `opcost run`, and the journal that keeps what
 * was measured on disk whatever the signals do.
 *
 *   1st signal: the run stops after the current point, writes every
 *               measured row, marks the rest skipped and exits 1 (the
 *               caller polls opcost_interrupted()).
 *   2nd:        changes nothing (said so on stderr): the first one's
 *               promise holds.
 *   3rd:        stops at once: the journal, every row and sample of the
 *               points finished so far, becomes the results CSV and its
 *               sidecar (renamed into place from the handler), and the
 *               process exits with 128 + the signal. Every journal row's
 *               note begins with OPCOST_NOTE_UNSETTLED (results_csv.h),
 *               its verdict empty: the file says it is incomplete, and
 *               opcost check exits 1 on it.
 *
 * The journal is <out>.journal.<pid> and <sidecar>.journal.<pid>: rows and
 * samples appended as each point finishes, with the signals blocked while
 * a point is appended, so the files are whole whenever a signal can land.
 * A normal end (or an end by the first signal) writes the results
 * atomically as before and removes the journal. */
#ifndef OPCOST_JOURNAL_H
#define OPCOST_JOURNAL_H

#include "results_csv.h"

#include <stddef.h>

typedef struct opcost_journal opcost_journal;

/* Creates the journal beside out_path and installs the handlers. */
int opcost_journal_open(opcost_journal **j, const char *out_path, char *err,
                        size_t errlen);

/* Appends rows [j's count, nrows) and samples [j's count, nsamples): call
 * after each point. A failure to append is reported once on stderr; the
 * run goes on (its final write does not depend on the journal). */
void opcost_journal_add(opcost_journal *j, const opcost_result *rows,
                        size_t nrows, const opcost_sample *samples,
                        size_t nsamples);

/* Signals received so far. */
int opcost_interrupted(void);

/* Before the final write: the signals wait (blocked) until
 * opcost_journal_close, so none can put the journal over the results
 * being written. */
void opcost_journal_hold(opcost_journal *j);

/* Removes the journal and lets held signals in (now only counted). */
void opcost_journal_close(opcost_journal *j);

/* When the results could not be written (a full disk): keeps every row
 * and sample the journal holds as a pair beside the results path,
 * <stem>.unsaved-<pid>.csv and its sidecar (hard links, so no space is
 * needed), their CSV's name in csv, and lets held signals in. 0, or -1
 * when the journal itself had failed or could not be linked: then the
 * journal files stay as they are, csv naming the rows' one. */
int opcost_journal_keep(opcost_journal *j, char *csv, size_t len);

#endif
