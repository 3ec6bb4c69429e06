/* `opcost plot` end to end on synthetic runs: every kind renders a PNG and
 * an SVG headless, and the points each script plots (read back from its
 * `set table` output, --table) are the ones the rows imply; bad input
 * exits 2 naming the argument, a missing gnuplot exits 1. */
#define _POSIX_C_SOURCE 200809L
#include "c_samples.h"
#include "c_tempdir.h"
#include "plot.h"
#include "results_csv.h"

#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *dir; /* c_tempdir() */

/* ---- Synthetic rows. */

static opcost_result make(const char *run, const char *ts, const char *dist,
                          int64_t B, int64_t N, const char *dtype,
                          const char *layout, const char *path,
                          const char *variant, double median)
{
    opcost_result r;
    opcost_result_init(&r);
    snprintf(r.run_id, sizeof r.run_id, "%s", run);
    snprintf(r.timestamp_utc, sizeof r.timestamp_utc, "%s", ts);
    snprintf(r.git_sha, sizeof r.git_sha, "0123456789ab");
    snprintf(r.host, sizeof r.host, "test");
    snprintf(r.cpu, sizeof r.cpu, "Test CPU");
    snprintf(r.torch_version, sizeof r.torch_version, "2.0.0");
    snprintf(r.device, sizeof r.device, "cpu");
    r.threads = 2;
    snprintf(r.distribution, sizeof r.distribution, "%s", dist);
    snprintf(r.op, sizeof r.op, "fused_add_rms_norm");
    r.B = B;
    r.N = N;
    snprintf(r.dtype, sizeof r.dtype, "%s", dtype);
    snprintf(r.weight_dtype, sizeof r.weight_dtype, "%s", dtype);
    snprintf(r.layout, sizeof r.layout, "%s", layout);
    snprintf(r.freq, sizeof r.freq, "1");
    snprintf(r.path, sizeof r.path, "%s", path);
    snprintf(r.variant, sizeof r.variant, "%s", variant);
    r.status = OPCOST_STATUS_OK;
    r.reps = 3;
    r.n_samples = 9;
    r.median_us = r.min_us = r.p90_us = r.mean_us = median;
    r.kernel_us = median;
    r.conversion_us = r.launch_us = r.dispatch_us = r.idle_us = 0;
    r.bytes = B * N * 6;
    r.ceiling_gbps = 50;
    r.gbps = (double)r.bytes / median / 1e3;
    r.frac_of_peak = r.gbps / r.ceiling_gbps;
    return r;
}

#define RUN "20260101T000000Z-test"
#define TS "2026-01-01T00:00:00Z"

/* The main synthetic run: panel bfloat16 contiguous (B = 1, 8, 64 at
 * N = 4096: x is B) with paths kernel and native and kernel variants
 * cpu_strided and cpu_fast_avx2; panel float32 transposed (B = 1, N =
 * 1024 and 4096: x is N) with kernel and a wrong native row. */
static size_t synthetic(opcost_result *rows)
{
    size_t n = 0;
    const int64_t Bs[3] = {1, 8, 64};
    const double kernel[3] = {3, 10, 50}, native[3] = {5, 20, 100};
    for (int i = 0; i < 3; ++i) {
        rows[n++] = make(RUN, TS, "synth", Bs[i], 4096, "bfloat16",
                         "contiguous", "kernel", "auto", kernel[i]);
        opcost_result *r = &rows[n++];
        *r = make(RUN, TS, "synth", Bs[i], 4096, "bfloat16", "contiguous",
                  "native", "auto", native[i]);
        r->kernel_us = kernel[i];
        r->other_kernel_us = i == 1 ? 3 : 0;
        r->conversion_us = i == 1 ? 2 : 0;
        r->dispatch_us =
            native[i] - kernel[i] - r->other_kernel_us - r->conversion_us;
        rows[n++] = make(RUN, TS, "synth", Bs[i], 4096, "bfloat16",
                         "contiguous", "kernel", "cpu_strided", 2 * kernel[i]);
        rows[n++] = make(RUN, TS, "synth", Bs[i], 4096, "bfloat16",
                         "contiguous", "kernel", "cpu_fast_avx2", kernel[i]);
    }
    rows[n++] = make(RUN, TS, "synth", 1, 1024, "float32", "transposed",
                     "kernel", "auto", 2);
    rows[n++] = make(RUN, TS, "synth", 1, 4096, "float32", "transposed",
                     "kernel", "auto", 7);
    opcost_result *w = &rows[n++];
    *w = make(RUN, TS, "synth", 1, 4096, "float32", "transposed", "native",
              "auto", 1000);
    w->status = OPCOST_STATUS_WRONG;
    return n;
}

