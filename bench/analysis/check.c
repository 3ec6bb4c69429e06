/* `opcost check FILE...`: results CSVs (and their samples sidecars)
 * against the schema, rows that are not ok, fractions of peak above one. */
#define _POSIX_C_SOURCE 200809L /* access */
#include "check.h"
#include "results_csv.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char check_usage[] =
    "usage: opcost check [--require-ok] [--allow-wrong PATH] FILE.csv...\n"
    "Checks each results CSV against the schema and, when its .samples.csv\n"
    "sidecar exists, the sidecar against the rows (every sample of a row,\n"
    "in its repetitions). Errors name file:line:column. Warns (on stderr,\n"
    "the exit status unchanged) of rows whose frac_of_peak exceeds 1.05.\n"
    "  --require-ok        every row must also have status ok\n"
    "  --allow-wrong PATH  except rows of PATH with status wrong\n"
    "  -h, --help          this text\n"
    "A file whose rows are unsettled (the journal of a run that did not end:\n"
    "stopped at once by a third signal, or its results unwritable) is\n"
    "incomplete: said, exit 1. Rows a signal skipped are warned of.\n"
    "Exit status: 0 ok, 2 a file or sidecar is malformed, 1 --require-ok\n"
    "found a row that is not ok, or a file is incomplete.\n";

int opcost_check_main(int argc, char **argv)
{
    /* Exit status: 0 ok; 2 a file or sidecar is malformed; 1 --require-ok
     * found a row that is not ok, or a file is incomplete (unsettled).
     * --require-ok: every row must also have status ok (a test's run);
     * --allow-wrong PATH: except `wrong` rows of that path (a known
     * deviation the row's note explains). */
    int require_ok = 0, first = 1;
    const char *allow_wrong = NULL;
    for (; first < argc && argv[first][0] == '-'; ++first) {
        if (!strcmp(argv[first], "--help") || !strcmp(argv[first], "-h")) {
            fputs(check_usage, stdout);
            return 0;
        }
        if (!strcmp(argv[first], "--require-ok"))
            require_ok = 1;
        else if (!strcmp(argv[first], "--allow-wrong") && first + 1 < argc)
            allow_wrong = argv[++first];
        else {
            fprintf(stderr, "opcost check: unknown option '%s'\n", argv[first]);
            return 2;
        }
    }
    if (first >= argc) {
        fputs(check_usage, stderr);
        return 2;
    }
    int bad = 0;
    for (int i = first; i < argc; ++i) {
        char err[1024];
        opcost_result *rows = NULL;
        size_t n = 0;
        if (opcost_results_read(argv[i], &rows, &n, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            bad = 2; /* malformed input */
            continue;
        }
        /* the sidecar, when present, must match the rows */
        char side[4096];
        opcost_sample *samples = NULL;
        size_t ns = 0;
        if (opcost_samples_path(argv[i], side, sizeof side, err, sizeof err) ==
                0 &&
            access(side, F_OK) == 0 &&
            opcost_samples_read(argv[i], rows, n, &samples, &ns, err,
                                sizeof err)) {
            fprintf(stderr, "%s\n", err);
            bad = 2;
        }
        for (size_t r = 0; require_ok && r < n; ++r)
            if (rows[r].status != OPCOST_STATUS_OK &&
                !(rows[r].status == OPCOST_STATUS_WRONG && allow_wrong &&
                  !strcmp(rows[r].path, allow_wrong))) {
                fprintf(stderr,
                        "%s: row %zu (%s %s B=%lld N=%lld %s %s): "
                        "status %s: %s\n",
                        argv[i], r + 1, rows[r].path, rows[r].op,
                        (long long)rows[r].B, (long long)rows[r].N,
                        rows[r].dtype, rows[r].layout,
                        opcost_status_name(rows[r].status), rows[r].note);
                bad = bad ? bad : 1;
            }
        /* a fraction of peak above one is a claim nobody can use: the
         * row's ceiling did not bound it */
        for (size_t r = 0; r < n; ++r)
            if (rows[r].frac_of_peak > OPCOST_FRAC_OF_PEAK_WARN)
                fprintf(stderr,
                        "%s: warning: row %zu (%s %s B=%lld N=%lld %s %s): "
                        "frac_of_peak %.3f > %.2f: its ceiling (%s, %.1f "
                        "GB/s) does not bound it\n",
                        argv[i], r + 1, rows[r].path, rows[r].op,
                        (long long)rows[r].B, (long long)rows[r].N,
                        rows[r].dtype, rows[r].layout, rows[r].frac_of_peak,
                        OPCOST_FRAC_OF_PEAK_WARN,
                        rows[r].ceiling_kind[0] ? rows[r].ceiling_kind
                                                : "one ceiling for all rows",
                        rows[r].ceiling_gbps);
        /* a run that ended early: its journal in place of its results
         * (refused), or points a signal skipped (warned of) */
        size_t unsettled = 0, interrupted = 0;
        for (size_t r = 0; r < n; ++r) {
            unsettled += opcost_result_unsettled(&rows[r]) != 0;
            interrupted += rows[r].status == OPCOST_STATUS_SKIPPED &&
                           strstr(rows[r].note, "interrupted") != NULL;
        }
        if (unsettled) {
            fprintf(stderr,
                    "%s: incomplete: %zu of %zu rows unsettled: the journal "
                    "of a run that did not end (stopped at once, or its "
                    "results unwritable): only the points it finished, "
                    "without the run's settling (run noise, opcost ab's "
                    "spread between processes, adjusted p-values, "
                    "verdicts); measure again\n",
                    argv[i], unsettled, n);
            bad = bad ? bad : 1;
        }
        if (interrupted)
            fprintf(stderr,
                    "%s: warning: incomplete: %zu of %zu rows skipped by an "
                    "interrupt (status skipped)\n",
                    argv[i], interrupted, n);
        if (!bad)
            printf("%s: %zu rows, %zu samples: ok\n", argv[i], n, ns);
        free(samples);
        free(rows);
    }
    return bad;
}
