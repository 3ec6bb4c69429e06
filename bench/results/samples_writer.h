/* Inside results/: the samples sidecar's writer as run_files.c needs it
 * (its open file, its checks and filling) to put it in place with the
 * results CSV as one. */
#ifndef OPCOST_SAMPLES_WRITER_H
#define OPCOST_SAMPLES_WRITER_H

#include "outfile.h"
#include "results_csv.h"

struct opcost_samples_writer {
    opcost_outfile file;
};

/* The checks of opcost_samples_write's arguments. */
int samples_check_args(const opcost_result *rows, size_t nrows,
                       const opcost_sample *samples, size_t n, char *err,
                       size_t errlen);

/* Every sample into an open writer; on failure the writer is aborted. */
int samples_fill(opcost_samples_writer *w, const opcost_result *rows,
                 const opcost_sample *samples, size_t n, char *err,
                 size_t errlen);

#endif