static void write_csv(const char *path, const opcost_result *rows, size_t n)
{
    char err[1024];
    if (opcost_results_write(path, rows, n, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
}

/* Sidecar: per row, 3 repetitions of 3 equal samples each; the
 * cpu_fast_avx2 row at B = 1 has repetition medians 2.8, 3.0, 3.2, every
 * other row its median thrice. */
static void write_samples(const char *csv, const opcost_result *rows, size_t n)
{
    opcost_sample s[512];
    size_t ns = 0;
    for (size_t i = 0; i < n; ++i) {
        const int spread =
            !strcmp(rows[i].variant, "cpu_fast_avx2") && rows[i].B == 1;
        for (int rep = 0; rep < 3; ++rep)
            for (int k = 0; k < 3; ++k)
                s[ns++] = (opcost_sample){(int64_t)i, rep, k,
                                          spread ? 2.8 + 0.2 * rep
                                                 : rows[i].median_us,
                                          OPCOST_INT_NA};
    }
    char err[1024];
    if (opcost_samples_write(csv, rows, n, s, ns, err, sizeof err)) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
}

/* ---- Running the command. */

/* opcost_plot_main on a NULL-terminated argument list, stderr captured
 * into errbuf. */
static int plot(char *errbuf, size_t errlen, ...)
{
    char *argv[32];
    int argc = 0;
    va_list ap;
    va_start(ap, errlen);
    argv[argc++] = "plot";
    for (char *a; argc < 31 && (a = va_arg(ap, char *));)
        argv[argc++] = a;
    va_end(ap);
    argv[argc] = NULL;
    char path[2048];
    snprintf(path, sizeof path, "%s/stderr.txt", dir);
    fflush(stderr);
    const int saved = dup(2);
    const int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    dup2(fd, 2);
    close(fd);
    const int rc = opcost_plot_main(argc, argv);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    FILE *f = fopen(path, "r");
    const size_t got = f ? fread(errbuf, 1, errlen - 1, f) : 0;
    errbuf[got] = '\0';
    if (f)
        fclose(f);
    return rc;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Both images exist, are non-empty and look like what they claim. */
static void expect_images(const char *out, const char *stem)
{
    char path[2048], head[8] = "";
    snprintf(path, sizeof path, "%s/%s.png", out, stem);
    C_EXPECT(file_size(path) > 100, "%s: missing or empty", path);
    FILE *f = fopen(path, "rb");
    if (f) {
        C_EXPECT(fread(head, 1, 8, f) == 8 && !memcmp(head, "\x89PNG", 4),
                 "%s is not a PNG", path);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/%s.svg", out, stem);
    C_EXPECT(file_size(path) > 100, "%s: missing or empty", path);
}

/* ---- Reading gnuplot's table output. */

typedef struct curve {
    char title[128];
    double v[64][6]; /* per point: x y and the style's other columns */
    int nv[64];      /* numbers on that line */
    int n;
} curve;

typedef struct table {
    curve c[64];
    int n;
} table;

/* Curves in order; a point line is numbers then the in/out flag. */
static int read_table(const char *path, table *t)
{
    memset(t, 0, sizeof *t);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[1024];
    curve *c = NULL;
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "# Curve ", 8) && strstr(line, " of ") &&
            t->n < 64) {
            c = &t->c[t->n++];
            continue;
        }
        const char *title = "# Curve title: \"";
        if (c && !strncmp(line, title, strlen(title))) {
            snprintf(c->title, sizeof c->title, "%.127s", line + strlen(title));
            char *q = strrchr(c->title, '"');
            if (q)
                *q = '\0';
            continue;
        }
        if (!c || line[0] == '#' || c->n >= 64)
            continue;
        char *p = line, *end;
        int k = 0;
        for (double x; k < 6 && (x = strtod(p, &end), end != p); p = end)
            c->v[c->n][k++] = x;
        if (k >= 2)
            c->nv[c->n++] = k;
    }
    fclose(f);
    return 0;
}

/* The occurrence-th curve (0-based) titled title, or NULL. */
static const curve *find(const table *t, const char *title, int occurrence)
{
    for (int i = 0; i < t->n; ++i)
        if (!strcmp(t->c[i].title, title) && occurrence-- == 0)
            return &t->c[i];
    return NULL;
}

static int near(double a, double b)
{
    return fabs(a - b) <= 1e-5 * fmax(1, fabs(b));
}

/* Curve c has exactly these (x, y) points, in order. */
static void expect_xy(const curve *c, const char *what, const double *xy, int n)
{
    C_EXPECT(c != NULL, "%s: no such curve", what);
    if (!c)
        return;
    C_EXPECT(c->n == n, "%s: %d points, want %d", what, c->n, n);
    for (int i = 0; i < n && i < c->n; ++i)
        C_EXPECT(near(c->v[i][0], xy[2 * i]) && near(c->v[i][1], xy[2 * i + 1]),
                 "%s point %d: (%g, %g), want (%g, %g)", what, i, c->v[i][0],
                 c->v[i][1], xy[2 * i], xy[2 * i + 1]);
}

static void load_table(const char *out, const char *stem, table *t)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s.table", out, stem);
    C_EXPECT(read_table(path, t) == 0, "%s: missing", path);
}

