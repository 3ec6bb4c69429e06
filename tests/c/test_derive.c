/* The scheduler simulation, the binning and the trace reader, and the
 * regeneration of the committed model shape files. argv[1] is the source
 * directory. */
#define _POSIX_C_SOURCE 200809L /* opendir */

#include "c_samples.h"
#include "c_tempdir.h"
#include "derive.h"
#include "shape_file.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The whole file, NUL-terminated, or NULL; its size in *len. */
static char *read_all(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 1 << 16;
    char *buf = malloc(cap);
    *len = 0;
    while (buf) {
        *len += fread(buf + *len, 1, cap - *len, f);
        if (*len < cap)
            break;
        cap *= 2;
        char *grown = realloc(buf, cap);
        if (!grown)
            free(buf);
        buf = grown;
    }
    fclose(f);
    return buf;
}

/* Five requests, token budget 8, at most 2 running, step time
 * 1 ms + 1 ms per token (b = 1000 ms per 1000 tokens):
 *
 *   request  arrival  prompt  generated
 *   R0       0 ms     5       3
 *   R1       0 ms     6       2
 *   R2       3 ms     10      1
 *   R3       4 ms     2       2
 *   R4       100 ms   3       1
 *
 * step  start  decode    prefill                      B  end    then
 * 1     0      -         R0 5 (all), R1 3 of 6         8  9      R0 has token 1
 * 2     9      R0        R1 3 (rest); R2, R3 wait:     4  14     R0 token 2, R1
 *                        2 running (the cap)                     token 1
 * 3     14     R0, R1    none: still 2 running         2  17     both done,
 * leave 4     17     -         R2 8 of 10; budget spent,     8  26 R3 not
 * admitted 5     26     -         R2 2 (rest), R3 2 (all)       4  31     R2
 * token 1 of 1: leaves; R3 token 1 6     31     R3        - 1  33     R3 leaves
 * idle: nothing runs or waits; the clock jumps from 33 to R4's 100 ms
 * 7     100    -         R4 3 (all)                    3  104    R4 leaves
 *
 * Steps B = 8, 4, 2, 8, 4, 1, 3: 30 tokens = sum of prompt + generated - 1,
 * 104 ms. Power-of-two bins: [1,2) {1}; [2,4) {2,3} mean 2.5 -> 3;
 * [4,8) {4,4}; [8,16) {8,8}. Two bins: w = 2, [1,4) {1,2,3} -> 2 and
 * [4,16) {4,4,8,8} -> 6. One bin: [1,16), 30/7 -> 4. */
static const opcost_request hand[] = {
    {0.000, 5, 3}, {0.000, 6, 2}, {0.003, 10, 1}, {0.004, 2, 2}, {0.100, 3, 1},
};

static const opcost_sched_params hand_params = {
    .token_budget = 8,
    .max_running = 2,
    .step_a_ns = 1000000,
    .step_b_ns_per_ktok = 1000000000,
};

