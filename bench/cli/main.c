/* opcost: the benchmark driver. Subcommands: run, list, shapes, check,
 * compare, plot, targets (usage() lists them). */
#include "check.h"
#include "compare.h"
#include "derive.h"
#include "plot.h"
#include "results_csv.h"
#include "targets.h"
#ifndef OPCOST_NO_TORCH
#include "ab_cmd.h"
#include "registry.h"
#include "run.h"
#include "variants.h"
#endif

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
               "  ab       A/B of two builds in lockstep rounds over shared "
               "buffers\n"
               "           (opcost ab --help)\n"
               "  worker   a side of opcost ab (which starts it)\n"
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

#ifndef OPCOST_NO_TORCH
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
#else
/* This opcost was built without libtorch (ROWOPS_WITH_TORCH=OFF): it
 * reads, checks, compares and plots results and derives shapes. */
static int opcost_run_main(int argc, char **argv)
{
    (void)argc;
    fprintf(stderr,
            "opcost %s: this opcost is built without libtorch "
            "(ROWOPS_WITH_TORCH=OFF): it has check, compare, plot, targets "
            "and shapes; build with libtorch to run benchmarks\n",
            argv[0]);
    return 2;
}

static int list_main(void)
{
    char *argv[] = {"list", NULL};
    return opcost_run_main(1, argv);
}

static int opcost_ab_main(int argc, char **argv)
{
    return opcost_run_main(argc, argv);
}

static int opcost_worker_main(int argc, char **argv)
{
    return opcost_run_main(argc, argv);
}
#endif

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "run"))
        return opcost_run_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "ab"))
        return opcost_ab_main(argc - 1, argv + 1);
    if (!strcmp(cmd, "worker"))
        return opcost_worker_main(argc - 1, argv + 1);
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
        return opcost_check_main(argc - 1, argv + 1);
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