/* ---- The kinds. */

static void test_run_kinds(void)
{
    static opcost_result rows[64];
    const size_t n = synthetic(rows);
    char csv[2048], out[2048], err[8192];
    snprintf(csv, sizeof csv, "%s/run.csv", dir);
    /* an output path gnuplot must be given quoted right */
    snprintf(out, sizeof out, "%s/plots; it's here", dir);
    write_csv(csv, rows, n);
    write_samples(csv, rows, n);
    char hist[2048];
    snprintf(hist, sizeof hist, "%s/no-history", dir);
    int rc = plot(err, sizeof err, csv, "--out", out, "--table", "--history",
                  hist, (char *)NULL);
    C_EXPECT(rc == 0, "plot exited %d: %s", rc, err);

    const char *stems[] = {"latency-synth", "attribution", "bandwidth",
                           "variants-synth"};
    for (size_t i = 0; i < 4; ++i)
        expect_images(out, stems[i]);

    static table t;
    /* latency: panel 1 (bfloat16 contiguous) x = B; panel 2 (float32
     * transposed) x = N, B constant; the wrong native row is not drawn */
    load_table(out, "latency-synth", &t);
    const double k1[] = {1, 3, 8, 10, 64, 50}, n1[] = {1, 5, 8, 20, 64, 100};
    const double s1[] = {1, 6, 8, 20, 64, 100};
    const double k2[] = {1024, 2, 4096, 7};
    expect_xy(find(&t, "kernel", 0), "latency kernel panel 1", k1, 3);
    expect_xy(find(&t, "native", 0), "latency native panel 1", n1, 3);
    expect_xy(find(&t, "kernel[cpu_strided]", 0), "latency strided", s1, 3);
    expect_xy(find(&t, "kernel", 1), "latency kernel panel 2 (x = N)", k2, 2);
    C_EXPECT(find(&t, "native", 1) == NULL, "the wrong row was drawn");

    /* attribution: one panel per B (1, 8, 64); bar 1 (native) at B = 8 is
     * kernel [0, 10], other kernels [10, 13], conversion [13, 15], dispatch
     * [15, 20] */
    load_table(out, "attribution", &t);
    const curve *kc = find(&t, "kernel", 1), *cc = find(&t, "conversion", 1);
    const curve *oc = find(&t, "other-kernels", 1);
    const curve *dc = find(&t, "dispatch", 1);
    C_EXPECT(t.n == 18, "attribution: %d curves, want 3 panels x 6", t.n);
    C_EXPECT(kc && kc->n == 4 && near(kc->v[1][0], 1) && near(kc->v[1][4], 0) &&
                 near(kc->v[1][5], 10),
             "attribution: native's kernel segment at B = 8");
    C_EXPECT(oc && oc->n == 4 && near(oc->v[1][4], 10) && near(oc->v[1][5], 13),
             "attribution: native's other-kernels segment at B = 8");
    C_EXPECT(cc && cc->n == 4 && near(cc->v[1][4], 13) && near(cc->v[1][5], 15),
             "attribution: native's conversion segment at B = 8");
    C_EXPECT(dc && dc->n == 4 && near(dc->v[1][4], 15) && near(dc->v[1][5], 20),
             "attribution: native's dispatch segment at B = 8");

    /* bandwidth: x bytes = B N 6, y frac_of_peak = bytes / median / 1e3
     * / 50, by bytes: first float32 B = 1, N = 1024 at 2 us */
    load_table(out, "bandwidth", &t);
    const curve *bk = find(&t, "kernel", 0);
    C_EXPECT(bk && bk->n == 5, "bandwidth: kernel has %d points, want 5",
             bk ? bk->n : -1);
    if (bk)
        C_EXPECT(near(bk->v[0][0], 1024 * 6) &&
                     near(bk->v[0][1], 1024 * 6 / 2.0 / 1e3 / 50),
                 "bandwidth: kernel's first point (%g, %g)", bk->v[0][0],
                 bk->v[0][1]);

    /* variants: against cpu_strided, every ratio 0.5; the whiskers of
     * cpu_fast_avx2 at B = 1 are the bootstrap's extremes 2.8/6, 3.2/6 */
    load_table(out, "variants-synth", &t);
    const curve *va = find(&t, "cpu_fast_avx2", 0);
    const double half[] = {1, 0.5, 8, 0.5, 64, 0.5};
    expect_xy(va, "variants cpu_fast_avx2", half, 3);
    expect_xy(find(&t, "auto", 0), "variants auto", half, 3);
    if (va && va->n == 3) {
        C_EXPECT(va->nv[0] == 4 && near(va->v[0][2], 2.8 / 6) &&
                     near(va->v[0][3], 3.2 / 6),
                 "variants: bootstrap whiskers [%g, %g], want [%g, %g]",
                 va->v[0][2], va->v[0][3], 2.8 / 6, 3.2 / 6);
        C_EXPECT(near(va->v[1][2], 0.5) && near(va->v[1][3], 0.5),
                 "variants: equal repetitions give no whisker");
    }
}

