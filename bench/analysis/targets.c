/* `opcost targets RUN.csv...`: the CPU performance targets
 * (docs/performance.md, "Targets") evaluated on results CSVs of one
 * machine, pooled: each target as a Markdown table with the measured value, the
 * target and whether it is met. Informational (exit 0 when the files read); the
 * gate for regressions is `opcost compare --gate`.
 *
 *   bandwidth  `kernel` rows of the bandwidth shape set: GB/s and the
 *              fraction of the in-run ceiling, per thread count (>= 0.90)
 *   expected   expected cost per call over a distribution (default
 *              llama-3.1-8b-conv, cold): reference / kernel-e2e >= 3,
 *              native / kernel-e2e >= 1.5, reference-python / eager-python
 *              >= 3
 *   compile    compiled-python-reference / compiled-python per shape:
 *              >= 1.3 where the call's bytes fit the LLC (warm rows),
 *              >= 1.0 at 4x the LLC or more (cold rows)
 *   decode     B <= 64, N = 4096, contiguous, warm (a decode step's inputs
 *              were just written): eager-cpp - kernel <= 2 us,
 *              eager-python - kernel <= 10 us, each <= 1.2 x the overhead
 *              of torch.add from the same caller (torch-add-cpp or
 *              torch-add-python minus add-kernel) */
#include "targets.h"

#include "cpu_cache.h"
#include "results_csv.h"
#include "stats.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct pool {
    opcost_result *rows;
    size_t n;
    int64_t threads; /* the most threads any row ran with */
} pool;

static int usage(FILE *f)
{
    fprintf(f, "usage: opcost targets [--distribution NAME] [--llc-mib X] "
               "RUN.csv...\n"
               "Evaluates the CPU performance targets (docs/performance.md) "
               "on\nresults CSVs of one machine, pooled.\n"
               "  --distribution NAME  the distribution of the expected-cost "
               "target\n"
               "                       (default: llama-3.1-8b-conv)\n"
               "  --llc-mib X          last-level cache size for the compile "
               "target\n"
               "                       (default: detected on this machine)\n");
    return f == stderr ? 2 : 0;
}

static int same_shape(const opcost_result *a, const opcost_result *b)
{
    return !strcmp(a->op, b->op) && a->B == b->B && a->N == b->N &&
           !strcmp(a->dtype, b->dtype) && !strcmp(a->layout, b->layout) &&
           a->cache_state == b->cache_state && a->threads == b->threads;
}

/* The ok row of `path` (variant auto) for like's shape, or NULL. */
static const opcost_result *find(const pool *p, const opcost_result *like,
                                 const char *path)
{
    for (size_t i = 0; i < p->n; ++i) {
        const opcost_result *r = &p->rows[i];
        if (same_shape(r, like) && !strcmp(r->path, path) &&
            !strcmp(r->variant, "auto") && r->status == OPCOST_STATUS_OK)
            return r;
    }
    return NULL;
}

static const char *verdict(int met)
{
    return met ? "met" : "**missed**";
}

/* Whether an earlier ok row has row i's path, variant and shape (the same
 * shape in another distribution counts once). */
static int seen_before(const pool *p, size_t i)
{
    const opcost_result *r = &p->rows[i];
    for (size_t k = 0; k < i; ++k)
        if (!strcmp(p->rows[k].path, r->path) &&
            !strcmp(p->rows[k].variant, r->variant) &&
            p->rows[k].status == OPCOST_STATUS_OK && same_shape(&p->rows[k], r))
            return 1;
    return 0;
}

/* ---- bandwidth */

static void bandwidth(const pool *p)
{
    printf("### Bandwidth: the `bandwidth` set (256 MiB per call; the target "
           "on `kernel` auto, contiguous)\n\n"
           "| op | dtype | layout | threads | path, kernel | GB/s | ceiling "
           "GB/s | fraction | target 0.90 |\n|---|---|---|---|---|---|---|---|"
           "---|\n");
    int any = 0;
    for (size_t i = 0; i < p->n; ++i) {
        const opcost_result *r = &p->rows[i];
        /* `kernel` on contiguous rows (it copies other layouts to
         * contiguous first); `kernel-e2e` from a transposed layout, which
         * is the column-major kernel's */
        const int contiguous = !strcmp(r->layout, "contiguous");
        if (strcmp(r->distribution, "bandwidth") ||
            r->status != OPCOST_STATUS_OK ||
            !(contiguous ? !strcmp(r->path, "kernel")
                         : !strcmp(r->path, "kernel-e2e")))
            continue;
        any = 1;
        /* a fraction of a contended host (probe_state reduced or mixed) is
         * not the kernel's: shown, not judged */
        const int contended =
            r->probe_state[0] && strcmp(r->probe_state, "full") != 0;
        const int judged =
            contiguous && !strcmp(r->variant, "auto") && !contended;
        printf("| %s | %s | %s | %lld | %s %s | %.1f | %.1f | %.2f%s%s%s | "
               "%s |\n",
               r->op, r->dtype, r->layout, (long long)r->threads, r->path,
               contiguous ? r->variant : r->dispatch_path, r->gbps,
               r->ceiling_gbps, r->frac_of_peak, contended ? " (" : "",
               contended ? r->probe_state : "", contended ? " bandwidth)" : "",
               judged ? verdict(r->frac_of_peak >= 0.90) : "-");
    }
    if (!any)
        printf("| (no rows of the bandwidth set) |||||||||\n");
    printf("\n");
}

