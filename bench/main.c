/* opcost: the benchmark driver. Subcommands: run, list, shapes, check,
 * compare, plot, targets (usage() lists them). */
#include "compare.h"
#include "derive.h"
#include "path.h"
#include "plot.h"
#include "results_csv.h"
#include "run.h"
#include "targets.h"
#include "variants.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

/* Every subcommand, as main() dispatches them (tests/sh/cli_help.sh checks
 * that each is listed and answers --help). */
static void usage(FILE *f)
{
    fprintf(f, "usage: opcost <command> [options]\n"
               "  run      time the paths over shape distributions (opcost run "
               "--help)\n"
               "  list     the paths, kernel variants and shape sets\n"
               "  shapes   derive shape distributions from request traces, "
               "check\n"
               "           shape files (opcost shapes --help)\n"
               "  check    check results CSVs and their samples sidecars "
               "(opcost\n"
               "           check --help)\n"
               "  compare  compare two runs, or two kernel variants of one, "
               "with\n"
               "           significance; the nightly gate (opcost compare "
               "--help)\n"
               "  plot     gnuplot figures of a results CSV (opcost plot "
               "--help)\n"
               "  targets  the CPU performance targets on results CSVs "
               "(opcost targets --help)\n"
               "  help     this text (also --help, -h)\n");
}

static const char check_usage[] =
    "usage: opcost check [--require-ok] [--allow-wrong PATH] FILE.csv...\n"
    "Checks each results CSV against the schema and, when its .samples.csv\n"
    "sidecar exists, the sidecar against the rows (every sample of a row,\n"
    "in its repetitions). Errors name file:line:column. Warns (on stderr,\n"
    "the exit status unchanged) of rows whose frac_of_peak exceeds 1.05.\n"
    "  --require-ok        every row must also have status ok\n"
    "  --allow-wrong PATH  except rows of PATH with status wrong\n"
    "  -h, --help          this text\n"
    "Exit status: 0 ok, 2 a file or sidecar is malformed, 1 --require-ok\n"
    "found a row that is not ok.\n";

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list_main(void)
{
    printf("paths:\n");
    for (size_t i = 0; i < opcost_path_count(); ++i) {
        const opcost_path *p = opcost_path_at(i);
        printf("  %-28s %s%s%s\n", p->name,
               p->named_only ? "[run only when named] " : "",
               p->devices == OPCOST_ON_CPU    ? "[CPU only] "
               : p->devices == OPCOST_ON_CUDA ? "[GPU only] "
                                              : "",
               p->description);
    }
    printf("kernel variants (--variants, for the kernel path):\n");
    printf("  %-18s %s\n", "auto", opcost_variant_auto.what);
    for (size_t i = 0; i < opcost_variant_count(); ++i)
        printf("  %-18s %s\n", opcost_variant_at(i)->name,
               opcost_variant_at(i)->what);
    printf("shape sets (--shapes, in %s/shapes):\n", OPCOST_SOURCE_DIR);
    DIR *d = opendir(OPCOST_SOURCE_DIR "/shapes");
    char *names[256];
    size_t n = 0;
    for (struct dirent *e; d && (e = readdir(d)) && n < 256;) {
        const size_t len = strlen(e->d_name);
        if (len > 4 && !strcmp(e->d_name + len - 4, ".csv"))
            names[n++] = strndup(e->d_name, len - 4);
    }
    if (d)
        closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    for (size_t i = 0; i < n; ++i) {
        printf("  %s\n", names[i]);
        free(names[i]);
    }
    return 0;
}

static int check_main(int argc, char **argv)
{
    /* Exit status: 0 ok; 2 a file or sidecar is malformed; 1 --require-ok
     * found a row that is not ok.
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
        if (!bad)
            printf("%s: %zu rows, %zu samples: ok\n", argv[i], n, ns);
        free(samples);
        free(rows);
    }
    return bad;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run"))
        return opcost_run_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "list")) {
        if (argc > 2 &&
            (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
            printf("usage: opcost list\nThe paths, kernel variants and shape "
                   "sets (names for --paths, --variants, --shapes).\n");
            return 0;
        }
        if (argc > 2) {
            fprintf(stderr, "opcost list: takes no arguments (got '%s')\n",
                    argv[2]);
            return 2;
        }
        return list_main();
    }
    if (!strcmp(cmd, "plot"))
        return opcost_plot_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "compare"))
        return opcost_compare_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "check"))
        return check_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "shapes"))
        return opcost_shapes_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "targets"))
        return opcost_targets_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "opcost: unknown command '%s'\n", cmd);
    usage(stderr);
    return 2;
}