/* Without a sidecar the whiskers combine the rows' ci95_rel. */
static void test_variants_without_samples(void)
{
    opcost_result rows[2] = {make(RUN, TS, "synth", 4, 4096, "bfloat16",
                                  "contiguous", "kernel", "cpu_strided", 8),
                             make(RUN, TS, "synth", 4, 4096, "bfloat16",
                                  "contiguous", "kernel", "cpu_fast_avx2", 4)};
    rows[0].ci95_rel = 0.04;
    rows[1].ci95_rel = 0.03;
    char csv[2048], out[2048], err[8192];
    snprintf(csv, sizeof csv, "%s/nosamples.csv", dir);
    snprintf(out, sizeof out, "%s/nosamples", dir);
    write_csv(csv, rows, 2);
    int rc = plot(err, sizeof err, csv, "--out", out, "--kind", "variants",
                  "--table", (char *)NULL);
    C_EXPECT(rc == 0, "plot exited %d: %s", rc, err);
    expect_images(out, "variants-synth");
    static table t;
    load_table(out, "variants-synth", &t);
    const curve *c = find(&t, "cpu_fast_avx2", 0);
    C_EXPECT(c && c->n == 1 && near(c->v[0][1], 0.5) &&
                 near(c->v[0][2], 0.5 * 0.95) && near(c->v[0][3], 0.5 * 1.05),
             "variants: ratio 0.5 with whiskers 0.5 (1 -+ 0.05)");

    /* the baseline named, and a baseline that is not there */
    rc = plot(err, sizeof err, csv, "--out", out, "--kind", "variants",
              "--baseline", "cpu_fast_avx2", "--table", (char *)NULL);
    load_table(out, "variants-synth", &t);
    c = find(&t, "cpu_strided", 0);
    C_EXPECT(rc == 0 && c && c->n == 1 && near(c->v[0][1], 2),
             "variants --baseline cpu_fast_avx2: cpu_strided at 2");
    rc = plot(err, sizeof err, csv, "--out", out, "--kind", "variants",
              "--baseline", "nope", (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, "--baseline: 'nope'"),
             "unknown baseline: rc %d, %s", rc, err);
}

