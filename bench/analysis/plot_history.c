/* `opcost plot --kind history`: every results CSV in a directory reduced to
 * one value per run and group (distribution, op, dtype, layout, path,
 * variant), the expected cost per call sum freq * median_us / sum freq
 * (the quantity `opcost compare --gate` gates), with the regressions a
 * gates.csv there flags. Each file is reduced as it is read, so a long
 * history never holds more than one run's rows. */
#define _POSIX_C_SOURCE 200809L
#include "errorf.h"
#include "gates.h"
#include "plot_data.h"
#include "shape_file.h"
#include "stats.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct hrun {
    char run_id[OPCOST_TEXT_MAX];
    char timestamp[OPCOST_TEXT_MAX];
    char file[2048];
    opcost_result info; /* the run's first row, for the heading */
} hrun;

/* distribution, op, dtype, layout, path, variant */
#define KEY_FIELDS 6
typedef struct hgroup {
    char key[KEY_FIELDS][OPCOST_TEXT_MAX];
} hgroup;

typedef struct hvalue {
    size_t run, group;
    double us;
} hvalue;

typedef struct history {
    hrun *runs;
    size_t nruns;
    hgroup *groups;
    size_t ngroups;
    hvalue *values;
    size_t nvalues;
} history;

static void key_of(const opcost_result *r, hgroup *g)
{
    const char *f[KEY_FIELDS] = {r->distribution, r->op,   r->dtype,
                                 r->layout,       r->path, r->variant};
    for (int i = 0; i < KEY_FIELDS; ++i)
        snprintf(g->key[i], sizeof g->key[i], "%s", f[i]);
}

static int same_key(const hgroup *a, const hgroup *b, int nfields)
{
    for (int i = 0; i < nfields; ++i)
        if (strcmp(a->key[i], b->key[i]))
            return 0;
    return 1;
}

/* Rows of one run and group. */
static int same_group(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->path, b->path) && !strcmp(a->variant, b->variant) &&
           !strcmp(a->layout, b->layout) && !strcmp(a->dtype, b->dtype) &&
           !strcmp(a->op, b->op) && !strcmp(a->distribution, b->distribution) &&
           !strcmp(a->run_id, b->run_id);
}

/* Grows *v (of *cap elements of size) to hold n + 1. */
static int reserve(void **v, size_t *cap, size_t n, size_t size)
{
    if (n < *cap)
        return 0;
    const size_t c = *cap ? 2 * *cap : 16;
    void *p = realloc(*v, c * size);
    if (!p)
        return -1;
    *v = p;
    *cap = c;
    return 0;
}

/* Adds one file's runs: per run and group, the expected cost when every
 * row of the group is ok with a median and a weight. */
static int add_file(history *h, size_t *caps, const char *path, char *err,
                    size_t errlen)
{
    opcost_result *rows = NULL;
    size_t n = 0;
    if (opcost_results_read(path, &rows, &n, err, errlen))
        return OPCOST_PLOT_BAD;
    char *done = calloc(n ? n : 1, 1);
    int rc = done ? OPCOST_PLOT_DONE : OPCOST_PLOT_FAILED;
    for (size_t i = 0; i < n && rc == OPCOST_PLOT_DONE; ++i) {
        /* an A/B run (opcost ab) is the history's through its new side */
        if (done[i] || !strcmp(rows[i].side, "base"))
            continue;
        /* a new run of this file: one run per run_id over the history */
        size_t run = 0;
        while (run < h->nruns && strcmp(h->runs[run].run_id, rows[i].run_id))
            ++run;
        if (run < h->nruns && strcmp(h->runs[run].file, path)) {
            rc = opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                     "--history: run %s is in both %s and %s",
                                     rows[i].run_id, h->runs[run].file, path);
            break;
        }
        if (run == h->nruns) {
            if (reserve((void **)&h->runs, &caps[0], h->nruns,
                        sizeof *h->runs)) {
                rc = OPCOST_PLOT_FAILED;
                break;
            }
            hrun *r = &h->runs[h->nruns++];
            snprintf(r->run_id, sizeof r->run_id, "%s", rows[i].run_id);
            snprintf(r->timestamp, sizeof r->timestamp, "%s",
                     rows[i].timestamp_utc);
            snprintf(r->file, sizeof r->file, "%s", path);
            r->info = rows[i];
        }
        hgroup g;
        key_of(&rows[i], &g);
        opcost_wmean mean = {0};
        int ok = 1;
        for (size_t j = i; j < n; ++j) {
            if (done[j] || !same_group(&rows[i], &rows[j]) ||
                strcmp(rows[j].side, rows[i].side))
                continue;
            done[j] = 1;
            const double w = atof(rows[j].freq);
            if (rows[j].status != OPCOST_STATUS_OK ||
                !isfinite(rows[j].median_us) || !(w >= 0))
                ok = 0;
            else
                opcost_wmean_add(&mean, w, rows[j].median_us);
        }
        if (!ok || isnan(opcost_wmean_value(&mean)))
            continue;
        size_t k = 0;
        while (k < h->ngroups && !same_key(&h->groups[k], &g, KEY_FIELDS))
            ++k;
        if ((k == h->ngroups && reserve((void **)&h->groups, &caps[1],
                                        h->ngroups, sizeof *h->groups)) ||
            reserve((void **)&h->values, &caps[2], h->nvalues,
                    sizeof *h->values)) {
            rc = OPCOST_PLOT_FAILED;
            break;
        }
        if (k == h->ngroups)
            h->groups[h->ngroups++] = g;
        h->values[h->nvalues++] = (hvalue){run, k, opcost_wmean_value(&mean)};
    }
    if (rc == OPCOST_PLOT_FAILED)
        opcost_errorf(err, errlen, "%s: out of memory", path);
    free(done);
    free(rows);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

