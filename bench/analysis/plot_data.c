/* The figures of one run: latency, attribution, bandwidth and variants data
 * files with their gnuplot parameters (plot_data.h), and the helpers the
 * history builder shares. Only status-ok rows are drawn: a wrong or failed
 * row's time measures something else. */
#define _POSIX_C_SOURCE 200809L
#include "plot_data.h"
#include "errorf.h"
#include "stats.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- Text. */

void opcost_plot_textf(opcost_plot_text *t, const char *fmt, ...)
{
    if (t->failed)
        return;
    va_list ap, aq;
    va_start(ap, fmt);
    va_copy(aq, ap);
    const int k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (k >= 0 && t->n + (size_t)k + 1 > t->cap) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap < t->n + (size_t)k + 1)
            cap *= 2;
        char *s = realloc(t->s, cap);
        if (s) {
            t->s = s;
            t->cap = cap;
        }
    }
    if (k < 0 || t->n + (size_t)k + 1 > t->cap)
        t->failed = 1;
    else {
        vsnprintf(t->s + t->n, t->cap - t->n, fmt, aq);
        t->n += (size_t)k;
    }
    va_end(aq);
}

void opcost_plot_assign(opcost_plot_text *t, const char *name,
                        const char *value)
{
    opcost_plot_textf(t, "%s='", name);
    for (const char *c = value; *c; ++c) {
        if (*c == '\'')
            opcost_plot_textf(t, "''");
        else
            opcost_plot_textf(t, "%c", *c == '\n' || *c == '\r' ? ' ' : *c);
    }
    opcost_plot_textf(t, "'; ");
}

/* Where a gnuplot word or header would break. */
static int breaks_word(char c)
{
    return c == ' ' || c == '\t' || c == '"' || c == '\'' || c == '#' ||
           c == '\n' || c == '\r';
}

void opcost_plot_word(opcost_plot_text *t, const char *s)
{
    opcost_plot_textf(t, "%s\"", t->n ? " " : "");
    for (const char *c = s; *c; ++c)
        opcost_plot_textf(t, "%c", breaks_word(*c) ? '_' : *c);
    opcost_plot_textf(t, "\"");
}

void opcost_plot_text_free(opcost_plot_text *t)
{
    free(t->s);
    memset(t, 0, sizeof *t);
}

/* ---- Figures and data files. */

void opcost_plot_figures_free(opcost_plot_figures *f)
{
    for (size_t i = 0; i < f->n; ++i)
        free(f->v[i].assign);
    free(f->v);
    memset(f, 0, sizeof *f);
}

FILE *opcost_plot_figure_open(opcost_plot_figures *out, const char *script,
                              const char *dir, const char *name, char *err,
                              size_t errlen)
{
    if (out->n == out->cap) {
        const size_t cap = out->cap ? 2 * out->cap : 8;
        opcost_plot_figure *v = realloc(out->v, cap * sizeof *v);
        if (!v) {
            opcost_errorf(err, errlen, "%s: out of memory", name);
            return NULL;
        }
        out->v = v;
        out->cap = cap;
    }
    opcost_plot_figure *fig = &out->v[out->n];
    memset(fig, 0, sizeof *fig);
    snprintf(fig->script, sizeof fig->script, "%s", script);
    /* names come from the CSV's text: keep them one safe file name */
    char safe[256];
    size_t k = 0;
    for (const char *c = name; *c && k + 1 < sizeof safe; ++c)
        safe[k++] = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                            (*c >= '0' && *c <= '9') || *c == '.' ||
                            *c == '-' || *c == '_'
                        ? *c
                        : '_';
    safe[k] = '\0';
    char data[sizeof fig->stem + 8];
    if ((size_t)snprintf(fig->stem, sizeof fig->stem, "%s/%s", dir, safe) >=
        sizeof fig->stem - 8) {
        opcost_errorf(err, errlen, "--out: directory name too long: %s", dir);
        return NULL;
    }
    snprintf(data, sizeof data, "%s.dat", fig->stem);
    FILE *f = fopen(data, "w");
    if (!f) {
        opcost_errorf(err, errlen, "%s: cannot write: %s", data,
                      strerror(errno));
        return NULL;
    }
    ++out->n;
    return f;
}

int opcost_plot_figure_close(FILE *f, opcost_plot_figures *out,
                             opcost_plot_text *assign, char *err, size_t errlen)
{
    opcost_plot_figure *fig = &out->v[out->n - 1];
    const int bad = ferror(f);
    const int closed = fclose(f);
    if (assign->failed || !assign->s) {
        opcost_plot_text_free(assign);
        return opcost_errorf(err, errlen, "%s: out of memory", fig->stem);
    }
    fig->assign = assign->s;
    memset(assign, 0, sizeof *assign);
    if (closed != 0 || bad)
        return opcost_errorf(err, errlen, "%s.dat: write failed", fig->stem);
    return 0;
}

int opcost_plot_outcome(int code, char *err, size_t errlen, const char *fmt,
                        ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}

void opcost_plot_block(FILE *f, const char *title, const char *columns,
                       const char *comment, ...)
{
    va_list ap;
    va_start(ap, comment);
    /* separators only between blocks: trailing ones count as a block */
    fputs(ftell(f) > 0 ? "\n\n# " : "# ", f);
    vfprintf(f, comment, ap);
    va_end(ap);
    fprintf(f, "\n# columns: %s\n", columns);
    for (const char *c = title; *c; ++c)
        fputc(breaks_word(*c) ? '_' : *c, f);
    fprintf(f, " %s\n", columns);
}

