/* `opcost compare`: two runs (or two kernel variants of one run) joined on
 * every configuration column, each pair tested on its per-repetition
 * medians (bench/significance.h: Welch on logs, Holm across the pairs), a
 * change claimed only when significant and larger than the threshold.
 * With --gate, the gated quantity is each distribution's weighted expected
 * cost per call (per repetition: sum freq * repetition median / sum freq);
 * per-row changes are still reported. */
#define _POSIX_C_SOURCE 200809L
#include "compare.h"
#include "results_csv.h"
#include "significance.h"
#include "stats.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_REPS 5

typedef struct run {
    const char *path;
    opcost_result *rows;
    size_t n;
    double **reps; /* per row: repetition medians (NULL: none) */
    int *nreps;
} run;

typedef struct pair {
    const opcost_result *base, *new_;
    const run *rb, *rn;
    size_t ib, in;
    double ratio, p, p_holm;
    double se, df; /* of log(ratio), within the runs */
    const char *verdict;
} pair;

/* Loads a run and the median of each repetition of each row. */
static int load(run *r, const char *path, char *err, size_t len)
{
    memset(r, 0, sizeof *r);
    r->path = path;
    if (opcost_results_read(path, &r->rows, &r->n, err, len))
        return -1;
    r->reps = calloc(r->n ? r->n : 1, sizeof *r->reps);
    r->nreps = calloc(r->n ? r->n : 1, sizeof *r->nreps);
    opcost_sample *s = NULL;
    size_t ns = 0;
    char e[512];
    if (!r->reps || !r->nreps)
        return -1;
    if (opcost_samples_read(path, r->rows, r->n, &s, &ns, e, sizeof e))
        return 0; /* no sidecar: every pair will say "no claim" */
    for (size_t i = 0; i < r->n; ++i) {
        const int64_t reps = r->rows[i].reps;
        if (reps < 1 || reps == OPCOST_INT_NA)
            continue;
        r->reps[i] = calloc((size_t)reps, sizeof(double));
    }
    /* group samples by (point, rep): the sidecar is written in order */
    size_t k = 0;
    while (k < ns) {
        size_t e2 = k;
        while (e2 < ns && s[e2].point == s[k].point && s[e2].rep == s[k].rep)
            ++e2;
        const int64_t pt = s[k].point, rep = s[k].rep;
        if (pt >= 0 && (size_t)pt < r->n && r->reps[pt] &&
            rep < r->rows[pt].reps) {
            double *x = malloc((e2 - k) * sizeof *x);
            if (x) {
                for (size_t j = k; j < e2; ++j)
                    x[j - k] = s[j].us;
                r->reps[pt][r->nreps[pt]++] = opcost_median_inplace(x, e2 - k);
                free(x);
            }
        }
        k = e2;
    }
    free(s);
    return 0;
}

static void unload(run *r)
{
    for (size_t i = 0; i < r->n; ++i)
        free(r->reps ? r->reps[i] : NULL);
    free(r->reps);
    free(r->nreps);
    free(r->rows);
}

/* The configuration columns a pair must share (variant optional). */
static int same_config(const opcost_result *a, const opcost_result *b,
                       int with_variant)
{
    return !strcmp(a->op, b->op) && a->B == b->B && a->N == b->N &&
           !strcmp(a->dtype, b->dtype) &&
           !strcmp(a->weight_dtype, b->weight_dtype) &&
           !strcmp(a->layout, b->layout) && !strcmp(a->path, b->path) &&
           (!with_variant || !strcmp(a->variant, b->variant)) &&
           !strcmp(a->device, b->device) && a->threads == b->threads &&
           a->cache_state == b->cache_state;
}