/* ---- expected cost */

/* sum freq * median / sum freq over the distribution's rows of `path`
 * (cold, p->threads), optionally one dtype/layout; NAN if any is not ok. */
static double expected(const pool *p, const char *dist, const char *path,
                       const char *dtype, const char *layout, int *shapes)
{
    opcost_wmean m = {0};
    int bad = 0;
    *shapes = 0;
    for (size_t i = 0; i < p->n; ++i) {
        const opcost_result *r = &p->rows[i];
        if (strcmp(r->distribution, dist) || strcmp(r->path, path) ||
            strcmp(r->variant, "auto") || r->cache_state != OPCOST_CACHE_COLD ||
            r->threads != p->threads || (dtype && strcmp(r->dtype, dtype)) ||
            (layout && strcmp(r->layout, layout)))
            continue;
        ++*shapes;
        if (r->status != OPCOST_STATUS_OK) {
            bad = 1;
            continue;
        }
        opcost_wmean_add(&m, atof(r->freq), r->median_us);
    }
    return bad ? NAN : opcost_wmean_value(&m);
}

static void expected_row(const pool *p, const char *dist, const char *dtype,
                         const char *layout)
{
    static const struct {
        const char *base, *path;
        double target;
    } ratios[] = {{"reference", "kernel-e2e", 3.0},
                  {"native", "kernel-e2e", 1.5},
                  {"reference-python", "eager-python", 3.0}};
    int shapes;
    if (dtype)
        printf("| %s %s |", dtype, layout);
    else
        printf("| all |");
    for (size_t k = 0; k < 3; ++k) {
        const double b =
            expected(p, dist, ratios[k].base, dtype, layout, &shapes);
        const double a =
            expected(p, dist, ratios[k].path, dtype, layout, &shapes);
        const double x = b / a;
        printf(" %.1f / %.1f = %.2f (%s) |", b, a, x,
               isfinite(x) ? verdict(x >= ratios[k].target) : "n/a");
    }
    printf("\n");
}

static void expected_costs(const pool *p, const char *dist)
{
    printf("### Expected cost per call over `%s` (us, cold, %lld threads)\n\n"
           "| rows | reference / kernel-e2e (>= 3) | native / kernel-e2e "
           "(>= 1.5) | reference-python / eager-python (>= 3) |\n"
           "|---|---|---|---|\n",
           dist, (long long)p->threads);
    expected_row(p, dist, NULL, NULL);
    static const char *dts[] = {"bfloat16", "float32"};
    static const char *lays[] = {"contiguous", "transposed"};
    for (int d = 0; d < 2; ++d)
        for (int l = 0; l < 2; ++l)
            expected_row(p, dist, dts[d], lays[l]);
    printf("\n");
}

/* ---- compile */

static void compile_class(const pool *p, int warm, double llc, double lo,
                          double hi, double target)
{
    double logsum = 0, worst = INFINITY;
    int shapes = 0, met = 0;
    char missed[1024] = "";
    for (size_t i = 0; i < p->n; ++i) {
        const opcost_result *r = &p->rows[i];
        if (strcmp(r->path, "compiled-python") ||
            r->status != OPCOST_STATUS_OK || r->threads != p->threads ||
            (r->cache_state == OPCOST_CACHE_WARM) != warm ||
            (double)r->bytes < lo * llc || (double)r->bytes > hi * llc)
            continue;
        const opcost_result *ref = find(p, r, "compiled-python-reference");
        if (!ref)
            continue;
        if (seen_before(p, i)) /* from another distribution */
            continue;
        const double x = ref->median_us / r->median_us;
        ++shapes;
        logsum += log(x);
        worst = x < worst ? x : worst;
        if (x >= target) {
            ++met;
        } else {
            const size_t used = strlen(missed);
            snprintf(missed + used, sizeof missed - used,
                     "%s%s B=%lld %s %s %.2f", used ? "; " : "", r->op,
                     (long long)r->B, r->dtype, r->layout, x);
        }
    }
    printf("| %s, bytes %s | %d | %d | %.2f | %.2f | %s |\n",
           warm ? "warm" : "cold", lo == 0 ? "<= LLC" : ">= 4 x LLC", shapes,
           met, shapes ? exp(logsum / shapes) : NAN, shapes ? worst : NAN,
           shapes ? (missed[0] ? missed : "none") : "(no rows)");
}