void opcost_plot_run_line(opcost_plot_text *t, const opcost_result *row)
{
    opcost_plot_textf(t, "run %s", row->run_id);
    if (row->gpu[0] && strcmp(row->device, "cpu"))
        opcost_plot_textf(t, " · %s: %s", row->device, row->gpu);
    else
        opcost_plot_textf(t, " · %s: %s", row->device[0] ? row->device : "?",
                          row->cpu[0] ? row->cpu : "unknown CPU");
    if (row->threads != OPCOST_INT_NA)
        opcost_plot_textf(t, ", %lld thread%s", (long long)row->threads,
                          row->threads == 1 ? "" : "s");
    opcost_plot_textf(t, " · torch %s · git %s",
                      row->torch_version[0] ? row->torch_version : "none",
                      row->git_sha[0] ? row->git_sha : "unknown");
}

void opcost_plot_series_name(const opcost_result *row, char *buf, size_t len)
{
    if (!row->variant[0] || !strcmp(row->variant, "auto"))
        snprintf(buf, len, "%s", row->path);
    else
        snprintf(buf, len, "%s[%s]", row->path, row->variant);
}

/* ---- Rows. */

static int usable(const opcost_result *r)
{
    return r->status == OPCOST_STATUS_OK && isfinite(r->median_us) &&
           r->median_us > 0 && r->B != OPCOST_INT_NA && r->B > 0 &&
           r->N != OPCOST_INT_NA && r->N > 0;
}

static int same_series(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->path, b->path) && !strcmp(a->variant, b->variant);
}

static int same_figure(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->distribution, b->distribution) && !strcmp(a->op, b->op);
}

static int same_panel(const opcost_result *a, const opcost_result *b)
{
    return same_figure(a, b) && !strcmp(a->dtype, b->dtype) &&
           !strcmp(a->weight_dtype, b->weight_dtype) &&
           !strcmp(a->layout, b->layout);
}

/* The same point of the shape space (the series aside). */
static int same_shape(const opcost_result *a, const opcost_result *b)
{
    return same_panel(a, b) && a->B == b->B && a->N == b->N &&
           a->cache_state == b->cache_state && !strcmp(a->device, b->device);
}

/* Every row's series (path, variant), numbered in order of first
 * appearance: the series' colour in every figure of the run. */
typedef struct series_map {
    size_t *of;                  /* per row */
    const opcost_result **first; /* per series */
    size_t n;
} series_map;

static int series_map_make(series_map *m, const opcost_plot_input *in,
                           char *err, size_t errlen)
{
    const size_t n = in->nrows ? in->nrows : 1;
    m->of = malloc(n * sizeof *m->of);
    m->first = malloc(n * sizeof *m->first);
    m->n = 0;
    if (!m->of || !m->first) {
        free(m->of);
        free(m->first);
        return opcost_errorf(err, errlen, "out of memory");
    }
    for (size_t i = 0; i < in->nrows; ++i) {
        size_t s = 0;
        while (s < m->n && !same_series(m->first[s], &in->rows[i]))
            ++s;
        if (s == m->n)
            m->first[m->n++] = &in->rows[i];
        m->of[i] = s;
    }
    return 0;
}

static void series_map_free(series_map *m)
{
    free(m->of);
    free(m->first);
}

/* ---- Panelled figures (latency, variants): one figure per (distribution,
 * op), one panel per (dtype, weight dtype, layout), x the shape dimension
 * that varies within the panel. */

typedef struct point {
    const opcost_result *row; /* the point's shape and panel */
    size_t series;
    double x, y, lo, hi;
} point;

typedef struct panelled {
    const char *script;  /* and the figures' name prefix */
    const char *heading; /* the title's start */
    const char *columns; /* the data columns after x */
    int whiskers;        /* lo, hi columns */
    char (*names)[160];  /* per series */
    size_t nseries;
    const char *extra; /* more assignments */
} panelled;

static int cmp_point(const void *a, const void *b)
{
    const point *p = a, *q = b;
    if (p->series != q->series)
        return p->series < q->series ? -1 : 1;
    if (p->x != q->x)
        return p->x < q->x ? -1 : 1;
    if (p->row->B != q->row->B)
        return p->row->B < q->row->B ? -1 : 1;
    return (p->row->N > q->row->N) - (p->row->N < q->row->N);
}

static size_t count_distinct_int(const point *p, size_t n, int use_n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; ++i) {
        const int64_t v = use_n ? p[i].row->N : p[i].row->B;
        size_t j = 0;
        while (j < i && (use_n ? p[j].row->N : p[j].row->B) != v)
            ++j;
        k += j == i;
    }
    return k;
}

/* Writes one panel's blocks (pts: the panel's points, reordered) and
 * records the panel's parameters. */
