/* The data behind `opcost plot`'s figures. Each kind turns results rows
 * into whitespace-separated data files in the output directory (one block
 * per series, opened by a comment naming the columns and a header line
 * whose first word is the series' title) and into the gnuplot assignments
 * that parameterise plot/<kind>.gp; plot.c renders them. The kinds and
 * what they show: plot/README.md. */
#ifndef OPCOST_PLOT_DATA_H
#define OPCOST_PLOT_DATA_H

#include "results_csv.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

/* What a kind builder returns. */
enum {
    OPCOST_PLOT_DONE = 0,   /* figures added */
    OPCOST_PLOT_SKIP = 1,   /* nothing to draw; err says why */
    OPCOST_PLOT_BAD = 2,    /* a bad option value or input file; err says */
    OPCOST_PLOT_FAILED = -1 /* I/O or memory; err says */
};

/* A growing string; a failed allocation sets failed (checked once). */
typedef struct opcost_plot_text {
    char *s;
    size_t n, cap;
    int failed;
} opcost_plot_text;

void opcost_plot_textf(opcost_plot_text *t, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends `name='value'; ` as a gnuplot assignment: quotes doubled, line
 * breaks made spaces (a gnuplot single-quoted string has no escapes). */
void opcost_plot_assign(opcost_plot_text *t, const char *name,
                        const char *value);
void opcost_plot_text_free(opcost_plot_text *t);
/* Appends s as one word of a gnuplot word list, double-quoted, with the
 * characters that would break it (quotes, blanks) made '_'. */
void opcost_plot_word(opcost_plot_text *t, const char *s);

/* One figure: plot/<script>.gp over <stem>.dat, drawn to <stem>.png and
 * <stem>.svg; assign holds its gnuplot assignments beyond datafile, out and
 * table. */
typedef struct opcost_plot_figure {
    char script[32];
    char stem[4096];
    char *assign;
} opcost_plot_figure;

typedef struct opcost_plot_figures {
    opcost_plot_figure *v;
    size_t n, cap;
} opcost_plot_figures;

void opcost_plot_figures_free(opcost_plot_figures *f);

/* What the builders draw from. */
typedef struct opcost_plot_input {
    const char *csv_path; /* for messages */
    const opcost_result *rows;
    size_t nrows;
    const opcost_sample *samples; /* NULL when there is no sidecar */
    size_t nsamples;
    const char *dir;          /* the output directory, which exists */
    const char *distribution; /* attribution, history; NULL: default */
    const char *dtype;        /* attribution; NULL: default */
    const char *layout;       /* attribution; NULL: default */
    const char *baseline;     /* variants; NULL: default */
    const char *history_dir;  /* history */
} opcost_plot_input;

/* The builders, one per kind of plot_kinds.def (history's in
 * plot_history.c, the others in plot_data.c). Each returns
 * OPCOST_PLOT_DONE having written its data files and appended its figures
 * to out, or another OPCOST_PLOT_* with a message in err. */
typedef int (*opcost_plot_builder)(const opcost_plot_input *in,
                                   opcost_plot_figures *out, char *err,
                                   size_t errlen);
#define OPCOST_PLOT_KIND(name, builder, needs_run, help)                       \
    int builder(const opcost_plot_input *in, opcost_plot_figures *out,         \
                char *err, size_t errlen);
#include "plot_kinds.def"
#undef OPCOST_PLOT_KIND

/* ---- Shared by the builders. */

/* Opens <dir>/<name>.dat for writing (name made file-safe) and adds its
 * figure to out. Returns the stream, or NULL with err set. */
FILE *opcost_plot_figure_open(opcost_plot_figures *out, const char *script,
                              const char *dir, const char *name, char *err,
                              size_t errlen);
/* Closes the data file of out's last figure, which takes over assign
 * (its gnuplot assignments). Returns 0, or -1 on a write or memory error. */
int opcost_plot_figure_close(FILE *f, opcost_plot_figures *out,
                             opcost_plot_text *assign, char *err,
                             size_t errlen);

/* Formats the message into err and returns code (an OPCOST_PLOT_*). */
int opcost_plot_outcome(int code, char *err, size_t errlen, const char *fmt,
                        ...) __attribute__((format(printf, 4, 5)));

/* Starts a block (after two blank lines, gnuplot's index separator, unless
 * it is the file's first): a `# <comment>` line (printf-style), a `# columns:`
 * line, then the header line `<title> <columns>`; the title is made one
 * word (blanks and quotes become '_'). */
void opcost_plot_block(FILE *f, const char *title, const char *columns,
                       const char *comment, ...)
    __attribute__((format(printf, 4, 5)));
/* The run line of a figure's heading: run id, device (cpu model, threads),
 * torch version. */
void opcost_plot_run_line(opcost_plot_text *t, const opcost_result *row);

/* A series' name: the path, or path[variant] for a variant other than
 * auto. */
void opcost_plot_series_name(const opcost_result *row, char *buf, size_t len);

#endif
