/* Inside results/: the results CSV written into an open temporary, for
 * opcost_run_files_write (run_files.c) to put in place with its sidecar. */
#ifndef OPCOST_RESULTS_WRITER_H
#define OPCOST_RESULTS_WRITER_H

#include "outfile.h"
#include "results_csv.h"

/* The results CSV at path into an open temporary: the rows checked as
 * the reader checks them, then printed (the caller commits or aborts). */
int results_open_temp(opcost_outfile *o, const char *path,
                      const opcost_result *rows, size_t n, char *err,
                      size_t errlen);

#endif