static void write_panel(FILE *f, const panelled *pp, point *pts, size_t n,
                        size_t panel, size_t *block, opcost_plot_text *first,
                        opcost_plot_text *count, opcost_plot_text *lts,
                        opcost_plot_text *assign)
{
    const opcost_result *r = pts[0].row;
    const size_t nb = count_distinct_int(pts, n, 0);
    const size_t nn = count_distinct_int(pts, n, 1);
    char xlabel[256], title[512];
    if (nn == 1 && nb == 1)
        snprintf(xlabel, sizeof xlabel,
                 "B (rows; log scale) — one shape: B = %lld, N = %lld",
                 (long long)r->B, (long long)r->N);
    else if (nn == 1)
        snprintf(xlabel, sizeof xlabel, "B (rows; log scale; N = %lld)",
                 (long long)r->N);
    else if (nb == 1)
        snprintf(xlabel, sizeof xlabel,
                 "N (row length, elements; log scale; B = %lld)",
                 (long long)r->B);
    else
        snprintf(xlabel, sizeof xlabel,
                 "B·N (elements; log scale; B and N both vary)");
    for (size_t i = 0; i < n; ++i)
        pts[i].x = nn == 1   ? (double)pts[i].row->B
                   : nb == 1 ? (double)pts[i].row->N
                             : (double)pts[i].row->B * (double)pts[i].row->N;
    qsort(pts, n, sizeof *pts, cmp_point);
    if (r->weight_dtype[0] && strcmp(r->weight_dtype, r->dtype))
        snprintf(title, sizeof title, "%s (weight %s), %s", r->dtype,
                 r->weight_dtype, r->layout);
    else
        snprintf(title, sizeof title, "%s, %s", r->dtype, r->layout);
    char name[32];
    snprintf(name, sizeof name, "ptitle%zu", panel);
    opcost_plot_assign(assign, name, title);
    snprintf(name, sizeof name, "xlabel%zu", panel);
    opcost_plot_assign(assign, name, xlabel);
    opcost_plot_textf(first, "%s%zu", panel > 1 ? " " : "", *block);
    size_t blocks = 0;
    for (size_t i = 0; i < n;) {
        size_t e = i;
        while (e < n && pts[e].series == pts[i].series)
            ++e;
        opcost_plot_block(f, pp->names[pts[i].series], pp->columns,
                          "%s %s %s, %s; series %s; x = %s", r->distribution,
                          r->op, title, pp->script, pp->names[pts[i].series],
                          xlabel);
        for (size_t k = i; k < e; ++k) {
            fprintf(f, "%.9g %.9g", pts[k].x, pts[k].y);
            if (pp->whiskers)
                fprintf(f, " %.9g %.9g", pts[k].lo, pts[k].hi);
            fprintf(f, " %lld %lld\n", (long long)pts[k].row->B,
                    (long long)pts[k].row->N);
        }
        opcost_plot_textf(lts, "%s%zu", *block + blocks ? " " : "",
                          pts[i].series + 1);
        ++blocks;
        i = e;
    }
    opcost_plot_textf(count, "%s%zu", panel > 1 ? " " : "", blocks);
    *block += blocks;
}

static int write_panelled(const opcost_plot_input *in, const panelled *pp,
                          point *pts, size_t npts, opcost_plot_figures *out,
                          char *err, size_t errlen)
{
    /* the op goes into file names only when the run has several */
    int several_ops = 0;
    for (size_t i = 1; i < npts; ++i)
        several_ops |= strcmp(pts[i].row->op, pts[0].row->op) != 0;
    point *tmp = malloc((npts ? npts : 1) * sizeof *tmp);
    char *done = calloc(npts ? npts : 1, 1);
    char *present = malloc(pp->nseries ? pp->nseries : 1);
    int rc = tmp && done && present
                 ? 0
                 : opcost_errorf(err, errlen, "out of memory");
    for (size_t i = 0; i < npts && !rc; ++i) {
        if (done[i])
            continue;
        const opcost_result *fr = pts[i].row;
        char name[512];
        snprintf(name, sizeof name, "%s-%s%s%s", pp->script, fr->distribution,
                 several_ops ? "-" : "", several_ops ? fr->op : "");
        FILE *f = opcost_plot_figure_open(out, pp->script, in->dir, name, err,
                                          errlen);
        if (!f) {
            rc = -1;
            break;
        }
        opcost_plot_text assign = {0}, first = {0}, count = {0}, lts = {0};
        opcost_plot_text heading = {0}, run = {0};
        opcost_plot_textf(&heading, "opcost %s: %s, %s — %s", pp->script,
                          fr->distribution, fr->op, pp->heading);
        opcost_plot_run_line(&run, fr);
        opcost_plot_assign(&assign, "title", heading.s ? heading.s : "");
        opcost_plot_assign(&assign, "run", run.s ? run.s : "");
        opcost_plot_text_free(&heading);
        opcost_plot_text_free(&run);
        /* the figure's series, once each, for its shared key */
        opcost_plot_text keys = {0}, keylts = {0};
        memset(present, 0, pp->nseries);
        for (size_t j = i; j < npts; ++j)
            if (!done[j] && same_figure(pts[j].row, fr))
                present[pts[j].series] = 1;
        for (size_t s = 0; s < pp->nseries; ++s)
            if (present[s]) {
                opcost_plot_word(&keys, pp->names[s]);
                opcost_plot_textf(&keylts, "%s%zu", keylts.n ? " " : "", s + 1);
            }
        opcost_plot_assign(&assign, "keys", keys.s ? keys.s : "");
        opcost_plot_assign(&assign, "keylts", keylts.s ? keylts.s : "");
        opcost_plot_text_free(&keys);
        opcost_plot_text_free(&keylts);
        size_t panel = 0, block = 0;
        for (size_t j = i; j < npts; ++j) {
            if (done[j] || !same_figure(pts[j].row, fr))
                continue;
            size_t n = 0;
            for (size_t k = j; k < npts; ++k)
                if (!done[k] && same_panel(pts[k].row, pts[j].row)) {
                    tmp[n++] = pts[k];
                    done[k] = 1;
                }
            write_panel(f, pp, tmp, n, ++panel, &block, &first, &count, &lts,
                        &assign);
        }
        opcost_plot_textf(&assign, "npanels=%zu; ", panel);
        opcost_plot_assign(&assign, "pfirst", first.s ? first.s : "");
        opcost_plot_assign(&assign, "pcount", count.s ? count.s : "");
        opcost_plot_assign(&assign, "lts", lts.s ? lts.s : "");
        if (pp->extra)
            opcost_plot_textf(&assign, "%s", pp->extra);
        opcost_plot_text_free(&first);
        opcost_plot_text_free(&count);
        opcost_plot_text_free(&lts);
        rc = opcost_plot_figure_close(f, out, &assign, err, errlen);
    }
    free(tmp);
    free(done);
    free(present);
    return rc ? OPCOST_PLOT_FAILED : OPCOST_PLOT_DONE;
}