/* Runs from different machines or software do not compare. */
static int foreign(const run *a, const run *b, char *why, size_t len)
{
    if (!a->n || !b->n)
        return 0;
    const opcost_result *x = &a->rows[0], *y = &b->rows[0];
    const char *what[][3] = {
        {"host", x->host, y->host},
        {"cpu", x->cpu, y->cpu},
        {"torch_version", x->torch_version, y->torch_version},
        {"device", x->device, y->device},
        {"gpu", x->gpu, y->gpu}};
    for (size_t i = 0; i < sizeof what / sizeof what[0]; ++i)
        if (strcmp(what[i][1], what[i][2])) {
            snprintf(why, len, "%s differs: '%s' in %s, '%s' in %s", what[i][0],
                     what[i][1], a->path, what[i][2], b->path);
            return 1;
        }
    return 0;
}

static void test_pair(pair *p)
{
    const opcost_result *b = p->base, *n = p->new_;
    p->ratio = p->p = p->p_holm = NAN;
    if (!b || !n) {
        p->verdict = b ? "only-base" : "only-new";
        return;
    }
    p->ratio = n->median_us / b->median_us;
    if (b->status != OPCOST_STATUS_OK || n->status != OPCOST_STATUS_OK) {
        p->verdict = "not-timed";
        return;
    }
    const int kb = p->rb->nreps[p->ib], kn = p->rn->nreps[p->in];
    if (kb < MIN_REPS || kn < MIN_REPS) {
        p->verdict = "too-few-reps"; /* no claim */
        return;
    }
    opcost_welch w;
    if (opcost_welch_log(p->rb->reps[p->ib], (size_t)kb, p->rn->reps[p->in],
                         (size_t)kn, &w)) {
        p->verdict = "too-few-reps";
        return;
    }
    p->ratio = w.ratio;
    p->p = w.p;
    p->se = w.se;
    p->df = w.df;
}

static void decide(pair *p, size_t n, double alpha, double threshold)
{
    double *ps = malloc((n ? n : 1) * sizeof *ps);
    double *logs = malloc((n ? n : 1) * sizeof *logs);
    if (!ps || !logs) {
        free(ps);
        free(logs);
        return;
    }
    size_t nl = 0;
    for (size_t i = 0; i < n; ++i)
        if (!isnan(p[i].p))
            logs[nl++] = log(p[i].ratio);
    const double sigma = opcost_between_run_sigma(logs, nl);
    for (size_t i = 0; i < n; ++i) {
        if (!isnan(p[i].p))
            p[i].p = opcost_p_with_run_noise(log(p[i].ratio), p[i].se, p[i].df,
                                             sigma);
        ps[i] = p[i].p;
    }
    free(logs);
    opcost_holm(ps, n);
    for (size_t i = 0; i < n; ++i) {
        p[i].p_holm = ps[i];
        if (isnan(p[i].p))
            continue;
        const int sig = p[i].p_holm < alpha;
        if (sig && p[i].ratio >= 1 + threshold)
            p[i].verdict = "slower";
        else if (sig && p[i].ratio <= 1 / (1 + threshold))
            p[i].verdict = "faster";
        else
            p[i].verdict = "same";
    }
    free(ps);
}

/* ---- per-distribution gating */

typedef struct group {
    const opcost_result *key;
    double *eb, *en; /* per repetition: expected cost per call */
    int ok;
    double base_us, new_us;
    double log_ratio, se, df;
} group;

static int same_group(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->distribution, b->distribution) && !strcmp(a->op, b->op) &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->layout, b->layout) &&
           !strcmp(a->path, b->path) && !strcmp(a->variant, b->variant);
}

/* sum freq * x / sum freq over the group's pairs, x per repetition r (or
 * the row medians for r < 0); NAN unless every pair is testable. */
static double expected(const pair *p, size_t n, const opcost_result *key,
                       int side, int r)
{
    double fx = 0, f = 0;
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *row = side ? p[i].new_ : p[i].base;
        if (!row || !same_group(row, key))
            continue;
        const run *rr = side ? p[i].rn : p[i].rb;
        const size_t ix = side ? p[i].in : p[i].ib;
        const opcost_result *other = side ? p[i].base : p[i].new_;
        if (!other || row->status != OPCOST_STATUS_OK)
            return NAN;
        double x = row->median_us;
        if (r >= 0) {
            if (rr->nreps[ix] <= r)
                return NAN;
            x = rr->reps[ix][r];
        }
        const double freq = atof(row->freq);
        fx += freq * x;
        f += freq;
    }
    return f > 0 ? fx / f : NAN;
}