static void test_hand_schedule(void)
{
    opcost_sim sim;
    char err[256] = "";
    C_CHECK(opcost_simulate(hand, 5, &hand_params, &sim, err, sizeof err) == 0);
    const int64_t want[] = {8, 4, 2, 8, 4, 1, 3};
    C_CHECK(sim.steps == 7);
    for (size_t i = 0; i < 7 && i < sim.steps; ++i)
        C_CHECK(sim.step_rows[i] == want[i]);
    C_CHECK(sim.tokens == 30);
    C_CHECK(sim.duration_ns == 104000000);

    opcost_bin bins[OPCOST_MAX_BINS];
    int n =
        opcost_bin_steps(sim.step_rows, sim.steps, 16, bins, err, sizeof err);
    C_CHECK(n == 4);
    const opcost_bin want16[] = {{1, 2, 1, 1, 1.0 / 7},
                                 {2, 4, 2, 3, 2.0 / 7},
                                 {4, 8, 2, 4, 2.0 / 7},
                                 {8, 16, 2, 8, 2.0 / 7}};
    for (int i = 0; i < 4 && i < n; ++i)
        C_CHECK(bins[i].lo == want16[i].lo && bins[i].hi == want16[i].hi &&
                bins[i].steps == want16[i].steps &&
                bins[i].rows == want16[i].rows &&
                bins[i].freq == want16[i].freq);
    n = opcost_bin_steps(sim.step_rows, sim.steps, 2, bins, err, sizeof err);
    C_CHECK(n == 2);
    C_CHECK(bins[0].lo == 1 && bins[0].hi == 4 && bins[0].steps == 3 &&
            bins[0].rows == 2 && bins[0].freq == 3.0 / 7);
    C_CHECK(bins[1].lo == 4 && bins[1].hi == 16 && bins[1].steps == 4 &&
            bins[1].rows == 6 && bins[1].freq == 4.0 / 7);
    n = opcost_bin_steps(sim.step_rows, sim.steps, 1, bins, err, sizeof err);
    C_CHECK(n == 1 && bins[0].lo == 1 && bins[0].hi == 16 &&
            bins[0].steps == 7 && bins[0].rows == 4 && bins[0].freq == 1);
    opcost_sim_free(&sim);
}

static void test_sim_errors(void)
{
    opcost_sim sim;
    char err[256] = "";
    opcost_sched_params p = hand_params;
    p.max_running = 9;
    C_CHECK(opcost_simulate(hand, 5, &p, &sim, err, sizeof err) == -1);
    C_EXPECT_STR(err, "max_running must be in 1..token_budget (8), got 9",
                 "max_running 9 > token_budget 8");
    p = hand_params;
    p.token_budget = 0;
    C_CHECK(opcost_simulate(hand, 5, &p, &sim, err, sizeof err) == -1);
    C_EXPECT_STR(err, "token_budget must be in 1..1048576, got 0",
                 "token_budget 0");
    const opcost_request late[] = {{2, 1, 1}, {1, 1, 1}};
    C_CHECK(opcost_simulate(late, 2, &hand_params, &sim, err, sizeof err) ==
            -1);
    C_EXPECT_STR(err,
                 "request 1: arrival_s 1 is earlier than request 0's 2; "
                 "requests must be in arrival order",
                 "requests out of order");
    const opcost_request empty[] = {{0, 0, 1}};
    C_CHECK(opcost_simulate(empty, 1, &hand_params, &sim, err, sizeof err) ==
            -1);
    C_EXPECT_STR(err,
                 "request 0: context_tokens and generated_tokens must be "
                 "in 1..2147483647, got 0 and 1",
                 "a request with no context");
    C_CHECK(opcost_simulate(hand, 0, &hand_params, &sim, err, sizeof err) ==
            -1);
    C_EXPECT_STR(err, "no requests to simulate", "no requests");

    opcost_bin bins[OPCOST_MAX_BINS];
    const int64_t rows[] = {3, 0};
    C_CHECK(opcost_bin_steps(rows, 2, 16, bins, err, sizeof err) == -1);
    C_EXPECT_STR(err, "step 1: B must be in 1..2147483647, got 0",
                 "a step of B = 0");
    C_CHECK(opcost_bin_steps(rows, 1, 65, bins, err, sizeof err) == -1);
    C_EXPECT_STR(err, "bins must be in 1..64, got 65", "65 bins");
    C_CHECK(opcost_bin_steps(rows, 0, 16, bins, err, sizeof err) == -1);
    C_EXPECT_STR(err, "no steps to bin", "no steps");
}

