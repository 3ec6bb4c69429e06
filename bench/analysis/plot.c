/* `opcost plot`: the command. Parses the options, reads the run, has
 * plot_data.c / plot_history.c write each kind's data files, and renders
 * them with the gnuplot scripts in <source>/plot (one per kind), running
 * gnuplot directly (no shell, so paths need no quoting but gnuplot's own). */
#define _POSIX_C_SOURCE 200809L
#include "plot.h"
#include "errorf.h"
#include "plot_data.h"
#include "results_csv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef OPCOST_SOURCE_DIR
#define OPCOST_SOURCE_DIR "."
#endif

/* The kinds (plot_kinds.def), in drawing order. */
typedef struct plot_kind {
    const char *name;
    opcost_plot_builder build;
    int needs_run; /* 0: drawn without RESULTS.csv */
    const char *help;
} plot_kind;

static const plot_kind kinds[] = {
#define OPCOST_PLOT_KIND(name, builder, needs_run, help)                       \
    {#name, builder, needs_run, help},
#include "plot_kinds.def"
#undef OPCOST_PLOT_KIND
};
enum { NKINDS = sizeof kinds / sizeof kinds[0] };

/* text in lines of at most width columns, each after indent spaces (the
 * first line after first, already printed, of that width) */
static void print_wrapped(FILE *f, const char *text, int indent, int width)
{
    int col = 0;
    for (const char *p = text; *p;) {
        const size_t n = strcspn(p, " ");
        if (col && col + 1 + (int)n > width) {
            fprintf(f, "\n%*s", indent, "");
            col = 0;
        }
        fprintf(f, "%s%.*s", col ? " " : "", (int)n, p);
        col += (col ? 1 : 0) + (int)n;
        p += n;
        p += strspn(p, " ");
    }
    fputc('\n', f);
}

/* "a, b, c" of the kinds' names, for --kind's error. */
static void kind_names(char *buf, size_t len)
{
    size_t u = 0;
    buf[0] = '\0';
    for (int k = 0; k < NKINDS && u < len; ++k)
        u += (size_t)snprintf(buf + u, len - u, "%s%s", k ? ", " : "",
                              kinds[k].name);
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: opcost plot RESULTS.csv [options]\n"
            "Draws a run's figures with gnuplot (scripts in %s/plot): for\n"
            "each kind a PNG and an SVG, plus the data files they plot, in\n"
            "the output directory. Only status-ok rows are drawn.\n"
            "  --out DIR           where the figures go (default:\n"
            "                      results/plots/<run_id>/, made if missing)\n"
            "  --kind NAME         a figure to draw, repeatable or comma-\n"
            "                      separated (default: all; a kind with\n"
            "                      nothing to draw is then skipped with a\n"
            "                      message, while a named one is an error):\n",
            OPCOST_SOURCE_DIR);
    for (int k = 0; k < NKINDS; ++k) {
        fprintf(f, "%24s%-13s", "", kinds[k].name);
        print_wrapped(f, kinds[k].help, 37, 30);
    }
    fprintf(
        f, "  --baseline VARIANT  variants: the baseline (default:\n"
           "                      cpu_strided, else the first variant)\n"
           "  --distribution NAME attribution and history: the shape set\n"
           "                      (default: the run's first; history: the\n"
           "                      latest run's first)\n"
           "  --dtype NAME        attribution: the dtype (default:\n"
           "                      bfloat16 where present, else the first)\n"
           "  --layout NAME       attribution: the layout (default:\n"
           "                      contiguous where present, else the first)\n"
           "  --history DIR       history: the results CSVs of past runs\n"
           "                      and an optional gates.csv of `opcost\n"
           "                      compare --gate --gates-out` verdicts\n"
           "                      (default: results/history); RESULTS.csv\n"
           "                      may be left out when only history is drawn\n"
           "  --table             also write each figure's plotted points as\n"
           "                      gnuplot `set table` text, <figure>.table\n"
           "  --help              this text\n"
           "Exit status: 0 drawn, 1 gnuplot missing or failed, 2 bad input.\n");
}

/* ---- gnuplot */

/* The gnuplot on PATH, into buf; -1 when there is none. */
static int find_gnuplot(char *buf, size_t len)
{
    const char *path = getenv("PATH");
    if (!path || !*path)
        return -1;
    for (const char *p = path;;) {
        const char *colon = strchr(p, ':');
        const size_t n = colon ? (size_t)(colon - p) : strlen(p);
        snprintf(buf, len, "%.*s/gnuplot", (int)n, n ? p : ".");
        if (access(buf, X_OK) == 0)
            return 0;
        if (!colon)
            return -1;
        p = colon + 1;
    }
}