/* Reads every results CSV of dir (not the sidecars, not gates.csv, not
 * other CSVs). */
static int load(history *h, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d && errno == ENOENT)
        return opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                   "no directory %s (nightly runs' CSVs go "
                                   "there; --history DIR)",
                                   dir);
    if (!d)
        return opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                   "--history: %s: %s", dir, strerror(errno));
    char **names = NULL;
    size_t n = 0, cap = 0;
    int rc = OPCOST_PLOT_DONE;
    for (struct dirent *e; (e = readdir(d));) {
        if (!ends_with(e->d_name, ".csv") ||
            ends_with(e->d_name, ".samples.csv") ||
            !strcmp(e->d_name, "gates.csv"))
            continue;
        if (reserve((void **)&names, &cap, n, sizeof *names) ||
            !(names[n] = strdup(e->d_name))) {
            rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                     "out of memory");
            break;
        }
        ++n;
    }
    closedir(d);
    if (names)
        qsort(names, n, sizeof *names, cmp_name);
    size_t caps[3] = {0, 0, 0};
    for (size_t i = 0; i < n && rc == OPCOST_PLOT_DONE; ++i) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (opcost_is_results_csv(path))
            rc = add_file(h, caps, path, err, errlen);
    }
    for (size_t i = 0; i < n; ++i)
        free(names[i]);
    free(names);
    if (rc == OPCOST_PLOT_DONE && !h->nruns)
        rc = opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                 "no results CSV with rows in %s", dir);
    return rc;
}

/* ---- gates.csv: the verdicts `opcost compare --gate --gates-out` appends
 * (RFC 4180 fields, one header line). */

#define GATE_FIELDS 13

typedef struct gate {
    hgroup g;
    char run_id[OPCOST_TEXT_MAX];
    double new_us, ratio, p_holm;
} gate;

/* Splits one line into fields (quotes honoured, no line breaks inside).
 * Returns the count, or -1 when a quote is unbalanced. */
