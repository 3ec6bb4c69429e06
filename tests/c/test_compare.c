/* opcost compare on synthetic runs: identical, shifted 3 %, shifted 20 %,
 * noisy, one-sided rows, too few repetitions, foreign runs; and the
 * statistics behind it against known values. */
#include "c_samples.h"
#include "c_tempdir.h"
#include "compare.h"
#include "results_csv.h"
#include "significance.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run of `rows` points, each with `reps` repetitions of 20 samples
 * around base_us * scale: each repetition drifts by up to +-noise/2 (the
 * machine's state), each sample by +-1 %, and each row by up to
 * +-row_noise/2 (the run's state for that row); deterministic. */
static void make_run_rows(const char *name, int rows, int reps, double scale,
                          double noise, double row_noise, const char *torch,
                          unsigned seed, char *path, size_t len)
{
    snprintf(path, len, "%s/%s.csv", c_tempdir("test_compare"), name);
    opcost_result *r = calloc((size_t)rows, sizeof *r);
    opcost_sample *s = calloc((size_t)(rows * reps * 20), sizeof *s);
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
        double sum = 0;
        /* this run's state for this row: the same for all its reps */
        st = st * 1103515245u + 12345u;
        const double row_shift =
            1 + row_noise * ((double)(st >> 8) / 16777216.0 - 0.5);
        for (int k = 0; k < reps; ++k) {
            st = st * 1103515245u + 12345u;
            const double drift = noise * ((double)(st >> 8) / 16777216.0 - 0.5);
            for (int j = 0; j < 20; ++j) {
                st = st * 1103515245u + 12345u;
                const double u = (double)(st >> 8) / 16777216.0 - 0.5;
                const double us = 10.0 * (1 + i) * scale * row_shift *
                                  (1 + drift) * (1 + 0.02 * u);
                s[ns++] = (opcost_sample){i, k, j, us};
                sum += us;
            }
        }
        r[i].n_samples = reps * 20;
        r[i].median_us = r[i].min_us = sum / (reps * 20);
    }
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

/* How many rows of a compare CSV have this verdict. */
static int verdicts(const char *csv, const char *verdict)
{
    FILE *f = fopen(csv, "r");
    char line[2048];
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        const char *last = strrchr(line, ',');
        n += last && !strcmp(last + 1, verdict);
    }
    if (f)
        fclose(f);
    return n;
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
    return c_report("test_compare");
}