/* Runs `gnuplot -e ASSIGN SCRIPT`, its stdout and stderr into a pipe.
 * Returns 0 when it exits 0 (its output, if any, printed as warnings), or
 * -1 with its status and output in err. */
static int run_gnuplot(const char *gnuplot, const char *script,
                       const char *assign, char *err, size_t errlen)
{
    int fd[2];
    if (pipe(fd) != 0) {
        opcost_errorf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    fflush(NULL);
    const pid_t pid = fork();
    if (pid < 0) {
        opcost_errorf(err, errlen, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return -1;
    }
    if (pid == 0) {
        const int null = open("/dev/null", O_RDONLY);
        if (null >= 0)
            dup2(null, 0);
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        close(fd[1]);
        execl(gnuplot, "gnuplot", "-e", assign, script, (char *)NULL);
        fprintf(stderr, "cannot run %s: %s\n", gnuplot, strerror(errno));
        _exit(127);
    }
    close(fd[1]);
    /* keep the output's head: gnuplot's first complaint is the cause */
    char out[8192];
    size_t n = 0;
    for (;;) {
        char chunk[4096];
        const ssize_t got = read(fd[0], chunk, sizeof chunk);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            break;
        const size_t take =
            (size_t)got < sizeof out - 1 - n ? (size_t)got : sizeof out - 1 - n;
        memcpy(out + n, chunk, take);
        n += take;
    }
    out[n] = '\0';
    close(fd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            opcost_errorf(err, errlen, "waitpid: %s", strerror(errno));
            return -1;
        }
    while (n && (out[n - 1] == '\n' || out[n - 1] == ' '))
        out[--n] = '\0';
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        if (n)
            fprintf(stderr, "opcost plot: gnuplot warned on %s:\n%s\n", script,
                    out);
        return 0;
    }
    if (WIFEXITED(status))
        opcost_errorf(err, errlen, "gnuplot failed on %s (exit status %d)%s%s",
                      script, WEXITSTATUS(status), n ? ":\n" : "", out);
    else
        opcost_errorf(err, errlen, "gnuplot failed on %s (signal %d)%s%s",
                      script, WIFSIGNALED(status) ? WTERMSIG(status) : 0,
                      n ? ":\n" : "", out);
    return -1;
}

/* Moves the figure's files (stem.dat, .png, .svg, .table) from the staging
 * directory into dir: rename replaces whatever name is there, a planted
 * link included, and never writes through it. */
static int publish(const opcost_plot_figure *fig, const char *dir, int table)
{
    static const char *const ext[] = {".dat", ".png", ".svg", ".table"};
    const char *name = strrchr(fig->stem, '/');
    name = name ? name + 1 : fig->stem;
    for (int i = 0; i < 3 + table; ++i) {
        char from[4200], to[4400];
        snprintf(from, sizeof from, "%s%s", fig->stem, ext[i]);
        snprintf(to, sizeof to, "%.4095s/%.255s%s", dir, name, ext[i]);
        if (rename(from, to) != 0) {
            fprintf(stderr, "opcost plot: --out: cannot put %s in place: %s\n",
                    to, strerror(errno));
            return 1;
        }
    }
    printf("opcost plot: %s/%s.png, %s/%s.svg%s\n", dir, name, dir, name,
           table ? " (+ .table)" : "");
    return 0;
}

/* Renders one figure: images, then (with table) the plotted points. */
static int render(const char *gnuplot, const opcost_plot_figure *fig, int table)
{
    char script[4096], err[12288];
    snprintf(script, sizeof script, "%s/plot/%s.gp", OPCOST_SOURCE_DIR,
             fig->script);
    if (access(script, R_OK) != 0) {
        fprintf(stderr,
                "opcost plot: %s: %s (the plot scripts ship in the "
                "source tree's plot/)\n",
                script, strerror(errno));
        return 1;
    }
    for (int pass = 0; pass < 1 + table; ++pass) {
        opcost_plot_text a = {0};
        opcost_plot_textf(&a, "%s", fig->assign);
        char path[sizeof fig->stem + 16];
        snprintf(path, sizeof path, "%s.dat", fig->stem);
        opcost_plot_assign(&a, "datafile", path);
        if (pass)
            snprintf(path, sizeof path, "%s.table", fig->stem);
        else
            snprintf(path, sizeof path, "%s", fig->stem);
        opcost_plot_assign(&a, pass ? "table" : "out", path);
        const int rc =
            a.failed ? -1 : run_gnuplot(gnuplot, script, a.s, err, sizeof err);
        if (a.failed)
            snprintf(err, sizeof err, "out of memory");
        opcost_plot_text_free(&a);
        if (rc) {
            fprintf(stderr, "opcost plot: %s\n", err);
            return 1;
        }
    }
    return 0;
}

/* The staging directory's files, then the directory itself. */
static void remove_stage(const char *stage)
{
    DIR *d = opendir(stage);
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        char p[4400];
        const int len = snprintf(p, sizeof p, "%s/%s", stage, e->d_name);
        if (len > 0 && (size_t)len < sizeof p)
            unlink(p);
    }
    if (d)
        closedir(d);
    rmdir(stage);
}