static int gate(pair *p, size_t n, double alpha, double threshold,
                const char *gates_out, FILE *out)
{
    group *g = calloc(n ? n : 1, sizeof *g);
    size_t ng = 0;
    if (!g)
        return 2;
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *k = p[i].base ? p[i].base : p[i].new_;
        int seen = 0;
        for (size_t j = 0; j < ng && !seen; ++j)
            seen = same_group(g[j].key, k);
        if (!seen)
            g[ng++].key = k;
    }
    double *ps = malloc((ng ? ng : 1) * sizeof *ps);
    double eb[64], en[64];
    for (size_t j = 0; j < ng; ++j) {
        int kb = 0, kn = 0;
        for (int r = 0; r < 64; ++r) {
            const double b = expected(p, n, g[j].key, 0, r);
            const double e = expected(p, n, g[j].key, 1, r);
            if (!isnan(b))
                eb[kb++] = b;
            if (!isnan(e))
                en[kn++] = e;
        }
        g[j].base_us = expected(p, n, g[j].key, 0, -1);
        g[j].new_us = expected(p, n, g[j].key, 1, -1);
        opcost_welch w;
        ps[j] = NAN;
        if (kb >= MIN_REPS && kn >= MIN_REPS &&
            !opcost_welch_log(eb, (size_t)kb, en, (size_t)kn, &w)) {
            ps[j] = w.p;
            g[j].se = w.se;
            g[j].df = w.df;
            g[j].log_ratio = log(w.ratio);
            g[j].ok = 1;
        }
    }
    /* widen each group's variance by the run-to-run noise of the groups */
    double *logs = malloc((ng ? ng : 1) * sizeof *logs);
    size_t nl = 0;
    for (size_t j = 0; logs && j < ng; ++j)
        if (g[j].ok)
            logs[nl++] = g[j].log_ratio;
    const double sigma = logs ? opcost_between_run_sigma(logs, nl) : 0;
    free(logs);
    for (size_t j = 0; j < ng; ++j)
        if (g[j].ok)
            ps[j] = opcost_p_with_run_noise(g[j].log_ratio, g[j].se, g[j].df,
                                            sigma);
    double *adj = malloc((ng ? ng : 1) * sizeof *adj);
    memcpy(adj, ps, (ng ? ng : 1) * sizeof *adj);
    opcost_holm(adj, ng);
    FILE *gf = NULL;
    if (gates_out) {
        FILE *probe = fopen(gates_out, "r");
        const int fresh = !probe;
        if (probe)
            fclose(probe);
        gf = fopen(gates_out, "a");
        if (gf && fresh)
            fprintf(gf, "run_id,base_run_id,distribution,op,dtype,layout,"
                        "path,variant,base_us,new_us,ratio,p_holm,"
                        "regression\n");
    }
    int regressions = 0;
    double worst = 0, worst_p = NAN;
    fprintf(out,
            "\nGate: expected cost per call per distribution (%zu "
            "groups; Welch on per-repetition values, run-to-run sigma %.3f "
            "in log, Holm-corrected)\n",
            ng, sigma);
    for (size_t j = 0; j < ng; ++j) {
        const double ratio = g[j].new_us / g[j].base_us;
        const int reg = g[j].ok && adj[j] < alpha && ratio >= 1 + threshold;
        regressions += reg;
        if (g[j].ok && ratio > worst) {
            worst = ratio;
            worst_p = adj[j];
        }
        if (reg || !g[j].ok)
            fprintf(out,
                    "  %-11s %s %s %s %s %s [%s]: %.2f -> %.2f us "
                    "(x%.3f, p_holm %.2g)\n",
                    reg ? "REGRESSION" : "no-claim", g[j].key->distribution,
                    g[j].key->op, g[j].key->dtype, g[j].key->layout,
                    g[j].key->path, g[j].key->variant, g[j].base_us,
                    g[j].new_us, ratio, adj[j]);
        if (gf) {
            const opcost_result *k = g[j].key;
            const char *new_id = "", *base_id = "";
            for (size_t i = 0; i < n; ++i) {
                if (p[i].new_)
                    new_id = p[i].new_->run_id;
                if (p[i].base)
                    base_id = p[i].base->run_id;
            }
            fprintf(gf, "%s,%s,%s,%s,%s,%s,%s,%s,%.6g,%.6g,%.6g,%.6g,%d\n",
                    new_id, base_id, k->distribution, k->op, k->dtype,
                    k->layout, k->path, k->variant, g[j].base_us, g[j].new_us,
                    ratio, adj[j], reg);
        }
    }
    fprintf(out,
            "  largest gated ratio: x%.3f (Holm-corrected p %.3g); %d "
            "regression%s\n",
            worst, worst_p, regressions, regressions == 1 ? "" : "s");
    if (gf)
        fclose(gf);
    free(ps);
    free(adj);
    free(g);
    return regressions ? 1 : 0;
}