static void names_of_series(char (*names)[160], const series_map *m)
{
    for (size_t s = 0; s < m->n; ++s)
        opcost_plot_series_name(m->first[s], names[s], sizeof names[s]);
}

/* ---- latency */

int opcost_plot_latency(const opcost_plot_input *in, opcost_plot_figures *out,
                        char *err, size_t errlen)
{
    series_map m;
    if (series_map_make(&m, in, err, errlen))
        return OPCOST_PLOT_FAILED;
    point *pts = malloc((in->nrows ? in->nrows : 1) * sizeof *pts);
    char(*names)[160] = malloc((m.n ? m.n : 1) * sizeof *names);
    size_t n = 0;
    int rc;
    if (!pts || !names)
        rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                 "out of memory");
    else {
        for (size_t i = 0; i < in->nrows; ++i)
            if (usable(&in->rows[i]))
                pts[n++] = (point){&in->rows[i],          m.of[i], 0,
                                   in->rows[i].median_us, 0,       0};
        names_of_series(names, &m);
        const panelled pp = {"latency",
                             "median per call by path (ok rows)",
                             "x median_us B N",
                             0,
                             names,
                             m.n,
                             NULL};
        rc = n ? write_panelled(in, &pp, pts, n, out, err, errlen)
               : opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                     "%s has no ok row with a median",
                                     in->csv_path);
    }
    free(pts);
    free(names);
    series_map_free(&m);
    return rc;
}

/* ---- attribution */

/* The parts of bench/measure/attribution.h, stacked in this order; a part a row
 * lacks (other kernels before schema version 2, or not measured) is 0. */
#define NCOMPONENTS 6
static const char *const component[NCOMPONENTS] = {
    "kernel", "other-kernels", "conversion", "launch", "dispatch", "idle"};

static double component_us(const opcost_result *r, int c)
{
    const double v[NCOMPONENTS] = {r->kernel_us,     r->other_kernel_us,
                                   r->conversion_us, r->launch_us,
                                   r->dispatch_us,   r->idle_us};
    return isfinite(v[c]) ? v[c] : 0;
}

static int cmp_shape(const void *a, const void *b)
{
    const opcost_result *p = *(const opcost_result *const *)a;
    const opcost_result *q = *(const opcost_result *const *)b;
    const double x = (double)p->B * (double)p->N;
    const double y = (double)q->B * (double)q->N;
    if (x != y)
        return x < y ? -1 : 1;
    return (p->B > q->B) - (p->B < q->B);
}

/* Attribution draws a row whose split is known. */
static int attributed(const opcost_result *r)
{
    return usable(r) && isfinite(r->kernel_us);
}

/* A text column of the attributed rows of dist (and dtype, when set): the
 * value prefer when a row has it, else the first row's; NULL when none. */
static const char *pick(const opcost_plot_input *in, const char *dist,
                        const char *dtype, size_t field, const char *prefer)
{
    const char *firstv = NULL;
    for (size_t i = 0; i < in->nrows; ++i) {
        const opcost_result *r = &in->rows[i];
        if (!attributed(r) || (dist && strcmp(r->distribution, dist)) ||
            (dtype && strcmp(r->dtype, dtype)))
            continue;
        const char *v = (const char *)r + field;
        if (!firstv)
            firstv = v;
        if (prefer && !strcmp(v, prefer))
            return v;
    }
    return firstv;
}

/* The rows attribution draws: one distribution, dtype and layout (the
 * options, else the first distribution and bfloat16 contiguous where
 * present), its first op. Returns OPCOST_PLOT_DONE with *key one of them. */