/* History: two runs (files named against their time order), a group with
 * a wrong row left out, gates.csv's regression at its run's value. */
static void test_history(void)
{
    char hist[2048], path[4096], out[2048], err[8192];
    snprintf(hist, sizeof hist, "%s/history", dir);
    snprintf(out, sizeof out, "%s/history-plots", dir);
    mkdir(hist, 0777);
    const char *ids[2] = {"20260101T000000Z-a", "20260102T000000Z-b"};
    const char *ts[2] = {"2026-01-01T00:00:00Z", "2026-01-02T00:00:00Z"};
    const double big[2] = {8, 12};
    for (int r = 0; r < 2; ++r) {
        opcost_result rows[4];
        rows[0] = make(ids[r], ts[r], "synth", 1, 4096, "bfloat16",
                       "contiguous", "kernel", "auto", 4);
        rows[1] = make(ids[r], ts[r], "synth", 64, 4096, "bfloat16",
                       "contiguous", "kernel", "auto", big[r]);
        rows[2] = make(ids[r], ts[r], "synth", 1, 4096, "bfloat16",
                       "contiguous", "native", "auto", 5);
        rows[3] = make(ids[r], ts[r], "synth", 64, 4096, "bfloat16",
                       "contiguous", "native", "auto", 20);
        snprintf(rows[0].freq, sizeof rows[0].freq, "0.25");
        snprintf(rows[1].freq, sizeof rows[1].freq, "0.75");
        rows[3].status = r ? OPCOST_STATUS_WRONG : OPCOST_STATUS_OK;
        snprintf(path, sizeof path, "%s/%s.csv", hist, r ? "a-new" : "b-old");
        write_csv(path, rows, 4);
    }
    /* neither a sidecar, nor gates.csv, nor another CSV is read as a run */
    c_write_file("history/b-old.samples.csv", "not a results file\n", path,
                 sizeof path);
    c_write_file("history/a-new.compare.csv", "distribution,op,B\n", path,
                 sizeof path);
    c_write_file("history/gates.csv",
                 "run_id,base_run_id,distribution,op,dtype,layout,path,"
                 "variant,base_us,new_us,ratio,p_holm,regression\n"
                 "20260102T000000Z-b,20260101T000000Z-a,synth,"
                 "fused_add_rms_norm,bfloat16,contiguous,kernel,auto,7,10,"
                 "1.43,0.001,1\n"
                 "20260102T000000Z-b,20260101T000000Z-a,synth,"
                 "fused_add_rms_norm,bfloat16,contiguous,native,auto,16.25,"
                 "16.25,1,0.9,0\n",
                 path, sizeof path);
    int rc = plot(err, sizeof err, "--kind", "history", "--history", hist,
                  "--out", out, "--table", (char *)NULL);
    C_EXPECT(rc == 0, "history exited %d: %s", rc, err);
    expect_images(out, "history");
    static table t;
    load_table(out, "history", &t);
    /* kernel: 0.25 * 4 + 0.75 * 8 = 7, then 0.25 * 4 + 0.75 * 12 = 10;
     * native: 0.5 * 5 + 0.5 * 20 = 12.5 in the first run only */
    const double kernel[] = {0, 7, 1, 10}, native[] = {0, 12.5};
    const double reg[] = {1, 10};
    expect_xy(find(&t, "kernel", 0), "history kernel", kernel, 2);
    expect_xy(find(&t, "native", 0), "history native", native, 1);
    expect_xy(find(&t, "regression (gates.csv)", 0), "history regression", reg,
              1);

    /* a malformed gates.csv names its line and column */
    c_write_file("history/gates.csv",
                 "run_id,base_run_id,distribution,op,dtype,layout,path,"
                 "variant,base_us,new_us,ratio,p_holm,regression\n"
                 "a,b,synth,op,bfloat16,contiguous,kernel,auto,1,2,2,0.1,"
                 "maybe\n",
                 path, sizeof path);
    rc = plot(err, sizeof err, "--kind", "history", "--history", hist, "--out",
              out, (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, "gates.csv:2: regression must be 0, 1 or"),
             "bad gates.csv: rc %d, %s", rc, err);
}