/* ---- output */

static int write_csv(const char *path, const pair *p, size_t n, char *err,
                     size_t len)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        snprintf(err, len, "--csv: cannot write '%.900s'", path);
        return -1;
    }
    fprintf(f, "distribution,op,B,N,dtype,weight_dtype,layout,path,"
               "base_variant,new_variant,device,threads,cache_state,"
               "base_median_us,new_median_us,ratio,p_value,p_holm,verdict\n");
    for (size_t i = 0; i < n; ++i) {
        const opcost_result *k = p[i].base ? p[i].base : p[i].new_;
        fprintf(f, "%s,%s,%lld,%lld,%s,%s,%s,%s,%s,%s,%s,%lld,%s,",
                k->distribution, k->op, (long long)k->B, (long long)k->N,
                k->dtype, k->weight_dtype, k->layout, k->path,
                p[i].base ? p[i].base->variant : "",
                p[i].new_ ? p[i].new_->variant : "", k->device,
                (long long)k->threads, opcost_cache_state_name(k->cache_state));
        const double v[] = {p[i].base ? p[i].base->median_us : NAN,
                            p[i].new_ ? p[i].new_->median_us : NAN, p[i].ratio,
                            p[i].p, p[i].p_holm};
        for (int j = 0; j < 5; ++j)
            if (isnan(v[j]))
                fputc(',', f);
            else
                fprintf(f, "%.6g,", v[j]);
        fprintf(f, "%s\n", p[i].verdict);
    }
    if (fclose(f) || rename(tmp, path)) {
        remove(tmp);
        snprintf(err, len, "--csv: cannot write '%.900s'", path);
        return -1;
    }
    return 0;
}