static int split(char *line, char *fields[], int max)
{
    int n = 0;
    char *w = line, *r = line;
    while (n < max) {
        fields[n++] = w;
        if (*r == '"') {
            for (++r;; ++r) {
                if (!*r)
                    return -1;
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            ++r;
        } else
            while (*r && *r != ',')
                *w++ = *r++;
        if (!*r) {
            *w = '\0';
            return n;
        }
        if (*r != ',')
            return -1;
        *w++ = '\0';
        ++r;
    }
    return max + 1;
}

/* The regressions (regression = 1) of gates.csv in dir, if it exists
 * (0 and `incomplete`, a group with a point not paired, are none). */
static int load_gates(const char *dir, gate **out, size_t *nout, char *err,
                      size_t errlen)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/gates.csv", dir);
    *out = NULL;
    *nout = 0;
    struct stat st;
    if (lstat(path, &st) != 0 && errno == ENOENT)
        return OPCOST_PLOT_DONE;
    opcost_text text;
    if (opcost_text_open(&text, path, err, errlen))
        return OPCOST_PLOT_BAD;
    size_t cap = 0, lineno = 0;
    int rc = OPCOST_PLOT_DONE;
    for (char *line;
         rc == OPCOST_PLOT_DONE && (line = opcost_text_line(&text));) {
        ++lineno;
        const size_t got = strlen(line);
        if (lineno == 1) {
            if (strcmp(line, opcost_gates_header))
                rc = opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                         "%s:1: the header must be '%s'", path,
                                         opcost_gates_header);
            continue;
        }
        if (!got)
            continue;
        char *fd[GATE_FIELDS + 1];
        const int nf = split(line, fd, GATE_FIELDS);
        char *end;
        if (nf != GATE_FIELDS) {
            rc = opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                     "%s:%zu: must have %d fields, got %s",
                                     path, lineno, GATE_FIELDS,
                                     nf < 0 ? "an unclosed quote"
                                            : "another "
                                              "count");
            break;
        }
        if (strcmp(fd[12], "0") && strcmp(fd[12], "1") &&
            strcmp(fd[12], "incomplete")) {
            rc = opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                     "%s:%zu: regression must be 0, 1 or "
                                     "incomplete, got '%s'",
                                     path, lineno, fd[12]);
            break;
        }
        if (strcmp(fd[12], "1")) /* no regression, or no verdict */
            continue;
        gate g;
        memset(&g, 0, sizeof g);
        snprintf(g.run_id, sizeof g.run_id, "%s", fd[0]);
        for (int k = 0; k < KEY_FIELDS; ++k)
            snprintf(g.g.key[k], sizeof g.g.key[k], "%s", fd[2 + k]);
        const int cols[3] = {9, 10, 11};
        double *dst[3] = {&g.new_us, &g.ratio, &g.p_holm};
        for (int k = 0; k < 3 && rc == OPCOST_PLOT_DONE; ++k) {
            *dst[k] = strtod(fd[cols[k]], &end);
            if (end == fd[cols[k]] || *end)
                rc = opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                         "%s:%zu: %s must be a number, got "
                                         "'%s'",
                                         path, lineno,
                                         k == 0   ? "new_us"
                                         : k == 1 ? "ratio"
                                                  : "p_holm",
                                         fd[cols[k]]);
        }
        if (rc == OPCOST_PLOT_DONE &&
            reserve((void **)out, &cap, *nout, sizeof **out))
            rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                     "out of memory");
        else if (rc == OPCOST_PLOT_DONE)
            (*out)[(*nout)++] = g;
    }
    if (rc == OPCOST_PLOT_DONE && lineno == 0)
        rc = opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                 "%s:1: the header must be '%s'", path,
                                 opcost_gates_header);
    opcost_text_close(&text);
    return rc;
}

/* ---- The figure. */

static const history *order_of; /* qsort's context */
static const size_t *pos_of;

static int cmp_run(const void *a, const void *b)
{
    const hrun *p = &order_of->runs[*(const size_t *)a];
    const hrun *q = &order_of->runs[*(const size_t *)b];
    const int c = strcmp(p->timestamp, q->timestamp);
    return c ? c : strcmp(p->run_id, q->run_id);
}

/* Values by group, then by x. */
static int cmp_value(const void *a, const void *b)
{
    const hvalue *p = a, *q = b;
    if (p->group != q->group)
        return p->group < q->group ? -1 : 1;
    return (pos_of[p->run] > pos_of[q->run]) -
           (pos_of[p->run] < pos_of[q->run]);
}

/* x tics: "MM-DD HH:MM" (else the run id) of at most 16 runs, evenly
 * spaced, as data: runtic<i> the label (a quoted string assignment, like
 * every text from a file), runticx<i> its x, ntics the count. The script
 * adds each with `set xtics add (value(...) value(...))`: a run id never
 * becomes gnuplot code (it once was spliced into an eval'd xtics list). */
static void run_tics(opcost_plot_text *t, const history *h, const size_t *pos)
{
    const size_t step = (h->nruns + 15) / 16;
    size_t k = 0;
    for (size_t x = 0; x < h->nruns; x += step, ++k) {
        size_t r = 0;
        while (pos[r] != x)
            ++r;
        const char *ts = h->runs[r].timestamp;
        char label[64], name[32];
        if (strlen(ts) >= 16)
            snprintf(label, sizeof label, "%.5s %.5s", ts + 5, ts + 11);
        snprintf(name, sizeof name, "runtic%zu", k);
        opcost_plot_assign(t, name,
                           strlen(ts) >= 16 ? label : h->runs[r].run_id);
        opcost_plot_textf(t, "runticx%zu=%zu; ", k, x);
    }
    opcost_plot_textf(t, "ntics=%zu; ", k);
}

/* path, or path[variant] for a variant other than auto */
static void series_name(const hgroup *g, char *buf, size_t len)
{
    if (!g->key[5][0] || !strcmp(g->key[5], "auto"))
        snprintf(buf, len, "%s", g->key[4]);
    else
        snprintf(buf, len, "%s[%s]", g->key[4], g->key[5]);
}