static void test_trace_reader(void)
{
    char path[512], err[512] = "";
    opcost_trace t;
    /* CRLF, no newline at the end, 7, 1 and 0 fractional digits. */
    c_write_file("small.csv",
                 "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                 "2023-11-16 18:15:46.6805900,374,44\r\n"
                 "2023-11-16 18:15:47.1,10,2\r\n"
                 "2023-11-16 18:15:48,5,1",
                 path, sizeof path);
    C_CHECK(opcost_trace_load(path, &t, err, sizeof err) == 0);
    C_CHECK(t.count == 3);
    if (t.count == 3) {
        C_CHECK(t.requests[0].arrival_s == 0);
        C_CHECK(t.requests[1].arrival_s == 0.41941);
        C_CHECK(t.requests[2].arrival_s == 1.31941);
        C_CHECK(t.requests[0].context_tokens == 374 &&
                t.requests[0].generated_tokens == 44);
        C_CHECK(t.requests[2].context_tokens == 5 &&
                t.requests[2].generated_tokens == 1);
    }
    opcost_trace_free(&t);
    /* Across a year's end and a leap day. */
    c_write_file("dates.csv",
                 "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                 "2023-12-31 23:59:59,1,1\n"
                 "2024-01-01 00:00:01,1,1\n"
                 "2024-02-28 00:00:01,1,1\n"
                 "\n"
                 "2024-03-01 00:00:01.0000001,1,1\n",
                 path, sizeof path);
    C_CHECK(opcost_trace_load(path, &t, err, sizeof err) == 0);
    C_CHECK(t.count == 4);
    if (t.count == 4) {
        C_CHECK(t.requests[1].arrival_s == 2);
        C_CHECK(t.requests[2].arrival_s == 2 + 58 * 86400);
        C_CHECK(t.requests[3].arrival_s == 2 + 60 * 86400 + 1e-7);
    }
    opcost_trace_free(&t);
}

#define THEAD "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
#define TROW "2023-11-16 18:15:46.6805900,374,44\r\n"

static const c_bad_input bad_traces[] = {
    {"", "%s:1: end of file before the header "
         "'TIMESTAMP,ContextTokens,GeneratedTokens'"},
    {"time,ctx,gen\n" TROW, "%s:1: header must be exactly "
                            "'TIMESTAMP,ContextTokens,GeneratedTokens', got "
                            "'time,ctx,gen'"},
    {THEAD, "%s:1: the header is followed by no requests"},
    {THEAD TROW "2023-11-16 18:15:47,374\r\n",
     "%s:3: expected 3 columns (TIMESTAMP,ContextTokens,GeneratedTokens), "
     "got 2"},
    {THEAD "2023-13-16 18:15:46,1,1\r\n",
     "%s:2: column 'TIMESTAMP': month must be 01..12, got "
     "'2023-13-16 18:15:46'"},
    {THEAD "2023-02-29 18:15:46,1,1\r\n",
     "%s:2: column 'TIMESTAMP': day must exist in its month, got "
     "'2023-02-29 18:15:46'"},
    {THEAD "2023-11-16 24:00:00,1,1\r\n",
     "%s:2: column 'TIMESTAMP': time of day must be 00:00:00..23:59:59, got "
     "'2023-11-16 24:00:00'"},
    {THEAD "2023-11-16 18:15:46.68059001,1,1\r\n",
     "%s:2: column 'TIMESTAMP': must have 1 to 7 fractional digits of a "
     "second, got '2023-11-16 18:15:46.68059001'"},
    {THEAD "2023-11-16 18:15:46.,1,1\r\n",
     "%s:2: column 'TIMESTAMP': must have 1 to 7 fractional digits of a "
     "second, got '2023-11-16 18:15:46.'"},
    {THEAD "2023-11-16T18:15:46,1,1\r\n",
     "%s:2: column 'TIMESTAMP': must look like "
     "'YYYY-MM-DD HH:MM:SS[.fffffff]', got '2023-11-16T18:15:46'"},
    {THEAD "2023-11-16 18:15,1,1\r\n",
     "%s:2: column 'TIMESTAMP': must look like "
     "'YYYY-MM-DD HH:MM:SS[.fffffff]', got '2023-11-16 18:15'"},
    {THEAD "2023-11-16 18:15:46Z,1,1\r\n",
     "%s:2: column 'TIMESTAMP': must look like "
     "'YYYY-MM-DD HH:MM:SS[.fffffff]' and end there, got "
     "'2023-11-16 18:15:46Z'"},
    {THEAD TROW "2023-11-16 18:15:46.6805899,1,1\r\n",
     "%s:3: column 'TIMESTAMP': must not be earlier than the previous "
     "request's (line 2), got '2023-11-16 18:15:46.6805899'"},
    {THEAD "2023-11-16 18:15:46,0,1\r\n",
     "%s:2: column 'ContextTokens': must be an integer in 1..2147483647, got "
     "'0'"},
    {THEAD "2023-11-16 18:15:46,12k,1\r\n",
     "%s:2: column 'ContextTokens': must be an integer in 1..2147483647, got "
     "'12k'"},
    {THEAD "2023-11-16 18:15:46,1,2147483648\r\n",
     "%s:2: column 'GeneratedTokens': must be an integer in 1..2147483647, "
     "got '2147483648'"},
};