static int attribution_rows(const opcost_plot_input *in,
                            const opcost_result **key, char *err, size_t errlen)
{
    const char *dist =
        in->distribution
            ? in->distribution
            : pick(in, NULL, NULL, offsetof(opcost_result, distribution), NULL);
    if (!dist)
        return opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                   "%s has no ok row with attribution "
                                   "columns",
                                   in->csv_path);
    if (!pick(in, dist, NULL, offsetof(opcost_result, distribution), NULL))
        return opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                   "--distribution: no ok row of %s with "
                                   "attribution columns is from '%s'",
                                   in->csv_path, dist);
    const char *dtype =
        in->dtype
            ? in->dtype
            : pick(in, dist, NULL, offsetof(opcost_result, dtype), "bfloat16");
    if (!pick(in, dist, dtype, offsetof(opcost_result, dtype), NULL))
        return opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                   "--dtype: no ok row of %s from '%s' with "
                                   "attribution columns has dtype '%s'",
                                   in->csv_path, dist, dtype);
    const char *layout =
        in->layout ? in->layout
                   : pick(in, dist, dtype, offsetof(opcost_result, layout),
                          "contiguous");
    *key = NULL;
    for (size_t i = 0; i < in->nrows && !*key; ++i) {
        const opcost_result *r = &in->rows[i];
        if (attributed(r) && !strcmp(r->distribution, dist) &&
            !strcmp(r->dtype, dtype) && !strcmp(r->layout, layout))
            *key = r;
    }
    if (!*key)
        return opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                   "--layout: no ok row of %s from '%s' "
                                   "with dtype %s and attribution columns "
                                   "has layout '%s'",
                                   in->csv_path, dist, dtype, layout);
    return OPCOST_PLOT_DONE;
}

/* Writes panel p's component blocks: per series with an attributed row
 * at shape s, one bar. */
static void attribution_panel(FILE *f, const opcost_plot_input *in,
                              const series_map *m, const opcost_result *s)
{
    for (int c = 0; c < NCOMPONENTS; ++c) {
        opcost_plot_block(f, component[c], "x ylow yhigh us path",
                          "attribution of %s %s B=%lld N=%lld %s %s: "
                          "component %s (µs) of each path's bar x, from ylow "
                          "to yhigh",
                          s->distribution, s->op, (long long)s->B,
                          (long long)s->N, s->dtype, s->layout, component[c]);
        size_t x = 0;
        for (size_t sr = 0; sr < m->n; ++sr) {
            const opcost_result *r = NULL;
            for (size_t i = 0; i < in->nrows && !r; ++i)
                if (m->of[i] == sr && attributed(&in->rows[i]) &&
                    same_shape(&in->rows[i], s))
                    r = &in->rows[i];
            if (!r)
                continue;
            double lo = 0;
            for (int k = 0; k < c; ++k)
                lo += component_us(r, k);
            char label[160];
            opcost_plot_series_name(r, label, sizeof label);
            fprintf(f, "%zu %.9g %.9g %.9g \"%s\"\n", x++, lo,
                    lo + component_us(r, c), component_us(r, c), label);
        }
    }
}

int opcost_plot_attribution(const opcost_plot_input *in,
                            opcost_plot_figures *out, char *err, size_t errlen)
{
    const opcost_result *key;
    int rc = attribution_rows(in, &key, err, errlen);
    if (rc != OPCOST_PLOT_DONE)
        return rc;
    /* the shapes there, smallest to largest: draw the first, middle, last */
    const opcost_result **shapes = malloc(in->nrows * sizeof *shapes);
    series_map m;
    if (!shapes || series_map_make(&m, in, err, errlen)) {
        free(shapes);
        return opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                   "out of memory");
    }
    size_t ns = 0;
    for (size_t i = 0; i < in->nrows; ++i) {
        const opcost_result *r = &in->rows[i];
        if (!attributed(r) || !same_panel(r, key))
            continue;
        size_t j = 0;
        while (j < ns && !same_shape(shapes[j], r))
            ++j;
        if (j == ns)
            shapes[ns++] = r;
    }
    qsort(shapes, ns, sizeof *shapes, cmp_shape);
    size_t at[3] = {0, (ns - 1) / 2, ns - 1}, np = 0;
    for (size_t k = 0; k < 3; ++k)
        if (!np || at[k] != at[np - 1])
            at[np++] = at[k];
    static const char *const size_name[3] = {"small", "medium", "large"};

    FILE *f = opcost_plot_figure_open(out, "attribution", in->dir,
                                      "attribution", err, errlen);
    if (f) {
        opcost_plot_text assign = {0}, heading = {0}, run = {0};
        opcost_plot_textf(&heading,
                          "opcost attribution: where a call's time goes — "
                          "%s, %s, %s %s; the smallest, a middle and the "
                          "largest shape by B",
                          key->distribution, key->op, key->dtype, key->layout);
        opcost_plot_run_line(&run, key);
        opcost_plot_assign(&assign, "title", heading.s ? heading.s : "");
        opcost_plot_assign(&assign, "run", run.s ? run.s : "");
        opcost_plot_textf(&assign, "npanels=%zu; ncomponents=%d; ", np,
                          NCOMPONENTS);
        opcost_plot_text_free(&heading);
        opcost_plot_text_free(&run);
        for (size_t p = 0; p < np; ++p) {
            const opcost_result *s = shapes[at[p]];
            char name[32], title[256];
            snprintf(name, sizeof name, "ptitle%zu", p + 1);
            snprintf(title, sizeof title, "%s: B = %lld, N = %lld",
                     size_name[np == 3 ? p : 2 * p], (long long)s->B,
                     (long long)s->N);
            opcost_plot_assign(&assign, name, title);
            attribution_panel(f, in, &m, s);
        }
        rc = opcost_plot_figure_close(f, out, &assign, err, errlen);
    }
    free(shapes);
    series_map_free(&m);
    return f && !rc ? OPCOST_PLOT_DONE : OPCOST_PLOT_FAILED;
}

/* ---- bandwidth */

