/* opcost compare on synthetic runs: identical, shifted 3 %, shifted 20 %,
 * noisy, one-sided rows, too few repetitions, foreign runs; hostile input
 * (samples of 1e308, missing, truncated, invalid or foreign sidecars,
 * outputs that cannot be written, freq 1e308); time linear in the rows;
 * and the statistics behind it against known values. */
#define _DEFAULT_SOURCE /* dup, fileno, mkfifo, mknod */
#include "ab_report.h"
#include "c_samples.h"
#include "c_tempdir.h"
#include "compare.h"
#include "report.h"
#include "report_model.h"
#include "results_csv.h"
#include "significance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h> /* makedev */
#include <time.h>
#include <unistd.h>

/* A run of `rows` points, each with `reps` repetitions of 20 samples
 * around base_us * scale: each repetition drifts by up to +-noise/2 (the
 * machine's state), each sample by +-1 %, and each row by up to
 * +-row_noise/2 (the run's state for that row); deterministic. */
/* Samples per repetition of the runs made below. */
static int samples_per_rep = 20;

static int cmp_us(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Each row's median_us (and min_us) from its samples, as a run writes
 * them: the reader refuses a median that contradicts its sidecar. */
static void set_medians(opcost_result *r, size_t nrows, const opcost_sample *s,
                        size_t ns)
{
    double *v = malloc((ns ? ns : 1) * sizeof *v);
    for (size_t i = 0; v && i < nrows; ++i) {
        size_t k = 0;
        for (size_t j = 0; j < ns; ++j)
            if (s[j].point == (int64_t)i)
                v[k++] = s[j].us;
        if (!k)
            continue;
        qsort(v, k, sizeof *v, cmp_us);
        r[i].median_us = k % 2 ? v[k / 2] : 0.5 * v[k / 2 - 1] + 0.5 * v[k / 2];
        r[i].min_us = v[0];
    }
    free(v);
}

static void make_run_rows(const char *name, int rows, int reps, double scale,
                          double noise, double row_noise, const char *torch,
                          unsigned seed, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.csv", c_tempdir("test_compare"), name);
    opcost_result *r = calloc((size_t)rows, sizeof *r);
    opcost_sample *s =
        calloc((size_t)(rows * reps * samples_per_rep), sizeof *s);
    size_t ns = 0;
    unsigned st = seed;
    for (int i = 0; i < rows; ++i) {
        opcost_result_init(&r[i]);
        snprintf(r[i].run_id, sizeof r[i].run_id, "%s", name);
        snprintf(r[i].timestamp_utc, sizeof r[i].timestamp_utc,
                 "2026-11-30T00:00:00Z");
        snprintf(r[i].host, sizeof r[i].host, "h");
        snprintf(r[i].cpu, sizeof r[i].cpu, "c");
        snprintf(r[i].torch_version, sizeof r[i].torch_version, "%s", torch);
        snprintf(r[i].device, sizeof r[i].device, "cpu");
        snprintf(r[i].distribution, sizeof r[i].distribution, "d");
        snprintf(r[i].op, sizeof r[i].op, "fused_add_rms_norm");
        snprintf(r[i].dtype, sizeof r[i].dtype, "bfloat16");
        snprintf(r[i].layout, sizeof r[i].layout, "contiguous");
        snprintf(r[i].freq, sizeof r[i].freq, "1");
        snprintf(r[i].path, sizeof r[i].path, "kernel");
        snprintf(r[i].variant, sizeof r[i].variant, "auto");
        r[i].threads = 2;
        r[i].B = 1 + i;
        r[i].N = 4096;
        r[i].reps = reps;
        r[i].cache_state = OPCOST_CACHE_COLD;
        /* this run's state for this row: the same for all its reps */
        st = st * 1103515245u + 12345u;
        const double row_shift =
            1 + row_noise * ((double)(st >> 8) / 16777216.0 - 0.5);
        for (int k = 0; k < reps; ++k) {
            st = st * 1103515245u + 12345u;
            const double drift = noise * ((double)(st >> 8) / 16777216.0 - 0.5);
            for (int j = 0; j < samples_per_rep; ++j) {
                st = st * 1103515245u + 12345u;
                const double u = (double)(st >> 8) / 16777216.0 - 0.5;
                const double us = 10.0 * (1 + i) * scale * row_shift *
                                  (1 + drift) * (1 + 0.02 * u);
                s[ns++] = (opcost_sample){i, k, j, us, OPCOST_INT_NA};
            }
        }
        r[i].n_samples = reps * samples_per_rep;
    }
    set_medians(r, (size_t)rows, s, ns);
    char err[512];
    C_EXPECT(opcost_results_write(path, r, (size_t)rows, err, sizeof err) == 0,
             "%s", err);
    C_EXPECT(opcost_samples_write(path, r, (size_t)rows, s, ns, err,
                                  sizeof err) == 0,
             "%s", err);
    free(r);
    free(s);
}

static void make_run(const char *name, int rows, int reps, double scale,
                     double noise, const char *torch, unsigned seed, char *path,
                     size_t len)
{
    make_run_rows(name, rows, reps, scale, noise, 0, torch, seed, path, len);
}

/* Rewrites path's sidecar with every sample of `point` set to us. */
static void set_point_us(const char *path, const opcost_result *rows,
                         size_t nrows, int64_t point, double us)
{
    opcost_sample *s = NULL;
    size_t n = 0;
    char err[512];
    C_EXPECT(opcost_samples_read(path, rows, nrows, &s, &n, err, sizeof err) ==
                 0,
             "%s", err);
    for (size_t i = 0; i < n; ++i)
        if (s[i].point == point)
            s[i].us = us;
    /* the row's median with them: a file opcost check accepts */
    opcost_result *r = malloc(nrows * sizeof *r);
    memcpy(r, rows, nrows * sizeof *r);
    set_medians(r, nrows, s, n);
    C_EXPECT(opcost_run_files_write(path, r, nrows, s, n, err, sizeof err) == 0,
             "%s", err);
    free(r);
    free(s);
}

/* opcost_compare_main(argv) with its stdout captured into buf. */
static int compare_captured(char **argv, int argc, char *buf, size_t len)
{
    fflush(stdout);
    FILE *f = tmpfile();
    const int saved = dup(1);
    dup2(fileno(f), 1);
    const int rc = opcost_compare_main(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    rewind(f);
    const size_t got = fread(buf, 1, len - 1, f);
    buf[got] = '\0';
    fclose(f);
    return rc;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int compare(const char *a, const char *b, const char *extra,
                   const char *csv)
{
    char *argv[8];
    int argc = 0;
    argv[argc++] = "compare";
    if (extra)
        argv[argc++] = (char *)extra;
    if (csv) {
        argv[argc++] = "--csv";
        argv[argc++] = (char *)csv;
    }
    argv[argc++] = (char *)a;
    if (b)
        argv[argc++] = (char *)b;
    return opcost_compare_main(argc, argv);
}

/* How many rows of a compare CSV have this verdict (its 19th field; the
 * synthetic runs' text has no commas). */
static int verdicts(const char *csv, const char *verdict)
{
    FILE *f = fopen(csv, "r");
    char line[2048];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *field = line;
        for (int k = 0; k < 18 && field; ++k) {
            field = strchr(field, ',');
            field = field ? field + 1 : NULL;
        }
        n += field && !strncmp(field, verdict, strlen(verdict)) &&
             (field[strlen(verdict)] == ',' || !field[strlen(verdict)]);
    }
    if (f)
        fclose(f);
    return n;
}

/* A run of `points` points with two kernel variants each, 200 rounds of one
 * sample each through a host whose speed swings 2x; variant b takes
 * `ratio` times variant a's time in the same round (the noise of each
 * sample +-3 %). with_rounds 0 writes the sidecar without its rounds, as
 * files of schema versions 1-3 hold it. */
static void make_variant_run(const char *name, int points, double ratio,
                             int with_rounds, char *path, size_t len)
{
    enum { ROUNDS = 200, REPS = 5 };
    snprintf(path, len, "%s/%s.csv", c_tempdir("test_compare"), name);
    opcost_result *r = calloc((size_t)(2 * points), sizeof *r);
    opcost_sample *s = calloc((size_t)(2 * points * ROUNDS), sizeof *s);
    size_t ns = 0;
    unsigned st = 12345u;
    for (int i = 0; i < 2 * points; ++i) {
        opcost_result_init(&r[i]);
        snprintf(r[i].run_id, sizeof r[i].run_id, "%s", name);
        snprintf(r[i].timestamp_utc, sizeof r[i].timestamp_utc,
                 "2026-12-02T00:00:00Z");
        snprintf(r[i].host, sizeof r[i].host, "h");
        snprintf(r[i].cpu, sizeof r[i].cpu, "c");
        snprintf(r[i].torch_version, sizeof r[i].torch_version, "2.15.0");
        snprintf(r[i].device, sizeof r[i].device, "cpu");
        snprintf(r[i].distribution, sizeof r[i].distribution, "d");
        snprintf(r[i].op, sizeof r[i].op, "fused_add_rms_norm");
        snprintf(r[i].dtype, sizeof r[i].dtype, "bfloat16");
        snprintf(r[i].layout, sizeof r[i].layout, "contiguous");
        snprintf(r[i].freq, sizeof r[i].freq, "1");
        snprintf(r[i].path, sizeof r[i].path, "kernel");
        snprintf(r[i].variant, sizeof r[i].variant, "%s",
                 i % 2 ? "cpu_fast_avx512" : "cpu_fast_avx2");
        r[i].threads = 2;
        r[i].B = 1 + i / 2;
        r[i].N = 4096;
        r[i].reps = REPS;
        r[i].n_samples = ROUNDS;
        r[i].cache_state = OPCOST_CACHE_COLD;
    }
    for (int i = 0; i < points; ++i)
        for (int k = 0; k < ROUNDS; ++k) {
            const double host = 1.5 + 0.5 * sin(k * 0.1 + i);
            for (int v = 0; v < 2; ++v) {
                st = st * 1103515245u + 12345u;
                const double u = (double)(st >> 8) / 16777216.0 - 0.5;
                const double us =
                    10.0 * (1 + i) * host * (v ? ratio : 1) * (1 + 0.06 * u);
                s[ns++] = (opcost_sample){2 * i + v, k * REPS / ROUNDS,
                                          k % (ROUNDS / REPS), us,
                                          with_rounds ? k : OPCOST_INT_NA};
            }
        }
    set_medians(r, (size_t)(2 * points), s, ns);
    char err[512];
    C_EXPECT(opcost_results_write(path, r, (size_t)(2 * points), err,
                                  sizeof err) == 0,
             "%s", err);
    C_EXPECT(opcost_samples_write(path, r, (size_t)(2 * points), s, ns, err,
                                  sizeof err) == 0,
             "%s", err);
    free(r);
    free(s);
}

/* compare --variants on a file with rounds pairs the two variants in them:
 * a 3 % difference under a 2x drift is seen on every point, none where
 * there is none; without the rounds (an older file) the drift hides it. */
static void paired_variants(void)
{
    char run[512], flat[512], nodiff[512], csv[512], out[16384];
    snprintf(csv, sizeof csv, "%s/paired.csv", c_tempdir("test_compare"));
    make_variant_run("paired3", 6, 1.03, 1, run, sizeof run);
    make_variant_run("flat3", 6, 1.03, 0, flat, sizeof flat);
    make_variant_run("paired0", 6, 1.00, 1, nodiff, sizeof nodiff);
    char *argv[] = {
        "compare",     "--variants", "cpu_fast_avx2,cpu_fast_avx512",
        "--threshold", "0.02",       "--csv",
        csv,           run};
    int rc = compare_captured(argv, 8, out, sizeof out);
    C_EXPECT(rc == 1 && verdicts(csv, "slower") == 6,
             "paired: 3 %% slower on every point (rc %d, %d slower)\n%s", rc,
             verdicts(csv, "slower"), out);
    C_EXPECT(strstr(out, "paired in the rounds of one run") &&
                 strstr(out, "over 200 rounds"),
             "the output says it paired:\n%s", out);
    argv[7] = nodiff;
    rc = compare_captured(argv, 8, out, sizeof out);
    C_EXPECT(rc == 0 && verdicts(csv, "same") == 6,
             "paired, no difference: same on every point (rc %d)\n%s", rc, out);
    argv[7] = flat;
    rc = compare_captured(argv, 8, out, sizeof out);
    C_EXPECT(rc == 0 && verdicts(csv, "slower") == 0,
             "without rounds: the 2x drift hides 3 %% (rc %d)\n%s", rc, out);
}

/* Hostile and careless input (issue 19: items 4, 5, 8, 16). */
static void hostile(const char *base)
{
    const char *dir = c_tempdir("test_compare");
    char huge[512], out[8192], csv[512];
    snprintf(csv, sizeof csv, "%s/hostile.csv", dir);
    /* every sample of a point 1e308 (a file opcost check accepts): a
     * segfault before (the median of two was Inf, its p-value NaN, its
     * verdict NULL); now that row is slower, its ratio printed short */
    make_run("huge", 8, 5, 1.00, 0.02, "2.15.0", 11, huge, sizeof huge);
    opcost_result *rows = NULL;
    size_t n = 0;
    char err[1024];
    C_EXPECT(opcost_results_read(huge, &rows, &n, err, sizeof err) == 0, "%s",
             err);
    set_point_us(huge, rows, n, 3, 1e308);
    free(rows);
    char *argv1[] = {"compare", "--csv", csv, (char *)base, huge};
    int rc = compare_captured(argv1, 5, out, sizeof out);
    C_EXPECT(rc == 1 && verdicts(csv, "slower") == 1,
             "samples of 1e308: rc %d, %d slower", rc, verdicts(csv, "slower"));
    C_EXPECT(strstr(out, "largest ratio: x2.5") && strstr(out, "e+306") &&
                 strlen(out) < 2000,
             "huge ratios print short:\n%s", out);
    /* the sidecar: missing, truncated at a line, a nan sample, another
     * run's: each an input error naming it, never a pass */
    char broken[512], side[600];
    make_run("broken", 8, 5, 1.00, 0.02, "2.15.0", 12, broken, sizeof broken);
    snprintf(side, sizeof side, "%s/broken.samples.csv", dir);
    char *argv2[] = {"compare", (char *)base, broken};
    remove(side);
    char errbuf[8192];
    fflush(stderr);
    FILE *ef = tmpfile();
    const int saved = dup(2);
    dup2(fileno(ef), 2);
    rc = compare_captured(argv2, 3, out, sizeof out);
    C_EXPECT(rc == 2, "missing sidecar: rc %d (want 2)", rc);
    char *argv3[] = {"compare", "--no-samples", "--csv",
                     csv,       (char *)base,   broken};
    rc = compare_captured(argv3, 6, out, sizeof out);
    C_EXPECT(rc == 0 && verdicts(csv, "too-few-reps") == 8,
             "--no-samples: medians only, no claim (rc %d)", rc);
    make_run("broken", 8, 5, 1.00, 0.02, "2.15.0", 12, broken, sizeof broken);
    FILE *f = fopen(side, "r+");
    char text[65536];
    const size_t len = f ? fread(text, 1, sizeof text - 1, f) : 0;
    text[len] = '\0';
    if (f)
        fclose(f);
    char *cut = strrchr(text, '\n');
    if (cut) { /* drop the last line */
        *cut = '\0';
        cut = strrchr(text, '\n');
        cut[1] = '\0';
    }
    f = fopen(side, "w");
    fputs(text, f);
    fclose(f);
    rc = compare_captured(argv2, 3, out, sizeof out);
    C_EXPECT(rc == 2, "truncated sidecar: rc %d (want 2)", rc);
    /* the last sample's us (its round, the last field, is empty) */
    char *lastcomma = strrchr(text, ',');
    *lastcomma = '\0';
    char *us = strrchr(text, ',');
    snprintf(us + 1, 8, "nan,\n");
    f = fopen(side, "w");
    fputs(text, f);
    fclose(f);
    rc = compare_captured(argv2, 3, out, sizeof out);
    C_EXPECT(rc == 2, "a nan sample: rc %d (want 2)", rc);
    char other_side[600];
    snprintf(other_side, sizeof other_side, "%s/base.samples.csv", dir);
    f = fopen(other_side, "r");
    FILE *g = fopen(side, "w");
    for (int c; f && g && (c = fgetc(f)) != EOF;)
        fputc(c, g);
    if (f)
        fclose(f);
    if (g)
        fclose(g);
    rc = compare_captured(argv2, 3, out, sizeof out);
    C_EXPECT(rc == 2, "another run's sidecar: rc %d (want 2)", rc);
    /* outputs: --gates-out without --gate, unwritable or special files:
     * refused before anything is read (exit 0 silently before) */
    /* special files of our own only: a broken check must never get to
     * replace the machine's /dev/full */
    char fifo[512], dev[512];
    snprintf(fifo, sizeof fifo, "%s/fifo.csv", dir);
    mkfifo(fifo, 0600);
    snprintf(dev, sizeof dev, "%s/full.csv", dir);
    const int have_dev = mknod(dev, S_IFCHR | 0600, makedev(1, 7)) == 0;
    if (!have_dev)
        printf("SKIP --csv/--gates-out on a character device: mknod needs "
               "root\n");
    char *argv4[] = {"compare", "--gates-out", csv, (char *)base, huge};
    rc = compare_captured(argv4, 5, out, sizeof out);
    C_EXPECT(rc == 2, "--gates-out without --gate: rc %d", rc);
    const char *bad_outs[] = {"/proc/g.csv", fifo, "/nonexistent/dir/g.csv",
                              dir, dev};
    for (size_t i = 0; i < sizeof bad_outs / sizeof *bad_outs - !have_dev;
         ++i) {
        char *argv5[] = {"compare",           "--gate",     "--gates-out",
                         (char *)bad_outs[i], (char *)base, huge};
        rc = compare_captured(argv5, 6, out, sizeof out);
        C_EXPECT(rc == 2 && !out[0], "--gates-out %s: rc %d, stdout '%s'",
                 bad_outs[i], rc, out);
        char *argv6[] = {"compare", "--csv", (char *)bad_outs[i], (char *)base,
                         huge};
        rc = compare_captured(argv6, 5, out, sizeof out);
        C_EXPECT(rc == 2 && !out[0], "--csv %s: rc %d", bad_outs[i], rc);
    }
    struct stat st;
    C_EXPECT(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode),
             "the FIFO is still a FIFO");
    C_EXPECT(!have_dev || (stat(dev, &st) == 0 && S_ISCHR(st.st_mode)),
             "the character device is still one");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(ef);
    const size_t got = fread(errbuf, 1, sizeof errbuf - 1, ef);
    errbuf[got] = '\0';
    fclose(ef);
    const char *want[] = {
        "broken.samples.csv: cannot open",
        "--no-samples compares the medians alone",
        "has 99 samples, its row says n_samples = 100 (a truncated or "
        "mismatched sidecar)",
        "broken.samples.csv:800:27: column us: \"nan\"",
        "column run_id: \"base\" differs",
        "--gates-out: needs --gate",
        "--gates-out: directory '/proc' is not writable",
        "fifo.csv' is a FIFO: results are written only to regular files or "
        "new paths",
        "--csv: directory '/nonexistent/dir' does not exist",
        "' is a directory"};
    for (size_t i = 0; i < sizeof want / sizeof *want; ++i)
        C_EXPECT(strstr(errbuf, want[i]), "stderr lacks '%s':\n%s", want[i],
                 errbuf);
}

/* Work linear in the rows (the pairing and grouping were quadratic: 1e6
 * rows took 299 s): 10x the rows, at most 12x the key-table slots visited
 * (a count, not a time: CI asserts no timing). The times are printed as
 * a benchmark. */
static void scaling(void)
{
    char a[512], b[512];
    double t[2];
    size_t probes[2];
    const int rows[2] = {5000, 50000};
    samples_per_rep = 1;
    for (int k = 0; k < 2; ++k) {
        make_run_rows("scale_a", rows[k], 5, 1.0, 0.02, 0, "2.15.0", 13, a,
                      sizeof a);
        make_run_rows("scale_b", rows[k], 5, 1.0, 0.02, 0, "2.15.0", 14, b,
                      sizeof b);
        const double t0 = now_s();
        const int rc = compare(a, b, "--gate", NULL);
        t[k] = now_s() - t0;
        probes[k] = opcost_compare_key_probes();
        C_EXPECT(rc == 0, "%d rows: rc %d", rows[k], rc);
    }
    samples_per_rep = 20;
    printf("compare --gate: %d rows %.3f s (%zu key probes), %d rows %.3f s "
           "(%zu)\n",
           rows[0], t[0], probes[0], rows[1], t[1], probes[1]);
    C_EXPECT(probes[0] >= (size_t)rows[0],
             "%d rows: only %zu key probes (each row is looked up)", rows[0],
             probes[0]);
    C_EXPECT(probes[1] <= 12 * probes[0],
             "10x the rows visited %.1fx the key-table slots (%zu, %zu)",
             (double)probes[1] / (double)probes[0], probes[0], probes[1]);
}

/* A contiguous auto row of the console's tests. */
static void console_row(opcost_result *r, const char *distribution,
                        const char *op, const char *dtype, const char *path,
                        const char *freq, int64_t B, double median_us)
{
    opcost_result_init(r);
    snprintf(r->distribution, sizeof r->distribution, "%s", distribution);
    snprintf(r->op, sizeof r->op, "%s", op);
    snprintf(r->dtype, sizeof r->dtype, "%s", dtype);
    snprintf(r->layout, sizeof r->layout, "contiguous");
    snprintf(r->path, sizeof r->path, "%s", path);
    snprintf(r->variant, sizeof r->variant, "auto");
    snprintf(r->freq, sizeof r->freq, "%s", freq);
    r->B = B;
    r->median_us = median_us;
}

/* What a console section printed for rows r[0..n). */
static void console_text(void (*section)(FILE *, const opcost_result *, size_t),
                         const opcost_result *r, size_t n, char *buf,
                         size_t len)
{
    FILE *f = tmpfile();
    section(f, r, n);
    rewind(f);
    const size_t got = fread(buf, 1, len - 1, f);
    buf[got] = '\0';
    fclose(f);
}

/* The run's summary: two shapes of freq 1e308 printed 0.00 us/call. */
static void summary_freq(void)
{
    opcost_result r[2];
    for (int i = 0; i < 2; ++i)
        console_row(&r[i], "d", "rms_norm_rows", "float32", "kernel", "1e308",
                    4, 100.0 * (i + 1));
    char buf[4096];
    console_text(opcost_report_summary, r, 2, buf, sizeof buf);
    C_EXPECT(strstr(buf, "150.00") && strstr(buf, "37500.00"),
             "freq 1e308: 150 us/call, 37500 ns/token expected:\n%s", buf);
}

/* The run's summary where the time budget cut a shape (every path's row
 * at it skipped, note budget:): the group's figures over the other
 * shapes, the cut said; a shape skipped for another reason still leaves
 * the path without an expected cost. */
static void summary_budget_cut(void)
{
    opcost_result r[4];
    const char *paths[2] = {"kernel", "peer-vllm"};
    for (int i = 0; i < 4; ++i)
        console_row(&r[i], "d", "fused_add_rms_norm", "float32", paths[i % 2],
                    "1", i < 2 ? 4 : 8192, 10.0 * (i + 1));
    for (int i = 2; i < 4; ++i) {
        r[i].status = OPCOST_STATUS_SKIPPED;
        r[i].median_us = NAN;
        snprintf(r[i].note, sizeof r[i].note,
                 "budget: its rows need ~18 s, and points of more weight per "
                 "second took the 123 s left of --time-budget 360");
    }
    char buf[4096];
    console_text(opcost_report_summary, r, 4, buf, sizeof buf);
    C_EXPECT(strstr(buf, "10.00") && strstr(buf, "20.00") &&
                 strstr(buf, "(1 shape; 1 cut for the budget)") &&
                 !strstr(buf, "not every shape was timed"),
             "a budget cut: the figures over the shape timed, the cut "
             "said:\n%s",
             buf);
    /* the peer skipped for its own reason at the timed shape: no figure */
    r[1].status = OPCOST_STATUS_SKIPPED;
    r[1].median_us = NAN;
    snprintf(r[1].note, sizeof r[1].note, "vLLM's CPU kernel needs N %% 8");
    console_text(opcost_report_summary, r, 4, buf, sizeof buf);
    C_EXPECT(strstr(buf, "not every shape was timed") && strstr(buf, "10.00"),
             "a shape skipped for another reason: no figure:\n%s", buf);
}

/* The model section where no norm share was measured (a GPU run: CPU
 * scopes time no kernels there): the share reads "-", never "nan%". */
static void model_share_unmeasured(void)
{
    const char *paths[2] = {"model-shipped-eager", "model-rowops-eager"};
    opcost_result r[2];
    for (int i = 0; i < 2; ++i) {
        console_row(&r[i], "llama", "fused_add_rms_norm", "bfloat16", paths[i],
                    "1", 64, 100.0 + i);
        r[i].status = OPCOST_STATUS_OK;
        r[i].norm_share = NAN;
    }
    char buf[4096];
    console_text(opcost_report_models, r, 2, buf, sizeof buf);
    C_EXPECT(strstr(buf, "  eager ") && !strstr(buf, "nan"),
             "an unmeasured share reads \"-\", not nan:\n%s", buf);
}

/* A copy of run `from` at path `name`, its rows changed by edit(rows, n)
 * (which may drop rows from the end by lowering *n), samples of dropped or
 * not-ok rows left out. */
static void derive_run(const char *from, const char *name,
                       void (*edit)(opcost_result *, size_t *), char *path,
                       size_t len)
{
    snprintf(path, len, "%s/%s.csv", c_tempdir("test_compare"), name);
    opcost_result *r = NULL;
    opcost_sample *s = NULL;
    size_t n = 0, ns = 0;
    char err[1024];
    C_EXPECT(opcost_results_read(from, &r, &n, err, sizeof err) == 0 &&
                 opcost_samples_read(from, r, n, &s, &ns, err, sizeof err) == 0,
             "%s", err);
    edit(r, &n);
    size_t k = 0;
    for (size_t i = 0; i < ns; ++i)
        if ((size_t)s[i].point < n && r[s[i].point].status == OPCOST_STATUS_OK)
            s[k++] = s[i];
    C_EXPECT(opcost_run_files_write(path, r, n, s, k, err, sizeof err) == 0,
             "%s: %s", name, err);
    free(r);
    free(s);
}

static void row_wrong(opcost_result *r, size_t *n)
{
    (void)n;
    r[2].status = OPCOST_STATUS_WRONG;
    r[2].median_us = r[2].min_us = NAN;
    r[2].n_samples = OPCOST_INT_NA;
    snprintf(r[2].note, sizeof r[2].note, "out[0] off");
}

static void rows_none(opcost_result *r, size_t *n)
{
    (void)r;
    *n = 0;
}

static void other_set(opcost_result *r, size_t *n)
{
    for (size_t i = 0; i < *n; ++i)
        snprintf(r[i].distribution, sizeof r[i].distribution, "elsewhere");
}

static void hostile_name(opcost_result *r, size_t *n)
{
    for (size_t i = 0; i < *n; ++i)
        snprintf(r[i].distribution, sizeof r[i].distribution,
                 "set,with \"quotes\"");
}

/* Fields of one RFC 4180 line (quoted fields may hold commas). */
static int csv_fields(const char *line)
{
    int n = 1, quoted = 0;
    for (const char *c = line; *c && *c != '\n'; ++c) {
        if (*c == '"')
            quoted = !quoted;
        else if (*c == ',' && !quoted)
            ++n;
    }
    return n;
}

static char *read_all(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = calloc(1, 1 << 16);
    if (f && buf)
        fread(buf, 1, (1 << 16) - 1, f);
    if (f)
        fclose(f);
    return buf;
}

/* The gate passed (exit 0, "0 regressions") when rows of NEW were wrong
 * or missing, when NEW had another shape set or no rows at all (issue 28,
 * item 5); compare --csv did not quote (item 7) and wrote through a link
 * planted at its path (item 2); outputs could be inputs (item 3). */
static void gate_broken(const char *base, const char *same)
{
    const char *dir = c_tempdir("test_compare");
    char wrong[512], none[512], other[512], onesided[512], out[8192];
    derive_run(same, "wrong", row_wrong, wrong, sizeof wrong);
    derive_run(same, "none", rows_none, none, sizeof none);
    derive_run(same, "elsewhere", other_set, other, sizeof other);
    snprintf(onesided, sizeof onesided, "%s/onesided.csv", dir);
    char *a1[] = {"compare", "--gate", (char *)base, wrong};
    int rc = compare_captured(a1, 4, out, sizeof out);
    C_EXPECT(rc == 1 && strstr(out, "BROKEN") && strstr(out, "B=3") &&
                 strstr(out, "is wrong in NEW"),
             "a row that went wrong: rc %d\n%s", rc, out);
    char *a2[] = {"compare", "--gate", (char *)base, onesided};
    rc = compare_captured(a2, 4, out, sizeof out);
    C_EXPECT(rc == 1 && strstr(out, "is missing in NEW"),
             "rows missing from NEW: rc %d\n%s", rc, out);
    char *a3[] = {"compare", "--gate", (char *)base, other};
    rc = compare_captured(a3, 4, out, sizeof out);
    C_EXPECT(rc != 0, "another shape set passed the gate:\n%s", out);
    char *a4[] = {"compare", "--gate", (char *)base, none};
    rc = compare_captured(a4, 4, out, sizeof out);
    C_EXPECT(rc != 0, "a header-only NEW passed the gate:\n%s", out);
    char *a5[] = {"compare", "--gate", none, none};
    rc = compare_captured(a5, 4, out, sizeof out);
    C_EXPECT(rc == 2 && strstr(out, "no group could be compared"),
             "two header-only files: rc %d\n%s", rc, out);
    /* gates.csv of a broken row says regression 1 */
    char gates[512];
    snprintf(gates, sizeof gates, "%s/gates.csv", dir);
    remove(gates);
    char *a6[] = {"compare", "--gate",     "--gates-out",
                  gates,     (char *)base, wrong};
    compare_captured(a6, 6, out, sizeof out);
    char *g = read_all(gates);
    C_EXPECT(g && strstr(g, ",1\n"), "gates.csv of a broken row:\n%s", g);
    free(g);

    /* --csv quotes text: a shape set named set,with "quotes" */
    char named_a[512], named_b[512], csv[512];
    derive_run(base, "named_a", hostile_name, named_a, sizeof named_a);
    derive_run(same, "named_b", hostile_name, named_b, sizeof named_b);
    snprintf(csv, sizeof csv, "%s/quoted.csv", dir);
    char *a7[] = {"compare", "--csv", csv, named_a, named_b};
    compare_captured(a7, 5, out, sizeof out);
    char *text = read_all(csv);
    int lines = 0, bad = 0;
    for (char *l = text; l && *l;
         l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
        ++lines;
        bad += csv_fields(l) != 21;
    }
    C_EXPECT(lines == 9 && !bad && strstr(text, "\"set,with \"\"quotes\"\"\""),
             "--csv: %d lines, %d not of 21 fields:\n%s", lines, bad, text);
    free(text);

    /* --csv through a link planted at its path: the victim untouched */
    char victim[512], planted[512];
    snprintf(victim, sizeof victim, "%s/victim.txt", dir);
    snprintf(planted, sizeof planted, "%s/planted.csv", dir);
    FILE *v = fopen(victim, "w");
    fputs("precious\n", v);
    fclose(v);
    remove(planted);
    C_CHECK(symlink(victim, planted) == 0);
    char *a8[] = {"compare", "--csv", planted, (char *)base, (char *)same};
    compare_captured(a8, 5, out, sizeof out);
    char *vt = read_all(victim);
    struct stat st;
    C_EXPECT(vt && !strcmp(vt, "precious\n") && lstat(planted, &st) == 0 &&
                 S_ISREG(st.st_mode),
             "--csv wrote through a planted link: victim now '%s'", vt);
    free(vt);

    /* outputs that are inputs, or each other: exit 2, inputs untouched */
    char side[600];
    snprintf(side, sizeof side, "%.*s.samples.csv", (int)strlen(base) - 4,
             base);
    char *before = read_all(same);
    char *o1[] = {"compare", "--csv", (char *)base, (char *)base, (char *)same};
    char *o2[] = {"compare", "--csv", side, (char *)base, (char *)same};
    char *o3[] = {"compare",    "--gate",     "--gates-out",
                  (char *)same, (char *)base, (char *)same};
    char *o4[] = {"compare",     "--gate", "--csv",      gates,
                  "--gates-out", gates,    (char *)base, (char *)same};
    C_EXPECT(compare_captured(o1, 5, out, sizeof out) == 2,
             "--csv equal to BASE");
    C_EXPECT(compare_captured(o2, 5, out, sizeof out) == 2,
             "--csv equal to BASE's sidecar");
    C_EXPECT(compare_captured(o3, 6, out, sizeof out) == 2,
             "--gates-out equal to NEW");
    C_EXPECT(compare_captured(o4, 8, out, sizeof out) == 2,
             "--csv equal to --gates-out");
    char *after = read_all(same);
    C_EXPECT(before && after && !strcmp(before, after), "NEW was changed");
    free(before);
    free(after);
    /* --gates-out onto a file that is no gates.csv: refused, unchanged */
    char copy[512];
    derive_run(same, "not_gates", row_wrong, copy, sizeof copy);
    before = read_all(copy);
    char *o5[] = {"compare", "--gate",     "--gates-out",
                  copy,      (char *)base, (char *)same};
    C_EXPECT(compare_captured(o5, 6, out, sizeof out) == 2,
             "--gates-out onto a results CSV");
    after = read_all(copy);
    C_EXPECT(before && after && !strcmp(before, after),
             "a results CSV got gate rows appended");
    free(before);
    free(after);
}

/* opcost ab's rows: a new row that broke (wrong where its base twin was
 * ok) is a regression: counted, its group BROKEN (before: no ratio, the
 * group `unsure`, exit 0 without --gate). */
static void ab_broken(void)
{
    opcost_result rows[4];
    for (int i = 0; i < 4; ++i) {
        opcost_result *r = &rows[i];
        opcost_result_init(r);
        snprintf(r->run_id, sizeof r->run_id, "ab");
        snprintf(r->timestamp_utc, sizeof r->timestamp_utc,
                 "2026-12-03T00:00:00Z");
        snprintf(r->distribution, sizeof r->distribution, "d");
        snprintf(r->op, sizeof r->op, "fused_add_rms_norm");
        snprintf(r->dtype, sizeof r->dtype, "bfloat16");
        snprintf(r->weight_dtype, sizeof r->weight_dtype, "bfloat16");
        snprintf(r->layout, sizeof r->layout, "contiguous");
        snprintf(r->freq, sizeof r->freq, "1");
        snprintf(r->path, sizeof r->path, "kernel");
        snprintf(r->variant, sizeof r->variant, "auto");
        snprintf(r->side, sizeof r->side, "%s", i < 2 ? "base" : "new");
        r->B = 1 + i % 2;
        r->N = 4096;
        r->n_samples = 10;
        r->median_us = r->min_us = 10;
    }
    /* point B=1: paired, the same; point B=2: wrong in new */
    snprintf(rows[2].paired_with, sizeof rows[2].paired_with, "base");
    rows[2].ratio = 1.0;
    rows[2].ratio_ci95_rel = 0.005;
    rows[2].rounds = 100;
    rows[3].status = OPCOST_STATUS_WRONG;
    rows[3].median_us = rows[3].min_us = NAN;
    const opcost_ab_counts c = opcost_ab_count(rows, 4);
    C_EXPECT(c.broken == 1, "broken rows counted: %zu", c.broken);
    opcost_ab_group *g;
    size_t ng;
    C_CHECK(opcost_ab_groups(rows, 4, 0.02, 0.05, &g, &ng) == 0 && ng == 1);
    C_EXPECT(ng == 1 && g[0].broken == 1, "group broken: %zu",
             ng ? g[0].broken : 0);
    free(g);
    char out[4096];
    FILE *f = fmemopen(out, sizeof out, "w");
    opcost_ab_report(f, rows, 4, 0.02, 0.05);
    fclose(f);
    C_EXPECT(strstr(out, "BROKEN: 1 of 2 shapes") && strstr(out, "(1 broken)"),
             "the report:\n%s", out);
    C_EXPECT(!strstr(out, "ENTRY"), "no entry named, none differs:\n%s", out);

    /* the two builds' eager-python entered the library differently (one
     * without rowops._fast): said, with both entries */
    snprintf(rows[0].note, sizeof rows[0].note, "entered through rowops._fast");
    snprintf(rows[2].note, sizeof rows[2].note,
             "entered through torch.ops.rowops: no rowops._fast beside the "
             "library (its target rowops_fast not built)");
    f = fmemopen(out, sizeof out, "w");
    opcost_ab_report(f, rows, 4, 0.02, 0.05);
    fclose(f);
    C_EXPECT(strstr(out, "ENTRY DIFFERS (B=1): base entered through "
                         "rowops._fast, new through torch.ops.rowops"),
             "the entries differ:\n%s", out);
    snprintf(rows[2].note, sizeof rows[2].note, "entered through rowops._fast");
    f = fmemopen(out, sizeof out, "w");
    opcost_ab_report(f, rows, 4, 0.02, 0.05);
    fclose(f);
    C_EXPECT(!strstr(out, "ENTRY"), "the same entry:\n%s", out);
    /* a base from before the rows said it (a nightly's): no claim */
    rows[0].note[0] = '\0';
    snprintf(rows[2].note, sizeof rows[2].note,
             "entered through torch.ops.rowops: no rowops._fast");
    f = fmemopen(out, sizeof out, "w");
    opcost_ab_report(f, rows, 4, 0.02, 0.05);
    fclose(f);
    C_EXPECT(!strstr(out, "ENTRY"), "the base names no entry:\n%s", out);
}

int main(void)
{
    /* statistics: t-distribution tails (scipy.stats.t.sf(t, df) * 2) */
    C_EXPECT(fabs(opcost_t_two_sided_p(2.306004, 8) - 0.05) < 1e-5,
             "t = 2.306, df = 8: p = 0.05");
    C_EXPECT(fabs(opcost_t_two_sided_p(3.355387, 8) - 0.01) < 1e-5,
             "t = 3.355, df = 8: p = 0.01");
    C_EXPECT(fabs(opcost_t_two_sided_p(0, 5) - 1.0) < 1e-12, "t = 0: p = 1");
    C_EXPECT(fabs(opcost_betainc(2, 3, 0.4) - 0.5248) < 1e-12,
             "I_0.4(2, 3) = 0.5248");
    double p[] = {0.01, 0.04, 0.03, NAN, 0.005};
    opcost_holm(p, 5); /* sorted .005 .01 .03 .04 -> x4 x3 x2 x1 */
    C_EXPECT(fabs(p[4] - 0.02) < 1e-12 && fabs(p[0] - 0.03) < 1e-12 &&
                 fabs(p[2] - 0.06) < 1e-12 && fabs(p[1] - 0.06) < 1e-12 &&
                 isnan(p[3]),
             "Holm: %g %g %g %g %g", p[0], p[1], p[2], p[3], p[4]);

    char base[512], same[512], shift3[512], shift20[512], noisy[512];
    char few[512], other[512], onesided[512], csv[512];
    make_run("base", 8, 5, 1.00, 0.02, "2.15.0", 1, base, sizeof base);
    make_run("same", 8, 5, 1.00, 0.02, "2.15.0", 2, same, sizeof same);
    make_run("shift3", 8, 5, 1.03, 0.02, "2.15.0", 3, shift3, sizeof shift3);
    make_run("shift20", 8, 5, 1.20, 0.02, "2.15.0", 4, shift20, sizeof shift20);
    make_run("noisy", 8, 5, 1.20, 1.00, "2.15.0", 5, noisy, sizeof noisy);
    make_run("few", 8, 4, 1.20, 0.02, "2.15.0", 6, few, sizeof few);
    make_run("other", 8, 5, 1.00, 0.02, "2.11.0", 7, other, sizeof other);
    make_run("onesided", 6, 5, 1.00, 0.02, "2.15.0", 8, onesided,
             sizeof onesided);
    snprintf(csv, sizeof csv, "%s/verdicts.csv", c_tempdir("test_compare"));

    C_EXPECT(compare(base, same, NULL, csv) == 0 && verdicts(csv, "same") == 8,
             "identical runs: nothing claimed");
    C_EXPECT(compare(base, shift3, NULL, csv) == 0 &&
                 verdicts(csv, "slower") == 0,
             "3 %% slower: below the 5 %% threshold, not reported");
    C_EXPECT(compare(base, shift20, NULL, csv) == 1 &&
                 verdicts(csv, "slower") == 8,
             "20 %% slower: every row a regression, exit 1");
    C_EXPECT(compare(shift20, base, NULL, csv) == 0 &&
                 verdicts(csv, "faster") == 8,
             "20 %% faster: reported, exit 0");
    const int noisy_rc = compare(base, noisy, NULL, csv);
    C_EXPECT(verdicts(csv, "slower") < 8,
             "noise as large as the shift: not every row claimed (rc %d, %d "
             "slower, %d same)",
             noisy_rc, verdicts(csv, "slower"), verdicts(csv, "same"));
    C_EXPECT(compare(base, few, NULL, csv) == 0 &&
                 verdicts(csv, "too-few-reps") == 8,
             "4 repetitions: no claim");
    C_EXPECT(compare(base, other, NULL, NULL) == 2,
             "different torch versions refused");
    C_EXPECT(compare(base, other, "--force", NULL) == 0,
             "--force compares them");
    C_EXPECT(compare(base, onesided, NULL, csv) == 0 &&
                 verdicts(csv, "only-base") == 2,
             "rows on one side listed, not dropped");
    C_EXPECT(compare(base, shift20, "--gate", NULL) == 1,
             "gate: the distribution's expected cost regressed");
    C_EXPECT(compare(base, same, "--gate", NULL) == 0,
             "gate: identical runs pass");
    /* two runs of the same code on a noisy machine: every row off by up to
     * +-10 % with tight repetitions; a real 30 % slowdown of one row */
    char quiet[512], drifted[512];
    make_run_rows("quiet", 24, 5, 1.0, 0.01, 0.2, "2.15.0", 9, quiet,
                  sizeof quiet);
    make_run_rows("drifted", 24, 5, 1.0, 0.01, 0.2, "2.15.0", 10, drifted,
                  sizeof drifted);
    C_EXPECT(compare(quiet, drifted, NULL, csv) == 0 &&
                 verdicts(csv, "slower") == 0 && verdicts(csv, "faster") == 0,
             "run-to-run drift alone: nothing claimed (%d slower)",
             verdicts(csv, "slower"));
    C_EXPECT(compare(quiet, drifted, "--gate", NULL) == 0,
             "run-to-run drift alone: the gate passes");
    C_EXPECT(compare(base, "/nonexistent.csv", NULL, NULL) == 2,
             "a missing file: exit 2");
    C_EXPECT(compare(base, NULL, NULL, NULL) == 2, "one file: exit 2");
    hostile(base);
    gate_broken(base, same);
    ab_broken();
    scaling();
    summary_freq();
    summary_budget_cut();
    model_share_unmeasured();
    paired_variants();
    return c_report("test_compare");
}