C_READER(load_trace, opcost_trace, opcost_trace_load, opcost_trace_free)

static void test_bad_traces(void)
{
    c_expect_bad_inputs("bad trace", load_trace, bad_traces,
                        sizeof bad_traces / sizeof bad_traces[0]);
}

/* The committed conversation trace: the model's invariants, binning
 * invariants for every bin count, determinism and speed. */
static void test_real_trace(const char *src)
{
    char path[4096], err[1024] = "";
    snprintf(path, sizeof path,
             "%s/shapes/traces/AzureLLMInferenceTrace_conv.csv", src);
    opcost_trace t;
    C_CHECK(opcost_trace_load(path, &t, err, sizeof err) == 0);
    if (t.count == 0) {
        fprintf(stderr, "%s\n", err);
        return;
    }
    C_CHECK(t.count == 19366);
    int64_t work = 0;
    for (size_t i = 0; i < t.count; ++i)
        work +=
            t.requests[i].context_tokens + t.requests[i].generated_tokens - 1;
    const opcost_sched_params p = opcost_sched_defaults();
    opcost_sim a, b;
    const clock_t start = clock();
    C_CHECK(opcost_simulate(t.requests, t.count, &p, &a, err, sizeof err) == 0);
    const double cpu_s = (double)(clock() - start) / CLOCKS_PER_SEC;
    printf("simulated %zu requests in %.3f s of CPU: %zu steps\n", t.count,
           cpu_s, a.steps);
    C_CHECK(cpu_s < 1.0);
    C_CHECK(a.tokens == work); /* every prompt and output token once */
    C_CHECK(opcost_simulate(t.requests, t.count, &p, &b, err, sizeof err) == 0);
    C_CHECK(a.steps == b.steps && a.duration_ns == b.duration_ns &&
            memcmp(a.step_rows, b.step_rows, a.steps * sizeof *a.step_rows) ==
                0);
    int64_t max_b = 0;
    for (size_t i = 0; i < a.steps; ++i)
        max_b = a.step_rows[i] > max_b ? a.step_rows[i] : max_b;
    C_CHECK(max_b == p.token_budget);
    for (int bins = 1; bins <= OPCOST_MAX_BINS; ++bins) {
        opcost_bin x[OPCOST_MAX_BINS], y[OPCOST_MAX_BINS];
        const int n =
            opcost_bin_steps(a.step_rows, a.steps, bins, x, err, sizeof err);
        const int m =
            opcost_bin_steps(a.step_rows, a.steps, bins, y, err, sizeof err);
        C_CHECK(n >= 1 && n <= bins && n == m);
        if (n < 1)
            continue;
        C_CHECK(memcmp(x, y, (size_t)n * sizeof *x) == 0);
        double sum = 0;
        int64_t steps = 0;
        for (int i = 0; i < n; ++i) {
            sum += x[i].freq;
            steps += x[i].steps;
            C_CHECK(x[i].rows >= x[i].lo && x[i].rows < x[i].hi);
            C_CHECK(i == 0 || x[i].lo >= x[i - 1].hi);
        }
        C_CHECK(fabs(sum - 1) < 1e-12);
        C_CHECK(steps == (int64_t)a.steps);
    }
    opcost_sim_free(&a);
    opcost_sim_free(&b);
    opcost_trace_free(&t);
}