/* The paired history: three A/B nights; night 1 takes commit bbbb 10 %
 * slower than aaaa, night 2 cccc 10 % faster than bbbb, night 3 (cccc
 * not accepted) dddd 5 % slower than bbbb again: each commit's index is
 * its base's times the night's ratio, 1 for aaaa; the absolute history
 * reads an A/B file through its new side. */
static void test_paired_history(void)
{
    char hist[2048], path[4096], out[2048], err[8192];
    snprintf(hist, sizeof hist, "%s/paired", dir);
    snprintf(out, sizeof out, "%s/paired-plots", dir);
    mkdir(hist, 0777);
    const char *ids[3] = {"20260201T000000Z-a", "20260202T000000Z-b",
                          "20260203T000000Z-c"};
    const char *ts[3] = {"2026-02-01T00:00:00Z", "2026-02-02T00:00:00Z",
                         "2026-02-03T00:00:00Z"};
    const char *base[3] = {"aaaa", "bbbb", "bbbb"};
    const char *head[3] = {"bbbb", "cccc", "dddd"};
    const double ratio[3] = {1.10, 0.90, 1.05};
    for (int n = 0; n < 3; ++n) {
        opcost_result rows[4];
        for (int k = 0; k < 4; ++k) {
            const int side = k / 2; /* base, then new */
            const int64_t B = k % 2 ? 64 : 1;
            const double us = (k % 2 ? 10.0 : 2.0) * (side ? ratio[n] : 1);
            rows[k] = make(ids[n], ts[n], "synth", B, 4096, "bfloat16",
                           "contiguous", "kernel", "auto", us);
            snprintf(rows[k].side, sizeof rows[k].side, "%s",
                     side ? "new" : "base");
            snprintf(rows[k].git_sha, sizeof rows[k].git_sha, "%s",
                     side ? head[n] : base[n]);
            if (side) {
                snprintf(rows[k].paired_with, sizeof rows[k].paired_with,
                         "base");
                rows[k].ratio = ratio[n];
                rows[k].ratio_ci95_rel = 0.01;
                rows[k].p_value = 0.001;
                rows[k].rounds = 100;
                snprintf(rows[k].verdict, sizeof rows[k].verdict, "%s",
                         ratio[n] > 1 ? "slower" : "faster");
            }
        }
        snprintf(path, sizeof path, "%s/nightly-%d.csv", hist, n);
        write_csv(path, rows, 4);
    }
    int rc = plot(err, sizeof err, "--kind", "paired_history", "--history",
                  hist, "--out", out, "--table", (char *)NULL);
    C_EXPECT(rc == 0, "paired_history exited %d: %s", rc, err);
    expect_images(out, "paired-history");
    static table t;
    load_table(out, "paired-history", &t);
    const double chain[] = {0, 1.10, 1, 1.10 * 0.90, 2, 1.10 * 1.05};
    expect_xy(find(&t, "kernel", 0), "paired chain", chain, 3);
    /* the absolute history: the new side's expected cost, 1:1 weights */
    rc = plot(err, sizeof err, "--kind", "history", "--history", hist, "--out",
              out, "--table", (char *)NULL);
    C_EXPECT(rc == 0, "history of A/B files exited %d: %s", rc, err);
    load_table(out, "history", &t);
    const double absolute[] = {0, 6 * 1.10, 1, 6 * 0.90, 2, 6 * 1.05};
    expect_xy(find(&t, "kernel", 0), "history of the new sides", absolute, 3);
}