static int cmp_bytes(const void *a, const void *b)
{
    const opcost_result *p = *(const opcost_result *const *)a;
    const opcost_result *q = *(const opcost_result *const *)b;
    return (p->bytes > q->bytes) - (p->bytes < q->bytes);
}

static int has_bandwidth(const opcost_result *r)
{
    return usable(r) && isfinite(r->frac_of_peak) &&
           r->bytes != OPCOST_INT_NA && r->bytes > 0;
}

int opcost_plot_bandwidth(const opcost_plot_input *in, opcost_plot_figures *out,
                          char *err, size_t errlen)
{
    const opcost_result *first = NULL;
    for (size_t i = 0; i < in->nrows && !first; ++i)
        if (has_bandwidth(&in->rows[i]))
            first = &in->rows[i];
    if (!first)
        return opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                   "%s has no ok row with frac_of_peak (no "
                                   "in-run ceiling was measured)",
                                   in->csv_path);
    series_map m;
    if (series_map_make(&m, in, err, errlen))
        return OPCOST_PLOT_FAILED;
    const opcost_result **sel = malloc(in->nrows * sizeof *sel);
    FILE *f = sel ? opcost_plot_figure_open(out, "bandwidth", in->dir,
                                            "bandwidth", err, errlen)
                  : NULL;
    int rc = -1;
    if (!sel)
        opcost_errorf(err, errlen, "out of memory");
    if (f) {
        opcost_plot_text assign = {0}, run = {0}, lts = {0};
        opcost_plot_assign(&assign, "title",
                           "opcost bandwidth: achieved / in-run ceiling by "
                           "bytes moved — every ok row (all distributions, "
                           "dtypes and layouts)");
        opcost_plot_run_line(&run, first);
        opcost_plot_assign(&assign, "run", run.s ? run.s : "");
        opcost_plot_text_free(&run);
        if (isfinite(first->ceiling_gbps))
            opcost_plot_textf(&assign, "ceiling=%.6g; ", first->ceiling_gbps);
        for (size_t s = 0; s < m.n; ++s) {
            size_t n = 0;
            for (size_t i = 0; i < in->nrows; ++i)
                if (m.of[i] == s && has_bandwidth(&in->rows[i]))
                    sel[n++] = &in->rows[i];
            if (!n)
                continue;
            qsort(sel, n, sizeof *sel, cmp_bytes);
            char name[160];
            opcost_plot_series_name(m.first[s], name, sizeof name);
            opcost_plot_block(f, name, "bytes frac_of_peak B N",
                              "frac_of_peak against bytes moved per call");
            for (size_t k = 0; k < n; ++k)
                fprintf(f, "%lld %.9g %lld %lld\n", (long long)sel[k]->bytes,
                        sel[k]->frac_of_peak, (long long)sel[k]->B,
                        (long long)sel[k]->N);
            opcost_plot_textf(&lts, "%s%zu", lts.n ? " " : "", s + 1);
        }
        opcost_plot_assign(&assign, "lts", lts.s ? lts.s : "");
        opcost_plot_text_free(&lts);
        rc = opcost_plot_figure_close(f, out, &assign, err, errlen);
    }
    free(sel);
    series_map_free(&m);
    return rc ? OPCOST_PLOT_FAILED : OPCOST_PLOT_DONE;
}

/* ---- variants */

/* Bootstrap resamples: with 2000 the 2.5th and 97.5th percentiles move by
 * well under the whiskers' own width from one seed to another. */