/* Writes the panels of distribution dist. pos[run] is its x. */
static int write_history(const opcost_plot_input *in, const history *h,
                         const size_t *pos, const char *dist, const gate *gates,
                         size_t ngates, opcost_plot_figures *out, char *err,
                         size_t errlen)
{
    FILE *f = opcost_plot_figure_open(out, "history", in->dir, "history", err,
                                      errlen);
    if (!f)
        return OPCOST_PLOT_FAILED;
    /* series = (path, variant) in order of first appearance: colours */
    size_t *series = malloc((h->ngroups ? h->ngroups : 1) * sizeof *series);
    opcost_plot_text assign = {0}, first = {0}, count = {0}, reg = {0};
    opcost_plot_text lts = {0}, heading = {0}, run = {0};
    size_t nseries = 0;
    for (size_t g = 0; series && g < h->ngroups; ++g) {
        size_t s = 0;
        while (s < g && (strcmp(h->groups[s].key[4], h->groups[g].key[4]) ||
                         strcmp(h->groups[s].key[5], h->groups[g].key[5])))
            ++s;
        series[g] = s < g ? series[s] : nseries++;
    }
    const hrun *last = NULL;
    for (size_t r = 0; r < h->nruns; ++r)
        if (pos[r] == h->nruns - 1)
            last = &h->runs[r];
    opcost_plot_textf(&heading,
                      "opcost history: expected cost per call by path — %s "
                      "(Σ freq·median_us / Σ freq over groups whose rows "
                      "were all ok)",
                      dist);
    opcost_plot_run_line(&run, &last->info);
    opcost_plot_textf(&run, " (latest of %zu run%s)", h->nruns,
                      h->nruns == 1 ? "" : "s");
    opcost_plot_assign(&assign, "title", heading.s ? heading.s : "");
    opcost_plot_assign(&assign, "run", run.s ? run.s : "");
    run_tics(&assign, h, pos);
    opcost_plot_textf(&assign, "nruns=%zu; ", h->nruns);
    /* the shared key: each series of the distribution once */
    opcost_plot_text keys = {0}, keylts = {0};
    for (size_t g = 0; series && g < h->ngroups; ++g) {
        size_t k = 0;
        while (k < g &&
               (strcmp(h->groups[k].key[0], dist) || series[k] != series[g]))
            ++k;
        if (strcmp(h->groups[g].key[0], dist) || k < g)
            continue;
        char sname[2 * OPCOST_TEXT_MAX + 4];
        series_name(&h->groups[g], sname, sizeof sname);
        opcost_plot_word(&keys, sname);
        opcost_plot_textf(&keylts, "%s%zu", keylts.n ? " " : "", series[g] + 1);
    }
    opcost_plot_assign(&assign, "keys", keys.s ? keys.s : "");
    opcost_plot_assign(&assign, "keylts", keylts.s ? keylts.s : "");
    opcost_plot_text_free(&keys);
    opcost_plot_text_free(&keylts);
    size_t panel = 0, block = 0;
    char *drawn = calloc(h->ngroups ? h->ngroups : 1, 1);
    for (size_t g = 0; series && drawn && g < h->ngroups; ++g) {
        const hgroup *pg = &h->groups[g];
        if (drawn[g] || strcmp(pg->key[0], dist))
            continue;
        /* a panel: (op, dtype, layout); its series in group order */
        char title[512], name[32];
        snprintf(title, sizeof title, "%s, %s, %s", pg->key[1], pg->key[2],
                 pg->key[3]);
        snprintf(name, sizeof name, "ptitle%zu", ++panel);
        opcost_plot_assign(&assign, name, title);
        opcost_plot_textf(&first, "%s%zu", panel > 1 ? " " : "", block);
        size_t blocks = 0;
        for (size_t k = g; k < h->ngroups; ++k) {
            if (drawn[k] || !same_key(&h->groups[k], pg, 4))
                continue;
            drawn[k] = 1;
            char sname[2 * OPCOST_TEXT_MAX + 4];
            series_name(&h->groups[k], sname, sizeof sname);
            opcost_plot_block(f, sname, "run expected_us run_id",
                              "history of %s %s; series %s; run = index in "
                              "start-time order",
                              dist, title, sname);
            for (size_t v = 0; v < h->nvalues; ++v) /* sorted by x */
                if (h->values[v].group == k)
                    fprintf(f, "%zu %.9g \"%s\"\n", pos[h->values[v].run],
                            h->values[v].us, h->runs[h->values[v].run].run_id);
            opcost_plot_textf(&lts, "%s%zu", block + blocks ? " " : "",
                              series[k] + 1);
            ++blocks;
        }
        opcost_plot_textf(&count, "%s%zu", panel > 1 ? " " : "", blocks);
        block += blocks;
        /* the panel's regressions: at the run's plotted value, else the
         * gate's own new_us */
        size_t nreg = 0;
        for (size_t i = 0; i < ngates; ++i) {
            size_t r = 0;
            while (r < h->nruns && strcmp(h->runs[r].run_id, gates[i].run_id))
                ++r;
            if (r == h->nruns || !same_key(&gates[i].g, pg, 4))
                continue;
            double y = gates[i].new_us;
            for (size_t v = 0; v < h->nvalues; ++v)
                if (h->values[v].run == r &&
                    same_key(&h->groups[h->values[v].group], &gates[i].g,
                             KEY_FIELDS))
                    y = h->values[v].us;
            if (!nreg++)
                opcost_plot_block(f, "regression", "run expected_us label",
                                  "regressions flagged in gates.csv: run, "
                                  "expected cost, label (path, ratio, Holm "
                                  "p)");
            fprintf(f, "%zu %.9g \"%s ×%.3g p=%.2g\"\n", pos[r], y,
                    gates[i].g.key[4], gates[i].ratio, gates[i].p_holm);
        }
        if (nreg) /* its colour is the script's own red */
            opcost_plot_textf(&lts, " 1");
        opcost_plot_textf(&reg, "%s%lld", panel > 1 ? " " : "",
                          nreg ? (long long)block : -1LL);
        block += nreg > 0;
    }
    opcost_plot_textf(&assign, "npanels=%zu; ", panel);
    opcost_plot_assign(&assign, "pfirst", first.s ? first.s : "");
    opcost_plot_assign(&assign, "pcount", count.s ? count.s : "");
    opcost_plot_assign(&assign, "preg", reg.s ? reg.s : "");
    opcost_plot_assign(&assign, "lts", lts.s ? lts.s : "");
    if (!series || !drawn)
        assign.failed = 1;
    free(series);
    free(drawn);
    opcost_plot_text_free(&first);
    opcost_plot_text_free(&count);
    opcost_plot_text_free(&reg);
    opcost_plot_text_free(&lts);
    opcost_plot_text_free(&heading);
    opcost_plot_text_free(&run);
    return opcost_plot_figure_close(f, out, &assign, err, errlen)
               ? OPCOST_PLOT_FAILED
               : OPCOST_PLOT_DONE;
}

