/* `opcost plot --kind paired-history`: the nightly A/B runs of a history
 * directory (opcost ab's files: rows of side base and new) chained into
 * one drift-free trend per group (distribution, op, dtype, layout, path,
 * variant). Each night measured its new commit against a base commit in
 * the same rounds, so its ratio R (the group's weighted expected cost,
 * new / base: bench/analysis/ab_report.h) holds whatever the host's speed
 * was that night; a commit's index is its base's times R, its log
 * variance its base's plus R's, and the first base a chain meets is 1. A
 * night whose base the history has not measured starts a new chain. A
 * night whose group was not paired at every point (interrupted, a side
 * that went away, a base not ok) has no R: it is drawn at its base's
 * index with the verdict `incomplete` and moves no chain. */
#define _POSIX_C_SOURCE 200809L
#include "ab_report.h"
#include "errorf.h"
#include "plot_data.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* distribution, op, dtype, layout, path, variant */
#define KEY_FIELDS 6

typedef struct night {
    char run_id[OPCOST_TEXT_MAX], timestamp[OPCOST_TEXT_MAX];
    char base[OPCOST_TEXT_MAX], head[OPCOST_TEXT_MAX]; /* git shas */
    char key[KEY_FIELDS][OPCOST_TEXT_MAX];
    double ratio, se; /* se of log(ratio) */
    opcost_verdict verdict;
    int incomplete;     /* not paired at every point: no ratio */
    opcost_result info; /* for the heading */
} night;

typedef struct nights {
    night *v;
    size_t n, cap;
} nights;

static int ends_with(const char *s, const char *suffix)
{
    const size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static void key_of(const opcost_result *r, char key[][OPCOST_TEXT_MAX])
{
    const char *f[KEY_FIELDS] = {r->distribution, r->op,   r->dtype,
                                 r->layout,       r->path, r->variant};
    for (int i = 0; i < KEY_FIELDS; ++i)
        snprintf(key[i], OPCOST_TEXT_MAX, "%s", f[i]);
}

static int same_key(char a[][OPCOST_TEXT_MAX], char b[][OPCOST_TEXT_MAX],
                    int fields)
{
    for (int i = 0; i < fields; ++i)
        if (strcmp(a[i], b[i]))
            return 0;
    return 1;
}

/* The groups of one A/B file, one night each. */
static int add_file(nights *ns, const char *path, char *err, size_t errlen)
{
    opcost_result *rows = NULL;
    size_t n = 0;
    if (opcost_results_read(path, &rows, &n, err, errlen))
        return OPCOST_PLOT_BAD;
    const char *base = "", *head = "";
    for (size_t i = 0; i < n; ++i) {
        if (!strcmp(rows[i].side, "base"))
            base = rows[i].git_sha;
        if (!strcmp(rows[i].side, "new"))
            head = rows[i].git_sha;
    }
    opcost_ab_group *g = NULL;
    size_t ng = 0;
    int rc = OPCOST_PLOT_DONE;
    if (*head && opcost_ab_groups(rows, n, 0.02, 0.05, &g, &ng))
        rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                 "out of memory");
    for (size_t k = 0; k < ng && rc == OPCOST_PLOT_DONE; ++k) {
        const int incomplete = OPCOST_AB_INCOMPLETE(&g[k]);
        if (!isfinite(g[k].ratio.ratio) && !incomplete)
            continue;
        if (ns->n == ns->cap) {
            const size_t cap = ns->cap ? 2 * ns->cap : 64;
            night *v = realloc(ns->v, cap * sizeof *v);
            if (!v) {
                rc = opcost_plot_outcome(OPCOST_PLOT_FAILED, err, errlen,
                                         "out of memory");
                break;
            }
            ns->v = v;
            ns->cap = cap;
        }
        night *x = &ns->v[ns->n++];
        memset(x, 0, sizeof *x);
        snprintf(x->run_id, sizeof x->run_id, "%s", g[k].key->run_id);
        snprintf(x->timestamp, sizeof x->timestamp, "%s",
                 g[k].key->timestamp_utc);
        snprintf(x->base, sizeof x->base, "%s", base);
        snprintf(x->head, sizeof x->head, "%s", head);
        key_of(g[k].key, x->key);
        x->ratio = g[k].ratio.ratio;
        x->se = g[k].ratio.se;
        x->verdict = g[k].verdict;
        x->incomplete = incomplete;
        x->info = *g[k].key;
    }
    free(g);
    free(rows);
    return rc;
}