static void report(FILE *out, const pair *p, size_t n, double alpha,
                   double threshold)
{
    int count[8] = {0};
    const char *names[] = {"slower",    "faster",    "same",    "too-few-reps",
                           "not-timed", "only-base", "only-new"};
    double worst = 0, worst_p = NAN;
    const pair *worst_pair = NULL;
    for (size_t i = 0; i < n; ++i) {
        for (int k = 0; k < 7; ++k)
            if (!strcmp(p[i].verdict, names[k]))
                ++count[k];
        if (!isnan(p[i].p_holm) && p[i].ratio > worst) {
            worst = p[i].ratio;
            worst_p = p[i].p_holm;
            worst_pair = &p[i];
        }
    }
    fprintf(out,
            "%zu pairs: %d slower, %d faster, %d same, %d too few "
            "repetitions (no claim), %d not timed, %d only in base, %d "
            "only in new (threshold %.0f%%, alpha %.2g, Holm over %d "
            "tests)\n",
            n, count[0], count[1], count[2], count[3], count[4], count[5],
            count[6], threshold * 100, alpha, count[0] + count[1] + count[2]);
    if (worst_pair) {
        const opcost_result *k = worst_pair->new_;
        fprintf(out,
                "largest ratio: x%.3f (Holm-corrected p %.3g) at %s %s "
                "B=%lld N=%lld %s %s %s\n",
                worst, worst_p, k->path, k->op, (long long)k->B,
                (long long)k->N, k->dtype, k->layout, k->variant);
    }
    for (size_t i = 0; i < n; ++i) {
        const char *v = p[i].verdict;
        if (strcmp(v, "slower") && strcmp(v, "faster") &&
            strcmp(v, "only-base") && strcmp(v, "only-new"))
            continue;
        const opcost_result *k = p[i].base ? p[i].base : p[i].new_;
        fprintf(out, "  %-9s %s %s %s B=%lld N=%lld %s %s [%s]", v,
                k->distribution, k->path, k->op, (long long)k->B,
                (long long)k->N, k->dtype, k->layout, k->variant);
        if (!isnan(p[i].p_holm))
            fprintf(out, ": %.2f -> %.2f us (x%.3f, p_holm %.2g)",
                    p[i].base->median_us, p[i].new_->median_us, p[i].ratio,
                    p[i].p_holm);
        fputc('\n', out);
    }
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: opcost compare [options] BASE.csv NEW.csv\n"
            "       opcost compare [options] --variants A,B RUN.csv\n"
            "Joins rows on op, B, N, dtype, weight_dtype, layout, path, "
            "variant, device,\nthreads and cache_state; tests each pair on "
            "its per-repetition medians (from\nthe .samples.csv sidecar): "
            "Welch's t-test on their logarithms, Holm-corrected\nacross "
            "pairs. A change is claimed only when significant and beyond "
            "the\nthreshold; fewer than 5 repetitions a side: no claim.\n"
            "  --threshold X   smallest change reported (default 0.05 = 5%%)\n"
            "  --alpha X       significance level after Holm (default 0.05)\n"
            "  --variants A,B  compare kernel variant B against A within RUN\n"
            "  --gate          gate on each distribution's weighted expected\n"
            "                  cost per call (rows reported, not gated)\n"
            "  --gates-out F   append the gate's verdicts to F (CSV)\n"
            "  --csv FILE      write every pair's verdict as CSV\n"
            "  --force         compare runs from different hosts, CPUs, torch\n"
            "                  versions or devices\n"
            "Exit status: 0 no significant regression, 1 regression, 2 bad "
            "input.\n");
}