int opcost_plot_history(const opcost_plot_input *in, opcost_plot_figures *out,
                        char *err, size_t errlen)
{
    history h;
    memset(&h, 0, sizeof h);
    gate *gates = NULL;
    size_t ngates = 0, *pos = NULL, *idx = NULL;
    int rc = load(&h, in->history_dir, err, errlen);
    if (rc == OPCOST_PLOT_DONE)
        rc = load_gates(in->history_dir, &gates, &ngates, err, errlen);
    if (rc == OPCOST_PLOT_DONE) {
        /* x = the run's rank by start time */
        idx = malloc(h.nruns * sizeof *idx);
        pos = malloc(h.nruns * sizeof *pos);
        if (!idx || !pos)
            rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                     "out of memory");
    }
    if (rc == OPCOST_PLOT_DONE) {
        for (size_t r = 0; r < h.nruns; ++r)
            idx[r] = r;
        order_of = &h;
        qsort(idx, h.nruns, sizeof *idx, cmp_run);
        for (size_t x = 0; x < h.nruns; ++x)
            pos[idx[x]] = x;
        pos_of = pos;
        qsort(h.values, h.nvalues, sizeof *h.values, cmp_value);
        /* the distribution: the option, else the latest run's first */
        const char *dist = in->distribution;
        for (size_t v = 0; !dist && v < h.nvalues; ++v)
            if (pos[h.values[v].run] == h.nruns - 1)
                dist = h.groups[h.values[v].group].key[0];
        int found = 0;
        for (size_t g = 0; dist && g < h.ngroups; ++g)
            found |= !strcmp(h.groups[g].key[0], dist);
        if (!dist)
            rc = opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                     "no group of the latest run in %s had "
                                     "all its rows ok",
                                     in->history_dir);
        else if (!found)
            rc = opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                     "--distribution: no run in %s has an "
                                     "all-ok group of '%s'",
                                     in->history_dir, dist);
        else
            rc = write_history(in, &h, pos, dist, gates, ngates, out, err,
                               errlen);
    }
    free(idx);
    free(pos);
    free(gates);
    free(h.runs);
    free(h.groups);
    free(h.values);
    return rc;
}