static int load(nights *ns, const char *dir, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT
                   ? opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                         "no directory %s", dir)
                   : opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                         "--history: %s: %s", dir,
                                         strerror(errno));
    int rc = OPCOST_PLOT_DONE;
    for (struct dirent *e; rc == OPCOST_PLOT_DONE && (e = readdir(d));) {
        if (!ends_with(e->d_name, ".csv") ||
            ends_with(e->d_name, ".samples.csv"))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (opcost_is_results_csv(path))
            rc = add_file(ns, path, err, errlen);
    }
    closedir(d);
    if (rc == OPCOST_PLOT_DONE && !ns->n)
        rc = opcost_plot_outcome(OPCOST_PLOT_SKIP, err, errlen,
                                 "no paired run (opcost ab's rows) in %s", dir);
    return rc;
}

static int by_time(const void *a, const void *b)
{
    const night *p = a, *q = b;
    const int c = strcmp(p->timestamp, q->timestamp);
    return c ? c : strcmp(p->run_id, q->run_id);
}

/* A commit's place on its group's chain. */
typedef struct known {
    char sha[OPCOST_TEXT_MAX];
    double log_index, var;
} known;

static int write_figure(const opcost_plot_input *in, nights *ns,
                        const char *dist, opcost_plot_figures *out, char *err,
                        size_t errlen)
{
    FILE *f = opcost_plot_figure_open(out, "paired_history", in->dir,
                                      "paired-history", err, errlen);
    if (!f)
        return OPCOST_PLOT_FAILED;
    /* the runs in time order: x */
    size_t nruns = 0;
    char(*runs)[OPCOST_TEXT_MAX] = calloc(ns->n ? ns->n : 1, sizeof *runs);
    known *kn = calloc(ns->n * 2 + 2, sizeof *kn);
    char *done = calloc(ns->n ? ns->n : 1, 1);
    opcost_plot_text assign = {0}, first = {0}, count = {0}, titles = {0};
    if (!runs || !kn || !done)
        assign.failed = 1;
    for (size_t i = 0; runs && i < ns->n; ++i) {
        size_t r = 0;
        while (r < nruns && strcmp(runs[r], ns->v[i].run_id))
            ++r;
        if (r == nruns)
            snprintf(runs[nruns++], OPCOST_TEXT_MAX, "%s", ns->v[i].run_id);
    }
    size_t panel = 0, block = 0;
    const night *last = NULL;
    for (size_t i = 0; done && kn && i < ns->n; ++i) {
        night *pg = &ns->v[i];
        if (done[i] || strcmp(pg->key[0], dist))
            continue;
        char title[512];
        snprintf(title, sizeof title, "%s, %s, %s", pg->key[1], pg->key[2],
                 pg->key[3]);
        opcost_plot_word(&titles, title);
        opcost_plot_textf(&first, "%s%zu", panel ? " " : "", block);
        ++panel;
        size_t blocks = 0;
        for (size_t s = i; s < ns->n; ++s) {
            night *ps = &ns->v[s];
            if (done[s] || !same_key(ps->key, pg->key, 4))
                continue;
            /* one series: this path[variant], chained in time order */
            char name[2 * OPCOST_TEXT_MAX + 4];
            if (!strcmp(ps->key[5], "auto"))
                snprintf(name, sizeof name, "%s", ps->key[4]);
            else
                snprintf(name, sizeof name, "%s[%s]", ps->key[4], ps->key[5]);
            opcost_plot_block(f, name, "run index lo hi verdict when",
                              "%s %s, %s: each night's commit against its "
                              "base, chained (1 = the chain's first base); "
                              "lo/hi: 95 %% interval of the chained index",
                              dist, title, name);
            size_t nk = 0;
            for (size_t j = s; j < ns->n; ++j) {
                night *x = &ns->v[j];
                if (done[j] || !same_key(x->key, ps->key, KEY_FIELDS))
                    continue;
                done[j] = 1;
                last = x;
                size_t b = 0;
                while (b < nk && strcmp(kn[b].sha, x->base))
                    ++b;
                if (b == nk) { /* a new chain starts at this base */
                    snprintf(kn[nk].sha, sizeof kn[nk].sha, "%s", x->base);
                    kn[nk].log_index = 0;
                    kn[nk++].var = 0;
                }
                /* an incomplete night: at its base, no step */
                const double li =
                    kn[b].log_index + (x->incomplete ? 0 : log(x->ratio));
                const double var =
                    kn[b].var + (x->incomplete ? 0 : x->se * x->se);
                /* a step of the chain (none in an A/A night) */
                if (!x->incomplete && strcmp(x->head, x->base)) {
                    size_t h = 0;
                    while (h < nk && strcmp(kn[h].sha, x->head))
                        ++h;
                    if (h == nk)
                        snprintf(kn[nk++].sha, sizeof kn[0].sha, "%s", x->head);
                    kn[h].log_index = li;
                    kn[h].var = var;
                }
                size_t r = 0;
                while (r < nruns && strcmp(runs[r], x->run_id))
                    ++r;
                const double half = 1.959963984540054 * sqrt(var);
                fprintf(f, "%zu %.9g %.9g %.9g \"%s\" \"%.5s %.5s\"\n", r,
                        exp(li), exp(li - half), exp(li + half),
                        x->incomplete ? "incomplete"
                        : x->verdict == OPCOST_VERDICT_NONE
                            ? "none"
                            : opcost_verdict_name(x->verdict),
                        strlen(x->timestamp) >= 16 ? x->timestamp + 5 : "",
                        strlen(x->timestamp) >= 16 ? x->timestamp + 11 : "");
            }
            ++blocks;
        }
        opcost_plot_textf(&count, "%s%zu", panel > 1 ? " " : "", blocks);
        block += blocks;
    }
    opcost_plot_text heading = {0}, run = {0};
    opcost_plot_textf(&heading,
                      "opcost paired history: each night's commit against "
                      "its base in the same rounds, chained — %s",
                      dist);
    if (last)
        opcost_plot_run_line(&run, &last->info);
    opcost_plot_assign(&assign, "title", heading.s ? heading.s : "");
    opcost_plot_assign(&assign, "run", run.s ? run.s : "");
    opcost_plot_textf(&assign, "npanels=%zu; nruns=%zu; ", panel, nruns);
    opcost_plot_assign(&assign, "pfirst", first.s ? first.s : "");
    opcost_plot_assign(&assign, "pcount", count.s ? count.s : "");
    opcost_plot_assign(&assign, "ptitles", titles.s ? titles.s : "");
    free(runs);
    free(kn);
    free(done);
    opcost_plot_text_free(&first);
    opcost_plot_text_free(&count);
    opcost_plot_text_free(&titles);
    opcost_plot_text_free(&heading);
    opcost_plot_text_free(&run);
    return opcost_plot_figure_close(f, out, &assign, err, errlen)
               ? OPCOST_PLOT_FAILED
               : OPCOST_PLOT_DONE;
}

int opcost_plot_paired_history(const opcost_plot_input *in,
                               opcost_plot_figures *out, char *err,
                               size_t errlen)
{
    nights ns = {0};
    int rc = load(&ns, in->history_dir, err, errlen);
    if (rc == OPCOST_PLOT_DONE) {
        qsort(ns.v, ns.n, sizeof *ns.v, by_time);
        const char *dist =
            in->distribution ? in->distribution : ns.v[ns.n - 1].key[0];
        int found = 0;
        for (size_t i = 0; i < ns.n; ++i)
            found |= !strcmp(ns.v[i].key[0], dist);
        rc = found ? write_figure(in, &ns, dist, out, err, errlen)
                   : opcost_plot_outcome(OPCOST_PLOT_BAD, err, errlen,
                                         "--distribution: no paired run in "
                                         "%s has '%s'",
                                         in->history_dir, dist);
    }
    free(ns.v);
    return rc;
}