static void test_bad_input(void)
{
    char err[8192], missing[2048], out[2048], csv[2048];
    snprintf(missing, sizeof missing, "%s/no such run.csv", dir);
    snprintf(out, sizeof out, "%s/bad", dir);
    int rc = plot(err, sizeof err, missing, "--out", out, (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, missing), "missing CSV: rc %d, message %s",
             rc, err);
    rc = plot(err, sizeof err, missing, "--kind", "pie", (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, "--kind: must be") && strstr(err, "pie"),
             "--kind pie: rc %d, %s", rc, err);
    rc = plot(err, sizeof err, "--out", out, (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, "RESULTS.csv"), "no CSV: rc %d, %s", rc,
             err);
    /* only history draws without a run: with another kind, the CSV is
     * still needed */
    rc = plot(err, sizeof err, "--out", out, "--kind", "history,bandwidth",
              (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, "expected one RESULTS.csv"),
             "history and bandwidth without a CSV: rc %d, %s", rc, err);
    rc = plot(err, sizeof err, missing, "--bogus", (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, "--bogus"), "--bogus: rc %d, %s", rc, err);

    /* one variant only: asked for, an error; among all kinds, skipped */
    opcost_result one = make(RUN, TS, "synth", 1, 4096, "bfloat16",
                             "contiguous", "kernel", "auto", 3);
    snprintf(csv, sizeof csv, "%s/one.csv", dir);
    write_csv(csv, &one, 1);
    rc = plot(err, sizeof err, csv, "--out", out, "--kind", "variants",
              (char *)NULL);
    C_EXPECT(rc == 2 && strstr(err, "--variants all"),
             "--kind variants on one variant: rc %d, %s", rc, err);
    char hist[2048];
    snprintf(hist, sizeof hist, "%s/none", dir);
    rc = plot(err, sizeof err, csv, "--out", out, "--history", hist,
              (char *)NULL);
    C_EXPECT(rc == 0, "all kinds on one variant: rc %d, %s", rc, err);

    /* no gnuplot on PATH */
    const char *path = getenv("PATH");
    char saved[8192];
    snprintf(saved, sizeof saved, "%s", path ? path : "");
    setenv("PATH", dir, 1);
    rc = plot(err, sizeof err, csv, "--out", out, (char *)NULL);
    C_EXPECT(rc == 1 && strstr(err, "gnuplot not found"),
             "no gnuplot: rc %d, %s", rc, err);

    /* a gnuplot that fails: its status and its words reach the user */
    char fake[4096];
    mkdir(hist, 0777);
    c_write_file("none/gnuplot", "#!/bin/sh\necho 'line 7: boom' >&2\nexit 3\n",
                 fake, sizeof fake);
    chmod(fake, 0755);
    setenv("PATH", hist, 1);
    rc = plot(err, sizeof err, csv, "--out", out, "--kind", "latency",
              (char *)NULL);
    setenv("PATH", saved, 1);
    C_EXPECT(rc == 1 && strstr(err, "latency.gp (exit status 3)") &&
                 strstr(err, "line 7: boom"),
             "failing gnuplot: rc %d, %s", rc, err);
}