/* ---- The command. */

/* mkdir -p. */
static int make_dirs(const char *dir)
{
    char buf[4096];
    if (snprintf(buf, sizeof buf, "%s", dir) >= (int)sizeof buf) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *p = buf + 1;; ++p) {
        const int end = !*p;
        if (*p == '/' || end) {
            *p = '\0';
            if (mkdir(buf, 0777) != 0 && errno != EEXIST)
                return -1;
            if (end)
                break;
            *p = '/';
        }
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

/* Adds the kinds named in a comma-separated list; -1 on a bad name. */
static int parse_kinds(const char *list, int *want)
{
    for (const char *p = list;;) {
        const char *comma = strchr(p, ',');
        const size_t n = comma ? (size_t)(comma - p) : strlen(p);
        int found = 0;
        for (int k = 0; k < NKINDS; ++k)
            if (n == strlen(kinds[k].name) && !strncmp(p, kinds[k].name, n))
                want[k] = found = 1;
        if (n == 3 && !strncmp(p, "all", 3))
            for (int k = 0; k < NKINDS; ++k)
                want[k] = found = 1;
        if (!found)
            return -1;
        if (!comma)
            return 0;
        p = comma + 1;
    }
}

/* What `opcost plot` was asked: the builders' options in in, the kinds
 * wanted (named: by --kind), the output folder. */
typedef struct plot_request {
    opcost_plot_input in;
    const char *out_dir;
    int want[NKINDS], named, table;
    const char *csv; /* NULL: none (history alone) */
} plot_request;

/* Parses the command line into q. *done = 0: go on and draw; else the
 * return value is the exit status (0 after --help; 2 for bad input, the
 * reason printed). */
static int parse_plot(int argc, char **argv, plot_request *q, int *done)
{
    static const struct option opts[] = {
        {"out", required_argument, NULL, 'o'},
        {"kind", required_argument, NULL, 'k'},
        {"baseline", required_argument, NULL, 'b'},
        {"distribution", required_argument, NULL, 'd'},
        {"dtype", required_argument, NULL, 't'},
        {"layout", required_argument, NULL, 'l'},
        {"history", required_argument, NULL, 'H'},
        {"table", no_argument, NULL, 'T'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    memset(q, 0, sizeof *q);
    opcost_plot_input *in = &q->in;
    in->history_dir = "results/history";
    *done = 1;
    int ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (ch) {
        case 'o': q->out_dir = optarg; break;
        case 'k':
            if (parse_kinds(optarg, q->want)) {
                char names[512];
                kind_names(names, sizeof names);
                fprintf(stderr,
                        "opcost plot: --kind: must be %s or all (comma-"
                        "separated), got '%s'\n",
                        names, optarg);
                return 2;
            }
            q->named = 1;
            break;
        case 'b': in->baseline = optarg; break;
        case 'd': in->distribution = optarg; break;
        case 't': in->dtype = optarg; break;
        case 'l': in->layout = optarg; break;
        case 'H': in->history_dir = optarg; break;
        case 'T': q->table = 1; break;
        case 'h': usage(stdout); return 0;
        case ':':
            fprintf(stderr, "opcost plot: %s: needs a value\n",
                    argv[optind - 1]);
            return 2;
        default:
            fprintf(stderr,
                    "opcost plot: unknown option '%s' (opcost plot --help "
                    "lists them)\n",
                    argv[optind - 1]);
            return 2;
        }
    }
    if ((q->out_dir && !*q->out_dir) || !*in->history_dir) {
        fprintf(stderr, "opcost plot: --%s: must be a directory, got ''\n",
                q->out_dir && !*q->out_dir ? "out" : "history");
        return 2;
    }
    if (!q->named)
        for (int k = 0; k < NKINDS; ++k)
            q->want[k] = 1;
    int needs_run = 0; /* a wanted kind draws from RESULTS.csv */
    for (int k = 0; k < NKINDS; ++k)
        needs_run |= q->want[k] && kinds[k].needs_run;
    const int nfiles = argc - optind;
    if (nfiles > 1 || (nfiles == 0 && needs_run)) {
        fprintf(stderr,
                "opcost plot: expected one RESULTS.csv, got %d file "
                "arguments (opcost plot --help)\n",
                nfiles);
        return 2;
    }
    q->csv = nfiles ? argv[optind] : NULL;
    *done = 0;
    return 0;
}

int opcost_plot_main(int argc, char **argv)
{
    plot_request q;
    int done;
    const int status = parse_plot(argc, argv, &q, &done);
    if (done)
        return status;
    opcost_plot_input in = q.in;
    const char *out_dir = q.out_dir;
    const int *want = q.want, named = q.named, table = q.table;
    const int nfiles = q.csv != NULL;
    char err[4096];
    opcost_result *rows = NULL;
    opcost_sample *samples = NULL;
    size_t nrows = 0, nsamples = 0;
    if (nfiles) {
        in.csv_path = q.csv;
        char side[4096];
        if (opcost_results_read(in.csv_path, &rows, &nrows, err, sizeof err)) {
            fprintf(stderr, "opcost plot: RESULTS.csv: %s\n", err);
            return 2;
        }
        /* the sidecar is optional; a present one must be sound */
        if (opcost_samples_path(in.csv_path, side, sizeof side, err,
                                sizeof err) == 0 &&
            access(side, F_OK) == 0 &&
            opcost_samples_read(in.csv_path, rows, nrows, &samples, &nsamples,
                                err, sizeof err)) {
            fprintf(stderr, "opcost plot: %s\n", err);
            free(rows);
            return 2;
        }
        if (!nrows) {
            fprintf(stderr, "opcost plot: RESULTS.csv: %s has no rows\n",
                    in.csv_path);
            free(rows);
            return 2;
        }
    }
    in.rows = rows;
    in.nrows = nrows;
    in.samples = samples;
    in.nsamples = nsamples;
    char dir[4096];
    if (out_dir)
        snprintf(dir, sizeof dir, "%s", out_dir);
    else {
        /* the run id is the CSV's text: one path component, no escape */
        snprintf(dir, sizeof dir, "results/plots/%s",
                 nrows ? rows[0].run_id : "history");
        for (char *c = dir + strlen("results/plots/"); *c; ++c)
            if (*c == '/' || (c[0] == '.' && c[1] == '.'))
                *c = '_';
    }
    /* every file is made in a fresh directory of this process's inside
     * dir, then renamed into dir: gnuplot opens its images itself, and
     * would write through a link planted at dir/<figure>.png */
    char stage[4200] = "";
    in.dir = stage;

    int rc = 0;
    char gnuplot[4096];
    if (find_gnuplot(gnuplot, sizeof gnuplot)) {
        fprintf(stderr, "opcost plot: gnuplot not found on PATH (install "
                        "gnuplot, e.g. apt-get install gnuplot-nox)\n");
        rc = 1;
    } else if (make_dirs(dir)) {
        fprintf(stderr, "opcost plot: --out: cannot make directory %s: %s\n",
                dir, strerror(errno));
        rc = 2;
    } else if (snprintf(stage, sizeof stage, "%s/.opcost-plot.XXXXXX", dir) >=
                   (int)sizeof stage ||
               !mkdtemp(stage)) {
        fprintf(stderr, "opcost plot: --out: cannot write in %s: %s\n", dir,
                strerror(errno));
        stage[0] = '\0';
        rc = 2;
    }
    for (int k = 0; k < NKINDS && !rc; ++k) {
        if (!want[k])
            continue;
        opcost_plot_figures figs = {0};
        const int got = kinds[k].build(&in, &figs, err, sizeof err);
        if (got == OPCOST_PLOT_SKIP && !named)
            printf("opcost plot: %s skipped: %s\n", kinds[k].name, err);
        else if (got != OPCOST_PLOT_DONE) {
            fprintf(stderr, "opcost plot: %s: %s\n", kinds[k].name, err);
            rc = got == OPCOST_PLOT_FAILED ? 1 : 2;
        }
        for (size_t i = 0; got == OPCOST_PLOT_DONE && !rc && i < figs.n; ++i)
            rc = render(gnuplot, &figs.v[i], table) ||
                 publish(&figs.v[i], dir, table);
        opcost_plot_figures_free(&figs);
    }
    if (stage[0])
        remove_stage(stage);
    free(samples);
    free(rows);
    return rc;
}
