/* The console's peer section: where rowops stands against the kernels a
 * user would pick instead (the peer paths, bench/paths/peer_route.h), per
 * distribution, op, dtype and layout, each peer paired in the same rounds
 * with rowops' op of the same form. */
#include "report_peers.h"
#include "paired.h"
#include "registry.h"
#include "report_estimate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int is_peer(const char *path)
{
    const opcost_path *p = opcost_path_find(path);
    return p && p->peer && !p->model; /* a model's stack: the model section */
}

/* Rows of one group: same distribution, op, dtype and layout. */
static int same_group(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->distribution, b->distribution) && !strcmp(a->op, b->op) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->layout, b->layout);
}

/* The timed row of path at row p's point; NULL if none. */
static const opcost_result *at_point(const opcost_result *rows, size_t n,
                                     const opcost_result *p, const char *path)
{
    for (size_t i = 0; i < n; ++i)
        if (same_group(&rows[i], p) && rows[i].B == p->B && rows[i].N == p->N &&
            !strcmp(rows[i].path, path) && !strcmp(rows[i].variant, "auto") &&
            rows[i].status == OPCOST_STATUS_OK)
            return &rows[i];
    return NULL;
}

/* One peer in one group, over the shapes where both it and the rowops
 * path it pairs with were timed. */
typedef struct peer_line {
    const char *rowops;        /* the path it pairs with */
    double peer_us, rowops_us; /* expected cost per call (freq-weighted) */
    opcost_paired ratio;       /* peer / rowops, weighted; n = 0: none */
    int ok, timed, shapes;     /* shapes the peer was timed at, with rowops too,
                                  of the group's */
} peer_line;

static void weigh(const opcost_result *rows, size_t n, size_t g,
                  const char *path, peer_line *out)
{
    double *a = malloc((n ? n : 1) * sizeof *a);
    opcost_paired *r = malloc((n ? n : 1) * sizeof *r);
    double fp = 0, fr = 0, f = 0;
    size_t k = 0;
    int paired = a && r;
    *out = (peer_line){0};
    for (size_t i = 0; i < n && a && r; ++i) {
        const opcost_result *x = &rows[i];
        if (!same_group(&rows[g], x) || strcmp(x->path, path))
            continue;
        ++out->shapes;
        out->ok += x->status == OPCOST_STATUS_OK;
        out->rowops = x->paired_with[0] ? x->paired_with : out->rowops;
        const opcost_result *b =
            x->status == OPCOST_STATUS_OK && x->paired_with[0]
                ? at_point(rows, n, x, x->paired_with)
                : NULL;
        if (!b)
            continue;
        ++out->timed;
        const double freq = atof(x->freq);
        fp += freq * x->median_us;
        fr += freq * b->median_us;
        f += freq;
        r[k] = opcost_report_row_estimate(x);
        if (!r[k].n)
            paired = 0;
        a[k++] = freq * b->median_us;
    }
    out->peer_us = f > 0 ? fp / f : NAN;
    out->rowops_us = f > 0 ? fr / f : NAN;
    if (!(paired && k && !opcost_paired_weighted(a, r, k, &out->ratio)))
        out->ratio = (opcost_paired){0};
    free(a);
    free(r);
}

/* The points of the group where the peer is faster than rowops (its
 * verdict against rowops' row), as "B=101 x0.95" items. */
static void faster_points(const opcost_result *rows, size_t n, size_t g,
                          const char *path, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *x = &rows[i];
        if (!same_group(&rows[g], x) || strcmp(x->path, path) ||
            x->status != OPCOST_STATUS_OK || strcmp(x->verdict, "faster"))
            continue;
        const int w = snprintf(buf + used, len - used, "%sB=%lld x%.2f",
                               used ? ", " : "", (long long)x->B, x->ratio);
        if (w < 0 || (size_t)w >= len - used) {
            snprintf(buf + (len > 5 ? len - 5 : 0), len > 5 ? 5 : len, "...");
            return;
        }
        used += (size_t)w;
    }
    if (!used)
        snprintf(buf, len, "none");
}

void opcost_report_peers(FILE *f, const opcost_result *rows, size_t n)
{
    char *done = calloc(n ? n : 1, 1);
    if (!done)
        return;
    int any = 0;
    for (size_t g = 0; g < n; ++g) {
        if (done[g] || !is_peer(rows[g].path))
            continue;
        if (!any++)
            fprintf(f, "\nAgainst the peers (x: a peer's expected cost per "
                       "call over rowops' op of the same form, paired in "
                       "rounds, 95 %% interval; above 1 rowops is faster; "
                       "then the points where the peer was faster):\n");
        fprintf(f, "\n%s  %s %s %s\n", rows[g].distribution, rows[g].op,
                rows[g].dtype, rows[g].layout);
        fprintf(f, "  %-22s %-21s %10s %10s %18s  %s\n", "peer", "rowops",
                "peer us", "rowops us", "x peer/rowops", "peer faster at");
        for (size_t i = g; i < n; ++i) {
            if (done[i] || !same_group(&rows[g], &rows[i]) ||
                !is_peer(rows[i].path))
                continue;
            for (size_t j = i; j < n; ++j)
                if (same_group(&rows[i], &rows[j]) &&
                    !strcmp(rows[j].path, rows[i].path))
                    done[j] = 1;
            peer_line l;
            weigh(rows, n, g, rows[i].path, &l);
            if (!l.timed) {
                fprintf(f, "  %-22s %-21s %10s %10s %18s  (%s)\n", rows[i].path,
                        l.rowops ? l.rowops : "-", "-", "-", "-",
                        l.ok ? "no rowops row of its form to pair with: "
                               "select eager-python, eager-python-inplace"
                             : "not timed: see the CSV's status and note");
                continue;
            }
            char x[48] = "-", faster[160];
            if (l.ratio.n)
                snprintf(x, sizeof x, "x%.3f +-%.1f%%", l.ratio.ratio,
                         100 * l.ratio.ci95_rel);
            faster_points(rows, n, g, rows[i].path, faster, sizeof faster);
            char of[48] = "";
            if (l.timed < l.shapes)
                snprintf(of, sizeof of, " (%d of %d shapes)", l.timed,
                         l.shapes);
            fprintf(f, "  %-22s %-21s %10.2f %10.2f %18s  %s%s\n", rows[i].path,
                    l.rowops, l.peer_us, l.rowops_us, x, faster, of);
        }
    }
    free(done);
}