static int is_model_file(const char *name)
{
    const size_t n = strlen(name);
    return n > 9 && (strcmp(name + n - 9, "-conv.csv") == 0 ||
                     strcmp(name + n - 9, "-code.csv") == 0);
}

/* `opcost shapes generate` into a fresh directory gives the committed
 * model files byte for byte, and no others. */
static void test_regenerate(const char *src)
{
    char out[512], traces[4096];
    snprintf(out, sizeof out, "%s/gen", c_tempdir("test_derive"));
    snprintf(traces, sizeof traces, "%s/shapes/traces", src);
    const int made = mkdir(out, 0700);
    C_EXPECT(made == 0, "mkdir %s: %s", out, strerror(errno));
    if (made != 0)
        return;
    char *argv[] = {"shapes", "generate", "--traces-dir", traces, "--out-dir",
                    out,      NULL};
    C_CHECK(opcost_shapes_main(6, argv) == 0);
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/shapes", src);
    int compared = 0, generated = 0;
    DIR *d = opendir(dir);
    const struct dirent *e;
    while (d && (e = readdir(d))) {
        if (!is_model_file(e->d_name))
            continue;
        char committed[8192], fresh[8192];
        snprintf(committed, sizeof committed, "%s/%s", dir, e->d_name);
        snprintf(fresh, sizeof fresh, "%s/%s", out, e->d_name);
        size_t la = 0, lb = 0;
        char *a = read_all(committed, &la), *b = read_all(fresh, &lb);
        C_EXPECT(a && b && la == lb && memcmp(a, b, la) == 0,
                 "%s differs from `opcost shapes generate`", committed);
        free(a);
        free(b);
        compared++;
    }
    if (d)
        closedir(d);
    d = opendir(out);
    while (d && (e = readdir(d)))
        generated += e->d_name[0] != '.';
    if (d)
        closedir(d);
    C_CHECK(compared == 12 && generated == 12);
}

static void test_cli_errors(void)
{
    char *bad_bins[] = {"shapes", "derive", "t.csv", "--bins", "x", NULL};
    C_CHECK(opcost_shapes_main(5, bad_bins) == 2);
    char *too_many[] = {"shapes",          "derive",           "t.csv",
                        "--max-running=9", "--token-budget=8", NULL};
    C_CHECK(opcost_shapes_main(5, too_many) == 2);
    char *no_value[] = {"shapes", "derive", "t.csv", "--bins", NULL};
    C_CHECK(opcost_shapes_main(4, no_value) == 2);
    char *unknown[] = {"shapes", "generate", "--frobnicate", NULL};
    C_CHECK(opcost_shapes_main(3, unknown) == 2);
    char *no_cmd[] = {"shapes", "frobnicate", NULL};
    C_CHECK(opcost_shapes_main(2, no_cmd) == 2);
    char *missing[] = {"shapes", "check", "/nonexistent/x.csv", NULL};
    C_CHECK(opcost_shapes_main(3, missing) == 2); /* bad input */
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: test_derive SOURCE_DIR\n");
        return 2;
    }
    c_tempdir("test_derive");
    test_hand_schedule();
    test_sim_errors();
    test_trace_reader();
    test_bad_traces();
    test_real_trace(argv[1]);
    test_regenerate(argv[1]);
    test_cli_errors();
    return c_report("test_derive");
}