#define BOOTSTRAP_RESAMPLES 2000

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median_of(double *x, size_t n)
{
    qsort(x, n, sizeof *x, cmp_double);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

static int cmp_sample(const void *a, const void *b)
{
    const opcost_sample *p = a, *q = b;
    if (p->point != q->point)
        return p->point < q->point ? -1 : 1;
    return (p->rep > q->rep) - (p->rep < q->rep);
}

/* Per row, the medians of its repetitions (from the sidecar). */
typedef struct rep_medians {
    double *v;     /* all rows' medians, row after row */
    size_t *start; /* row i's medians are v[start[i] .. start[i + 1]) */
} rep_medians;

static int rep_medians_make(rep_medians *rm, const opcost_plot_input *in)
{
    const size_t ns = in->nsamples;
    opcost_sample *s = malloc((ns ? ns : 1) * sizeof *s);
    double *x = malloc((ns ? ns : 1) * sizeof *x);
    rm->v = malloc((ns ? ns : 1) * sizeof *rm->v);
    rm->start = calloc(in->nrows + 1, sizeof *rm->start);
    if (!s || !x || !rm->v || !rm->start) {
        free(s);
        free(x);
        return -1;
    }
    if (ns)
        memcpy(s, in->samples, ns * sizeof *s);
    qsort(s, ns, sizeof *s, cmp_sample);
    size_t nv = 0, k = 0;
    for (size_t row = 0; row < in->nrows; ++row) {
        rm->start[row] = nv;
        while (k < ns && s[k].point < (int64_t)row)
            ++k;
        while (k < ns && s[k].point == (int64_t)row) {
            size_t e = k, n = 0;
            while (e < ns && s[e].point == s[k].point && s[e].rep == s[k].rep)
                x[n++] = s[e++].us;
            rm->v[nv++] = median_of(x, n);
            k = e;
        }
    }
    rm->start[in->nrows] = nv;
    free(s);
    free(x);
    return 0;
}

static size_t rep_count(const rep_medians *rm, size_t row)
{
    return rm->start[row + 1] - rm->start[row];
}

/* splitmix64 from a fixed seed: the same CSV gives the same whiskers. */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double resampled_median(const double *v, size_t n, double *tmp,
                               uint64_t *state)
{
    for (size_t i = 0; i < n; ++i)
        tmp[i] = v[next_random(state) % n];
    return median_of(tmp, n);
}

/* Percentile bootstrap of median(variant's repetition medians) /
 * median(baseline's), the two sides resampled independently (their
 * repetitions are separate runs of separate code). */
static void bootstrap_ratio(const rep_medians *rm, size_t vrow, size_t brow,
                            double *ratios, double *tmp, uint64_t *state,
                            double *lo, double *hi)
{
    for (size_t r = 0; r < BOOTSTRAP_RESAMPLES; ++r) {
        const double mv = resampled_median(rm->v + rm->start[vrow],
                                           rep_count(rm, vrow), tmp, state);
        ratios[r] = mv / resampled_median(rm->v + rm->start[brow],
                                          rep_count(rm, brow), tmp, state);
    }
    qsort(ratios, BOOTSTRAP_RESAMPLES, sizeof *ratios, cmp_double);
    *lo = opcost_percentile_sorted(ratios, BOOTSTRAP_RESAMPLES, 2.5);
    *hi = opcost_percentile_sorted(ratios, BOOTSTRAP_RESAMPLES, 97.5);
}

static int is_kernel(const opcost_result *r)
{
    return !strcmp(r->path, "kernel") && usable(r);
}

/* The baseline: the option, else cpu_strided, else the first variant of
 * the ok kernel rows. */
static int variants_baseline(const opcost_plot_input *in, const char **base,
                             char *err, size_t errlen)
{
    const char *var[64];
    size_t nvar = 0;
    for (size_t i = 0; i < in->nrows; ++i) {
        const opcost_result *r = &in->rows[i];
        size_t j = 0;
        while (is_kernel(r) && j < nvar && strcmp(var[j], r->variant))
            ++j;
        if (is_kernel(r) && j == nvar && nvar < 64)
            var[nvar++] = r->variant;
    }
    char list[1024] = "none";
    for (size_t j = 0; j < nvar; ++j)
        snprintf(list + (j ? strlen(list) : 0),
                 sizeof list - (j ? strlen(list) : 0), "%s%s", j ? ", " : "",
                 var[j]);
    if (nvar < 2)
        return opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                   "%s has ok kernel-path rows of %zu "
                                   "variant%s (%s); `opcost run --variants "
                                   "all` measures them all",
                                   in->csv_path, nvar, nvar == 1 ? "" : "s",
                                   list);
    *base = NULL;
    const char *want = in->baseline ? in->baseline : "cpu_strided";
    for (size_t j = 0; j < nvar && !*base; ++j)
        if (!strcmp(var[j], want))
            *base = var[j];
    if (!*base && in->baseline)
        return opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                   "--baseline: '%s' is not a variant of the "
                                   "ok kernel rows in %s (there: %s)",
                                   in->baseline, in->csv_path, list);
    if (!*base)
        *base = var[0];
    return OPCOST_PLOT_DONE;
}

/* Whiskers of every pair (pts[k] against row brow[k]): the bootstrap when
 * every pair has two or more repetitions in the sidecar, else the rows'
 * ci95_rel combined. Returns the method's description, NULL on ENOMEM. */
static const char *variants_whiskers(const opcost_plot_input *in, point *pts,
                                     const size_t *brow, size_t n)
{
    rep_medians rm = {0};
    int boot = in->nsamples > 0;
    if (boot && rep_medians_make(&rm, in)) {
        free(rm.v);
        free(rm.start);
        return NULL;
    }
    for (size_t k = 0; k < n && boot; ++k)
        boot = rep_count(&rm, (size_t)(pts[k].row - in->rows)) >= 2 &&
               rep_count(&rm, brow[k]) >= 2;
    double *ratios = malloc(BOOTSTRAP_RESAMPLES * sizeof *ratios);
    double *tmp = malloc((boot ? rm.start[in->nrows] : 1) * sizeof *tmp);
    uint64_t state = 0x6f70636f7374u; /* "opcost" */
    for (size_t k = 0; k < n && ratios && tmp; ++k) {
        if (boot) {
            bootstrap_ratio(&rm, (size_t)(pts[k].row - in->rows), brow[k],
                            ratios, tmp, &state, &pts[k].lo, &pts[k].hi);
            continue;
        }
        /* relative half-widths add in quadrature (the delta method on the
         * log of the ratio); an unknown interval draws no whisker */
        const double cv = pts[k].row->ci95_rel, cb = in->rows[brow[k]].ci95_rel;
        const double rel =
            isfinite(cv) && isfinite(cb) ? sqrt(cv * cv + cb * cb) : 0;
        pts[k].lo = pts[k].y * (1 - rel);
        pts[k].hi = pts[k].y * (1 + rel);
    }
    const int ok = ratios && tmp;
    free(ratios);
    free(tmp);
    free(rm.v);
    free(rm.start);
    if (!ok)
        return NULL;
    if (boot)
        return "95% percentile bootstrap over repetition medians (2000 "
               "resamples)";
    return in->nsamples > 0 ? "ratio × (1 ± √(ci95_rel² + ci95_rel_base²)); "
                              "under 2 repetitions in the sidecar"
                            : "ratio × (1 ± √(ci95_rel² + ci95_rel_base²)); "
                              "no samples sidecar";
}