int opcost_compare_main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"threshold", required_argument, NULL, 't'},
        {"alpha", required_argument, NULL, 'a'},
        {"variants", required_argument, NULL, 'v'},
        {"gate", no_argument, NULL, 'g'},
        {"gates-out", required_argument, NULL, 'G'},
        {"csv", required_argument, NULL, 'c'},
        {"force", no_argument, NULL, 'f'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    double threshold = 0.05, alpha = 0.05;
    const char *variants = NULL, *csv = NULL, *gates_out = NULL;
    int force = 0, gated = 0, ch;
    optind = 1;
    opterr = 0;
    while ((ch = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        char *end;
        switch (ch) {
        case 't':
            threshold = strtod(optarg, &end);
            if (*end || !(threshold >= 0 && threshold < 10)) {
                fprintf(stderr,
                        "opcost compare: --threshold: must be a "
                        "fraction in 0..10, got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'a':
            alpha = strtod(optarg, &end);
            if (*end || !(alpha > 0 && alpha < 1)) {
                fprintf(stderr,
                        "opcost compare: --alpha: must be in (0, 1), "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            break;
        case 'v': variants = optarg; break;
        case 'g': gated = 1; break;
        case 'G': gates_out = optarg; break;
        case 'c': csv = optarg; break;
        case 'f': force = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            fprintf(stderr,
                    "opcost compare: unknown or incomplete option "
                    "'%s'\n",
                    argv[optind - 1]);
            usage(stderr);
            return 2;
        }
    }
    const int nfiles = argc - optind;
    char va[128] = "", vb[128] = "";
    if (variants) {
        const char *comma = strchr(variants, ',');
        if (!comma || comma == variants || !comma[1] ||
            strchr(comma + 1, ',') || (size_t)(comma - variants) >= sizeof va) {
            fprintf(stderr,
                    "opcost compare: --variants: must be two "
                    "variant names A,B, got '%s'\n",
                    variants);
            return 2;
        }
        snprintf(va, sizeof va, "%.*s", (int)(comma - variants), variants);
        snprintf(vb, sizeof vb, "%s", comma + 1);
    }
    if (nfiles != (variants ? 1 : 2)) {
        fprintf(stderr, "opcost compare: expected %s, got %d file%s\n",
                variants ? "one RUN.csv with --variants" : "BASE.csv NEW.csv",
                nfiles, nfiles == 1 ? "" : "s");
        return 2;
    }
    char err[1024];
    run a, b;
    if (load(&a, argv[optind], err, sizeof err)) {
        fprintf(stderr, "opcost compare: %s\n", err);
        return 2;
    }
    if (!variants && load(&b, argv[optind + 1], err, sizeof err)) {
        fprintf(stderr, "opcost compare: %s\n", err);
        unload(&a);
        return 2;
    }
    const run *rb = &a, *rn = variants ? &a : &b;
    if (!variants && !force && foreign(rb, rn, err, sizeof err)) {
        fprintf(stderr,
                "opcost compare: refusing to compare: %s (use "
                "--force)\n",
                err);
        unload(&a);
        unload(&b);
        return 2;
    }
    /* pair rows: the k-th base row of a configuration with the k-th new */
    pair *p = calloc(rb->n + rn->n + 1, sizeof *p);
    char *used = calloc(rn->n + 1, 1);
    size_t np = 0;
    for (size_t i = 0; i < rb->n; ++i) {
        const opcost_result *x = &rb->rows[i];
        if (variants && (strcmp(x->path, "kernel") || strcmp(x->variant, va)))
            continue;
        pair *q = &p[np++];
        q->base = x;
        q->rb = rb;
        q->rn = rn;
        q->ib = i;
        for (size_t j = 0; j < rn->n; ++j) {
            const opcost_result *y = &rn->rows[j];
            if (used[j] || (variants && strcmp(y->variant, vb)))
                continue;
            if (same_config(x, y, !variants) &&
                (!variants || !strcmp(y->path, "kernel"))) {
                used[j] = 1;
                q->new_ = y;
                q->in = j;
                break;
            }
        }
    }
    for (size_t j = 0; j < rn->n; ++j) {
        const opcost_result *y = &rn->rows[j];
        if (used[j] ||
            (variants && (strcmp(y->path, "kernel") || strcmp(y->variant, vb))))
            continue;
        pair *q = &p[np++];
        q->new_ = y;
        q->rb = rb;
        q->rn = rn;
        q->in = j;
    }
    if (variants && np == 0) {
        fprintf(stderr,
                "opcost compare: --variants: %s has no kernel rows "
                "of variant '%s' or '%s' (run with --variants %s,%s)\n",
                argv[optind], va, vb, va, vb);
        free(p);
        free(used);
        unload(&a);
        return 2;
    }
    for (size_t i = 0; i < np; ++i)
        test_pair(&p[i]);
    decide(p, np, alpha, threshold);
    if (variants)
        printf("opcost compare: kernel variant %s against %s in %s\n", vb, va,
               argv[optind]);
    else
        printf("opcost compare: %s against %s\n", argv[optind + 1],
               argv[optind]);
    report(stdout, p, np, alpha, threshold);
    int rc = 0;
    for (size_t i = 0; i < np && !gated; ++i)
        if (!strcmp(p[i].verdict, "slower"))
            rc = 1;
    if (gated)
        rc = gate(p, np, alpha, threshold, gates_out, stdout);
    if (csv && write_csv(csv, p, np, err, sizeof err)) {
        fprintf(stderr, "opcost compare: %s\n", err);
        rc = 2;
    }
    free(p);
    free(used);
    unload(&a);
    if (!variants)
        unload(&b);
    return rc;
}