/* Strings from files reach gnuplot as data (issue 28, item 1): a run_id
 * built to close the xtics list and call system() ran it when the
 * timestamp was short (the tics fell back to the run id, spliced into an
 * eval'd command); and images are not written through links planted in
 * --out (item 2): gnuplot opens them itself. */
static void test_hostile_files(void)
{
    char hist[2048], path[4096], out[2048], err[8192], pwned[2048];
    snprintf(hist, sizeof hist, "%s/hostile-history", dir);
    snprintf(out, sizeof out, "%s/hostile-plots", dir);
    snprintf(pwned, sizeof pwned, "%s/PWNED", dir);
    mkdir(hist, 0777);
    char evil[2200];
    snprintf(evil, sizeof evil,
             "r1\" 1) ; system \"touch %s\" ; set xtics (\"a", pwned);
    const char *ids[2] = {evil, "r2"};
    for (int r = 0; r < 2; ++r) {
        opcost_result rows[1];
        rows[0] = make(ids[r], "x", "synth", 1, 4096, "bfloat16", "contiguous",
                       "kernel", "auto", 4 + r);
        snprintf(path, sizeof path, "%s/run%d.csv", hist, r);
        write_csv(path, rows, 1);
    }
    const int rc = plot(err, sizeof err, "--kind", "history", "--history", hist,
                        "--out", out, (char *)NULL);
    struct stat st;
    C_EXPECT(stat(pwned, &st) != 0,
             "a run_id ran a shell command through the history plot (rc %d)",
             rc);
    C_EXPECT(rc == 0, "history of a hostile run_id: rc %d: %s", rc, err);

    /* links planted at every file the bandwidth figure makes */
    char run[2048], links[2048], victim[2048];
    snprintf(run, sizeof run, "%s/run.csv", dir);
    snprintf(links, sizeof links, "%s/planted", dir);
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    mkdir(links, 0777);
    c_write_file("victim.txt", "precious\n", path, sizeof path);
    const char *ext[] = {".dat", ".png", ".svg"};
    for (int i = 0; i < 3; ++i) {
        snprintf(path, sizeof path, "%s/bandwidth%s", links, ext[i]);
        C_CHECK(symlink(victim, path) == 0);
    }
    const int rc2 = plot(err, sizeof err, run, "--kind", "bandwidth", "--out",
                         links, (char *)NULL);
    C_EXPECT(rc2 == 0, "bandwidth into planted links: rc %d: %s", rc2, err);
    FILE *f = fopen(victim, "r");
    char got[64] = "";
    if (f) {
        fgets(got, sizeof got, f);
        fclose(f);
    }
    C_EXPECT(!strcmp(got, "precious\n"), "the victim now holds '%s'", got);
    for (int i = 0; i < 3; ++i) {
        snprintf(path, sizeof path, "%s/bandwidth%s", links, ext[i]);
        C_EXPECT(lstat(path, &st) == 0 && S_ISREG(st.st_mode),
                 "%s is not the figure's own file", path);
    }
}

int main(void)
{
    /* the figures need gnuplot (scripts/setup-env.sh installs it); without
     * it there is nothing to test: ctest's skip code */
    if (system("command -v gnuplot > /dev/null 2>&1") != 0) {
        printf("test_plot: skipped: no gnuplot on PATH\n");
        return 77;
    }
    dir = c_tempdir("test_plot");
    test_run_kinds();
    test_variants_without_samples();
    test_history();
    test_paired_history();
    test_bad_input();
    test_hostile_files();
    return c_report("test_plot");
}