static void compile_ratios(const pool *p, double llc)
{
    printf("### Under torch.compile: compiled-python-reference / "
           "compiled-python per shape (LLC %.0f MiB)\n\n"
           "| shapes | count | at target | geomean | worst | below target "
           "(op, B, dtype, layout, ratio) |\n|---|---|---|---|---|---|\n",
           llc / 1048576.0);
    compile_class(p, 1, llc, 0, 1, 1.3);
    compile_class(p, 0, llc, 4, INFINITY, 1.0);
    printf("\nTargets: >= 1.3 where the data fits the LLC, >= 1.0 (no slower) "
           "at 4 x the LLC or more.\n\n");
}

/* ---- decode overheads */

static void decode(const pool *p)
{
    printf("### Decode-sized calls: per-call cost beyond the arithmetic (us, "
           "warm: a decode step's activations are in cache)\n\n"
           "| B | dtype | cache | eager-cpp - kernel (<= 2) | "
           "torch.add C++ | ratio (<= 1.2) | eager-python - kernel (<= 10) | "
           "torch.add Python | ratio (<= 1.2) |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
    int any = 0;
    for (size_t i = 0; i < p->n; ++i) {
        const opcost_result *k = &p->rows[i];
        if (strcmp(k->path, "kernel") || strcmp(k->variant, "auto") ||
            k->status != OPCOST_STATUS_OK || k->B > 64 || k->N != 4096 ||
            strcmp(k->layout, "contiguous") ||
            strcmp(k->op, "fused_add_rms_norm") || k->threads != p->threads ||
            k->cache_state != OPCOST_CACHE_WARM)
            continue;
        const int seen = seen_before(p, i);
        const opcost_result *cpp = find(p, k, "eager-cpp"),
                            *py = find(p, k, "eager-python"),
                            *ak = find(p, k, "add-kernel"),
                            *ac = find(p, k, "torch-add-cpp"),
                            *ap = find(p, k, "torch-add-python");
        if (seen || !cpp || !py || !ak || !ac || !ap)
            continue;
        any = 1;
        const double oc = cpp->median_us - k->median_us,
                     op = py->median_us - k->median_us,
                     tc = ac->median_us - ak->median_us,
                     tp = ap->median_us - ak->median_us;
        printf("| %lld | %s | %s | %.2f (%s) | %.2f | %.2f (%s) | %.2f (%s) | "
               "%.2f | %.2f (%s) |\n",
               (long long)k->B, k->dtype,
               opcost_cache_state_name(k->cache_state), oc, verdict(oc <= 2),
               tc, oc / tc, verdict(oc <= 1.2 * tc), op, verdict(op <= 10), tp,
               op / tp, verdict(op <= 1.2 * tp));
    }
    if (!any)
        printf("| (no shape with kernel, eager-cpp, eager-python, add-kernel, "
               "torch-add-cpp and torch-add-python rows) |||||||||\n");
    printf("\n");
}

int opcost_targets_main(int argc, char **argv)
{
    static const struct option longopts[] = {
        {"distribution", required_argument, NULL, 'd'},
        {"llc-mib", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *dist = "llama-3.1-8b-conv";
    double llc = (double)rowops_cpu_llc_bytes(NULL, 0);
    optind = 1;
    for (int c; (c = getopt_long(argc, argv, "", longopts, NULL)) != -1;) {
        if (c == 'd') {
            dist = optarg;
        } else if (c == 'l') {
            char *end;
            const double v = strtod(optarg, &end);
            if (end == optarg || *end || !(v > 0) || !isfinite(v)) {
                fprintf(stderr,
                        "opcost targets: --llc-mib: must be a number > 0, "
                        "got '%s'\n",
                        optarg);
                return 2;
            }
            llc = v * 1048576.0;
        } else if (c == 'h') {
            return usage(stdout);
        } else {
            return usage(stderr);
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "opcost targets: give at least one results CSV\n");
        return usage(stderr);
    }
    pool p = {NULL, 0, 0};
    for (int a = optind; a < argc; ++a) {
        opcost_result *rows;
        size_t n;
        char err[512];
        if (opcost_results_read(argv[a], &rows, &n, err, sizeof err)) {
            fprintf(stderr, "opcost targets: %s\n", err);
            free(p.rows);
            return 2;
        }
        opcost_result *all = realloc(p.rows, (p.n + n) * sizeof *all);
        if (!all) {
            free(rows);
            free(p.rows);
            fprintf(stderr, "opcost targets: out of memory\n");
            return 2;
        }
        memcpy(all + p.n, rows, n * sizeof *rows);
        p.rows = all;
        p.n += n;
        free(rows);
    }
    for (size_t i = 0; i < p.n; ++i)
        if (p.rows[i].threads > p.threads)
            p.threads = p.rows[i].threads;
    printf("## CPU performance targets (%zu rows from %d file%s; %lld "
           "threads unless stated)\n\n",
           p.n, argc - optind, argc - optind == 1 ? "" : "s",
           (long long)p.threads);
    bandwidth(&p);
    expected_costs(&p, dist);
    compile_ratios(&p, llc);
    decode(&p);
    free(p.rows);
    return 0;
}