int opcost_plot_variants(const opcost_plot_input *in, opcost_plot_figures *out,
                         char *err, size_t errlen)
{
    const char *base;
    int rc = variants_baseline(in, &base, err, errlen);
    if (rc != OPCOST_PLOT_DONE)
        return rc;
    series_map m;
    if (series_map_make(&m, in, err, errlen))
        return OPCOST_PLOT_FAILED;
    point *pts = malloc(in->nrows * sizeof *pts);
    size_t *brow = malloc(in->nrows * sizeof *brow), n = 0;
    char(*names)[160] = malloc(m.n * sizeof *names);
    if (!pts || !brow || !names) {
        free(pts);
        free(brow);
        free(names);
        series_map_free(&m);
        return opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                   "out of memory");
    }
    /* each ok kernel row of another variant, against the baseline's row
     * of the same shape */
    for (size_t i = 0; i < in->nrows; ++i) {
        const opcost_result *r = &in->rows[i];
        if (!is_kernel(r) || !strcmp(r->variant, base))
            continue;
        for (size_t j = 0; j < in->nrows; ++j) {
            const opcost_result *b = &in->rows[j];
            if (is_kernel(b) && !strcmp(b->variant, base) && same_shape(b, r)) {
                brow[n] = j;
                pts[n++] =
                    (point){r, m.of[i], 0, r->median_us / b->median_us, 0, 0};
                break;
            }
        }
    }
    const char *whiskers = n ? variants_whiskers(in, pts, brow, n) : "";
    if (!n)
        rc = opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                 "%s: no shape has ok kernel rows of both "
                                 "the baseline %s and another variant",
                                 in->csv_path, base);
    else if (!whiskers)
        rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                 "out of memory");
    else {
        for (size_t s = 0; s < m.n; ++s)
            snprintf(names[s], sizeof names[s], "%s", m.first[s]->variant);
        opcost_plot_text extra = {0}, heading = {0};
        opcost_plot_assign(&extra, "baseline", base);
        opcost_plot_assign(&extra, "whiskers", whiskers);
        opcost_plot_textf(&heading, "kernel variants against %s (ok rows)",
                          base);
        const panelled pp = {
            "variants", heading.s, "x ratio lo hi B N", 1, names, m.n, extra.s};
        rc = extra.failed || heading.failed
                 ? opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                       "out of memory")
                 : write_panelled(in, &pp, pts, n, out, err, errlen);
        opcost_plot_text_free(&extra);
        opcost_plot_text_free(&heading);
    }
    free(pts);
    free(brow);
    free(names);
    series_map_free(&m);
    return rc;
}

/* A peer's row with its paired ratio against rowops' op of the same form
 * (the peer paths, bench/paths/peer_route.h: peer-*). */
static int is_paired_peer(const opcost_result *r)
{
    return !strncmp(r->path, "peer-", 5) && usable(r) && r->paired_with[0] &&
           isfinite(r->ratio) && r->ratio > 0 && isfinite(r->ratio_ci95_rel);
}

int opcost_plot_peers(const opcost_plot_input *in, opcost_plot_figures *out,
                      char *err, size_t errlen)
{
    series_map m;
    if (series_map_make(&m, in, err, errlen))
        return OPCOST_PLOT_FAILED;
    point *pts = malloc((in->nrows ? in->nrows : 1) * sizeof *pts);
    char(*names)[160] = malloc((m.n ? m.n : 1) * sizeof *names);
    int rc;
    size_t n = 0;
    if (!pts || !names) {
        rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                 "out of memory");
        goto done;
    }
    /* each peer row's own paired ratio, whiskers its 95 % interval */
    for (size_t i = 0; i < in->nrows; ++i) {
        const opcost_result *r = &in->rows[i];
        if (is_paired_peer(r))
            pts[n++] = (point){r,
                               m.of[i],
                               0,
                               r->ratio,
                               r->ratio / (1 + r->ratio_ci95_rel),
                               r->ratio * (1 + r->ratio_ci95_rel)};
    }
    if (!n) {
        rc = opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                 "%s has no peer row with a paired ratio "
                                 "(the peer-* paths, with rowops' "
                                 "eager-python or eager-python-inplace in "
                                 "the same run)",
                                 in->csv_path);
        goto done;
    }
    for (size_t s = 0; s < m.n; ++s)
        snprintf(names[s], sizeof names[s], "%.70s/%.70s", m.first[s]->path,
                 m.first[s]->paired_with[0] ? m.first[s]->paired_with : "-");
    opcost_plot_text extra = {0};
    opcost_plot_assign(&extra, "baseline", "rowops' op of the same form");
    opcost_plot_assign(&extra, "whiskers",
                       "the paired ratio's 95% interval (ratio_ci95_rel)");
    opcost_plot_assign(
        &extra, "ytitle",
        "peer / rowops, paired in rounds (< 1: the peer faster)");
    const panelled pp = {"peers",
                         "the peers against rowops (peer / rowops, paired in "
                         "rounds; above 1 rowops is faster)",
                         "x ratio lo hi B N",
                         1,
                         names,
                         m.n,
                         extra.s};
    rc = extra.failed ? opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                            "out of memory")
                      : write_panelled(in, &pp, pts, n, out, err, errlen);
    opcost_plot_text_free(&extra);
done:
    free(pts);
    free(names);
    series_map_free(&m);
    return rc;
}
