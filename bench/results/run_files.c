/* A run's results CSV and its samples sidecar written as one
 * (opcost_run_files_write, results_csv.h): both whole on disk before
 * either is put in place. */
#include "results_writer.h"
#include "samples_writer.h"

int opcost_run_files_write(const char *path, const opcost_result *rows,
                           size_t nrows, const opcost_sample *samples,
                           size_t nsamples, char *err, size_t errlen)
{
    opcost_outfile csv;
    opcost_samples_writer *side;
    if (samples_check_args(rows, nrows, samples, nsamples, err, errlen) ||
        results_open_temp(&csv, path, rows, nrows, err, errlen))
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
