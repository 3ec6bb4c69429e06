/* Shape sets derived from request traces: the scheduler simulation, the
 * binning, the model shape files and the `opcost shapes` command line. The
 * model and the binning rules are stated in derive.h. */
#include "derive.h"
#include "errorf.h"
#include "outfile.h"

#include "shape_file.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

opcost_sched_params opcost_sched_defaults(void)
{
    return (opcost_sched_params){
        .token_budget = OPCOST_DEFAULT_TOKEN_BUDGET,
        .max_running = OPCOST_DEFAULT_MAX_RUNNING,
        .step_a_ns = OPCOST_DEFAULT_STEP_A_NS,
        .step_b_ns_per_ktok = OPCOST_DEFAULT_STEP_B_NS_PER_KTOK,
    };
}

/* ---- simulation ------------------------------------------------------ */

/* The clock stops well before int64 nanoseconds overflow (146 years). */
#define CLOCK_LIMIT_NS (INT64_MAX / 2)
/* Arrivals up to ~31 years keep nanoseconds far inside int64. */
#define MAX_ARRIVAL_S 1e9

static int check_params(const opcost_sched_params *p, char *err, size_t errlen)
{
    if (p->token_budget < 1 || p->token_budget > OPCOST_MAX_TOKEN_BUDGET)
        return opcost_errorf(
            err, errlen, "token_budget must be in 1..%d, got %lld",
            OPCOST_MAX_TOKEN_BUDGET, (long long)p->token_budget);
    if (p->max_running < 1 || p->max_running > p->token_budget)
        return opcost_errorf(
            err, errlen,
            "max_running must be in 1..token_budget (%lld), got "
            "%lld",
            (long long)p->token_budget, (long long)p->max_running);
    if (p->step_a_ns < 0 || p->step_a_ns > OPCOST_MAX_STEP_NS)
        return opcost_errorf(err, errlen,
                             "step_a_ns must be in 0..%d, got %lld",
                             OPCOST_MAX_STEP_NS, (long long)p->step_a_ns);
    if (p->step_b_ns_per_ktok < 0 || p->step_b_ns_per_ktok > OPCOST_MAX_STEP_NS)
        return opcost_errorf(
            err, errlen, "step_b_ns_per_ktok must be in 0..%d, got %lld",
            OPCOST_MAX_STEP_NS, (long long)p->step_b_ns_per_ktok);
    return 0;
}

static int check_requests(const opcost_request *r, size_t n, char *err,
                          size_t errlen)
{
    if (n == 0)
        return opcost_errorf(err, errlen, "no requests to simulate");
    for (size_t i = 0; i < n; ++i) {
        if (!isfinite(r[i].arrival_s) || r[i].arrival_s < 0 ||
            r[i].arrival_s > MAX_ARRIVAL_S)
            return opcost_errorf(
                err, errlen, "request %zu: arrival_s must be in 0..%g, got %g",
                i, MAX_ARRIVAL_S, r[i].arrival_s);
        if (i && r[i].arrival_s < r[i - 1].arrival_s)
            return opcost_errorf(
                err, errlen,
                "request %zu: arrival_s %g is earlier than request "
                "%zu's %g; requests must be in arrival order",
                i, r[i].arrival_s, i - 1, r[i - 1].arrival_s);
        if (r[i].context_tokens < 1 || r[i].context_tokens > INT32_MAX ||
            r[i].generated_tokens < 1 || r[i].generated_tokens > INT32_MAX)
            return opcost_errorf(
                err, errlen,
                "request %zu: context_tokens and generated_tokens "
                "must be in 1..%ld, got %lld and %lld",
                i, (long)INT32_MAX, (long long)r[i].context_tokens,
                (long long)r[i].generated_tokens);
    }
    return 0;
}

static int push_step(opcost_sim *sim, size_t *cap, int64_t rows)
{
    if (sim->steps == *cap) {
        const size_t grown_cap = *cap ? *cap * 2 : 4096;
        int64_t *grown = realloc(sim->step_rows, grown_cap * sizeof *grown);
        if (!grown)
            return -1;
        sim->step_rows = grown;
        *cap = grown_cap;
    }
    sim->step_rows[sim->steps++] = rows;
    sim->tokens += rows;
    return 0;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The loop of derive.h's model. Requests are admitted in arrival order, so
 * the waiting ones are always [admitted, arrived) and the running set,
 * kept in admission order, is first-come-first-served as well. */
static int run(const opcost_request *req, size_t n,
               const opcost_sched_params *p, const int64_t *arrival_ns,
               int64_t *prefilled, int64_t *generated, size_t *running,
               opcost_sim *out, char *err, size_t errlen)
{
    size_t arrived = 0, admitted = 0, nrun = 0, cap = 0;
    int64_t clock = arrival_ns[0];
    while (admitted < n || nrun > 0) {
        while (arrived < n && arrival_ns[arrived] <= clock)
            arrived++;
        if (nrun == 0 && admitted == arrived) {
            clock = arrival_ns[arrived]; /* idle: jump to the next arrival */
            continue;
        }
        int64_t budget = p->token_budget;
        for (size_t i = 0; i < nrun; ++i) /* decodes first */
            budget -= prefilled[running[i]] == req[running[i]].context_tokens;
        for (size_t i = 0; i < nrun && budget > 0; ++i) {
            const size_t r = running[i];
            const int64_t chunk =
                min64(req[r].context_tokens - prefilled[r], budget);
            prefilled[r] += chunk;
            budget -= chunk;
        }
        while (budget > 0 && nrun < (size_t)p->max_running &&
               admitted < arrived) {
            const size_t r = admitted++;
            running[nrun++] = r;
            prefilled[r] = min64(req[r].context_tokens, budget);
            budget -= prefilled[r];
        }
        const int64_t rows = p->token_budget - budget;
        if (push_step(out, &cap, rows) != 0)
            return opcost_errorf(err, errlen, "out of memory after %zu steps",
                                 out->steps);
        clock += p->step_a_ns + (p->step_b_ns_per_ktok * rows + 500) / 1000;
        if (clock > CLOCK_LIMIT_NS)
            return opcost_errorf(
                err, errlen,
                "simulated time passed %lld s after %zu steps; "
                "the step time is too long for this trace",
                (long long)(CLOCK_LIMIT_NS / 1000000000), out->steps);
        /* Every request past its prefill made one token in this step. */
        size_t kept = 0;
        for (size_t i = 0; i < nrun; ++i) {
            const size_t r = running[i];
            if (prefilled[r] == req[r].context_tokens &&
                ++generated[r] == req[r].generated_tokens)
                continue;
            running[kept++] = r;
        }
        nrun = kept;
    }
    out->duration_ns = clock - arrival_ns[0];
    return 0;
}

int opcost_simulate(const opcost_request *requests, size_t count,
                    const opcost_sched_params *params, opcost_sim *out,
                    char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (check_params(params, err, errlen) != 0 ||
        check_requests(requests, count, err, errlen) != 0)
        return -1;
    int64_t *arrival_ns = malloc(count * sizeof *arrival_ns);
    int64_t *prefilled = calloc(count, sizeof *prefilled);
    int64_t *generated = calloc(count, sizeof *generated);
    size_t *running = malloc((size_t)params->max_running * sizeof *running);
    int r = -1;
    if (!arrival_ns || !prefilled || !generated || !running) {
        opcost_errorf(err, errlen, "out of memory for %zu requests", count);
    } else {
        /* Exact: trace times are multiples of 100 ns, far below 2^53 ns. */
        for (size_t i = 0; i < count; ++i)
            arrival_ns[i] = llround(requests[i].arrival_s * 1e9);
        r = run(requests, count, params, arrival_ns, prefilled, generated,
                running, out, err, errlen);
    }
    free(arrival_ns);
    free(prefilled);
    free(generated);
    free(running);
    if (r != 0)
        opcost_sim_free(out);
    return r;
}

void opcost_sim_free(opcost_sim *sim)
{
    free(sim->step_rows);
    memset(sim, 0, sizeof *sim);
}

/* ---- binning --------------------------------------------------------- */

#define OCTAVES 31 /* B in 1..INT32_MAX: floor(log2 B) in 0..30 */

int opcost_bin_steps(const int64_t *step_rows, size_t steps, int max_bins,
                     opcost_bin *bins, char *err, size_t errlen)
{
    if (max_bins < 1 || max_bins > OPCOST_MAX_BINS)
        return opcost_errorf(err, errlen, "bins must be in 1..%d, got %d",
                             OPCOST_MAX_BINS, max_bins);
    if (steps == 0)
        return opcost_errorf(err, errlen, "no steps to bin");
    int64_t count[OCTAVES] = {0}, sum[OCTAVES] = {0};
    for (size_t i = 0; i < steps; ++i) {
        const int64_t b = step_rows[i];
        if (b < 1 || b > INT32_MAX)
            return opcost_errorf(err, errlen,
                                 "step %zu: B must be in 1..%ld, got %lld", i,
                                 (long)INT32_MAX, (long long)b);
        const int k = ilogb((double)b); /* exact: b < 2^53 */
        count[k]++;
        sum[k] += b;
    }
    /* The narrowest power-of-two width w that fits max_bins; w = OCTAVES
     * puts everything in one bin, so the search always ends. */
    int w = 1, used = 0;
    for (; w <= OCTAVES; ++w) {
        used = 0;
        for (int k = 0; k < OCTAVES; k += w) {
            int64_t c = 0;
            for (int j = k; j < k + w && j < OCTAVES; ++j)
                c += count[j];
            used += c > 0;
        }
        if (used <= max_bins)
            break;
    }
    int n = 0;
    for (int k = 0; k < OCTAVES; k += w) {
        int64_t c = 0, s = 0;
        for (int j = k; j < k + w && j < OCTAVES; ++j) {
            c += count[j];
            s += sum[j];
        }
        if (!c)
            continue;
        opcost_bin *bin = &bins[n++];
        bin->lo = (int64_t)1 << k;
        bin->hi = (int64_t)1 << (k + w);
        bin->steps = c;
        bin->rows = s / c + (2 * (s % c) >= c); /* mean, halves up */
        bin->freq = (double)c / (double)steps;
    }
    return n;
}

/* ---- descriptions, shared by derive's output and the shape files ----- */

/* One run of the model over one trace, binned. */
typedef struct derivation {
    opcost_sched_params params;
    int max_bins;
    size_t requests;
    double span_s; /* last arrival after the first */
    opcost_sim sim;
    opcost_bin bins[OPCOST_MAX_BINS];
    int nbins;
} derivation;

static double ms(int64_t ns)
{
    return (double)ns / 1e6;
}

static void describe(FILE *f, const derivation *d)
{
    const opcost_sched_params *p = &d->params;
    fprintf(f,
            "# Scheduler (continuous batching, chunked prefill; "
            "bench/shapes/derive.h):\n"
            "#   requests arrive at their trace timestamps; a forward step "
            "takes at most\n"
            "#   %lld tokens, and at most %lld requests run at once. A step "
            "first\n"
            "#   schedules one decode token for every running request whose "
            "prefill is\n"
            "#   complete, then prefill chunks first-come-first-served, each "
            "as large as\n"
            "#   the remaining budget allows; a request joins the running "
            "set when its\n"
            "#   first chunk is scheduled. The step that completes a prefill "
            "yields the\n"
            "#   first generated token; GeneratedTokens - 1 decode steps "
            "follow, then the\n"
            "#   request leaves. Step time = %.6g ms + %.6g ms per 1000 "
            "tokens (defaults\n"
            "#   5 and 32: Llama-3.1-8B in bfloat16 on one H100 SXM, one "
            "read of 16.1 GB\n"
            "#   of weights at 3.35 TB/s; 2 x 8.03e9 FLOP per token at half "
            "of 989 TFLOPS).\n"
            "#   With nothing to run, the clock jumps to the next arrival. "
            "Not modelled:\n"
            "#   KV-cache capacity, preemption, attention cost growing with "
            "context.\n"
            "#   Each step is one call of each per-layer norm, B = the "
            "step's tokens.\n",
            (long long)p->token_budget, (long long)p->max_running,
            ms(p->step_a_ns), ms(p->step_b_ns_per_ktok));
    fprintf(f,
            "# Simulation: %zu requests arriving over %.1f s; %zu steps,\n"
            "#   %.3f s simulated, %lld tokens processed (%.2f per step).\n",
            d->requests, d->span_s, d->sim.steps, ms(d->sim.duration_ns) / 1e3,
            (long long)d->sim.tokens,
            (double)d->sim.tokens / (double)d->sim.steps);
    /* Every bin has the same width w in octaves; derivations have bins. */
    const int w = ilogb((double)d->bins[0].hi) - ilogb((double)d->bins[0].lo);
    fprintf(f,
            "# Bins: B in [2^k, 2^(k+1)), widened to [2^(wk), 2^(w(k+1))) "
            "only if more\n"
            "#   than %d would be non-empty (here w = %d); rows = the mean "
            "B of the\n"
            "#   bin's steps, rounded half up; freq = the bin's share of the "
            "steps.\n"
            "#   %-18s %10s %8s  %s\n",
            d->max_bins, w, "bin", "steps", "rows", "freq");
    for (int i = 0; i < d->nbins; ++i) {
        char range[40];
        snprintf(range, sizeof range, "[%lld, %lld)", (long long)d->bins[i].lo,
                 (long long)d->bins[i].hi);
        fprintf(f, "#   %-18s %10lld %8lld  %.9g\n", range,
                (long long)d->bins[i].steps, (long long)d->bins[i].rows,
                d->bins[i].freq);
    }
}

static int derive_trace(const char *path, const opcost_sched_params *params,
                        int max_bins, derivation *d, char *err, size_t errlen)
{
    memset(d, 0, sizeof *d);
    d->params = *params;
    d->max_bins = max_bins;
    opcost_trace trace;
    if (opcost_trace_load(path, &trace, err, errlen) != 0)
        return -1;
    d->requests = trace.count;
    d->span_s = trace.requests[trace.count - 1].arrival_s;
    char why[256];
    int r = opcost_simulate(trace.requests, trace.count, params, &d->sim, why,
                            sizeof why);
    opcost_trace_free(&trace);
    if (r != 0)
        return opcost_errorf(err, errlen, "%s: %s", path, why);
    d->nbins = opcost_bin_steps(d->sim.step_rows, d->sim.steps, max_bins,
                                d->bins, why, sizeof why);
    if (d->nbins < 0) {
        opcost_sim_free(&d->sim);
        return opcost_errorf(err, errlen, "%s: %s", path, why);
    }
    return 0;
}

/* ---- the committed model shape files --------------------------------- */

typedef struct model {
    const char *name;
    rowops_op op;
    int64_t n;              /* the norm's row width */
    int64_t rows_per_token; /* rows per call = tokens * this */
    const char *about;      /* '#' lines: the config and where it is from */
} model;

static const model models[] = {
    {"llama-3.1-8b", ROWOPS_OP_FUSED_ADD_RMS_NORM, 4096, 1,
     "# Model: Llama-3.1-8B, hidden_size 4096 (config.json of\n"
     "#   meta-llama/Llama-3.1-8B on Hugging Face).\n"},
    {"llama-3.1-70b", ROWOPS_OP_FUSED_ADD_RMS_NORM, 8192, 1,
     "# Model: Llama-3.1-70B, hidden_size 8192 (config.json of\n"
     "#   meta-llama/Llama-3.1-70B on Hugging Face).\n"},
    {"qwen2.5-7b", ROWOPS_OP_FUSED_ADD_RMS_NORM, 3584, 1,
     "# Model: Qwen2.5-7B, hidden_size 3584 (config.json of Qwen/Qwen2.5-7B\n"
     "#   on Hugging Face).\n"},
    {"deepseek-v3", ROWOPS_OP_FUSED_ADD_RMS_NORM, 7168, 1,
     "# Model: DeepSeek-V3, hidden_size 7168 (config.json of\n"
     "#   deepseek-ai/DeepSeek-V3 on Hugging Face).\n"},
    {"gemma-2-2b", ROWOPS_OP_FUSED_ADD_RMS_NORM, 2304, 1,
     "# Model: Gemma-2-2B, hidden_size 2304 (config.json of google/gemma-2-2b\n"
     "#   on Hugging Face). Gemma 2 scales by (1 + weight) and also norms\n"
     "#   after attention and the MLP; the shapes are the same.\n"},
    {"qk-norm-128", ROWOPS_OP_RMS_NORM_ROWS, 128, 40,
     "# Model: per-head QK-norm as in Qwen3-8B: head_dim 128,\n"
     "#   num_attention_heads 32, num_key_value_heads 8 (config.json of\n"
     "#   Qwen/Qwen3-8B on Hugging Face). One rms_norm_rows call normalises\n"
     "#   the 32 query and 8 key heads of every token (the per-head weight\n"
     "#   applied apart), so B = 40 x the step's tokens; separate q and k\n"
     "#   norms would be two calls of 32 and 8 rows per token.\n"},
};

typedef struct trace_source {
    const char *key;  /* file name suffix: <model>-<key>.csv */
    const char *file; /* in the traces directory */
    const char *kind;
} trace_source;

static const trace_source traces[] = {
    {"conv", "AzureLLMInferenceTrace_conv.csv", "conversation"},
    {"code", "AzureLLMInferenceTrace_code.csv", "code completion"},
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The per-row dtypes and layouts of a model file, in file order. */
static const rowops_dtype file_dtypes[] = {ROWOPS_BF16, ROWOPS_F32};
static const opcost_layout file_layouts[] = {OPCOST_CONTIGUOUS,
                                             OPCOST_TRANSPOSED};

static void write_model_file(FILE *f, const model *m, const trace_source *t,
                             const derivation *d)
{
    fprintf(
        f,
        "# Shape set %s-%s: %s at N = %lld,\n"
        "#   B = rows per call, serving the Azure LLM inference %s trace.\n",
        m->name, t->key, rowops_op_name(m->op), (long long)m->n, t->kind);
    fputs(m->about, f);
    if (m->op == ROWOPS_OP_FUSED_ADD_RMS_NORM)
        fputs("#   The op: the residual add + RMSNorm of every layer at the "
              "hidden size,\n"
              "#   B = the step's tokens.\n",
              f);
    fprintf(f,
            "# Trace: shapes/traces/%s (%s),\n"
            "#   from github.com/Azure/AzurePublicDataset at commit\n"
            "#   b469a113cedca53ddc3bdea71a143dc4b7d8700c; data licensed CC "
            "BY 4.0.\n"
            "#   Patel et al., \"Splitwise: Efficient Generative LLM "
            "Inference Using\n"
            "#   Phase Splitting\", ISCA 2024.\n",
            t->file, t->kind);
    describe(f, d);
    char scale[32] = "";
    if (m->rows_per_token != 1)
        snprintf(scale, sizeof scale, " x %lld", (long long)m->rows_per_token);
    fprintf(f,
            "# Rows: each bin x dtype {bfloat16, float32} x layout "
            "{contiguous,\n"
            "#   transposed}; B = the bin's rows%s; freq = the bin's share,\n"
            "#   repeated (the benchmark normalises within the rows it "
            "runs).\n"
            "# Generated by `opcost shapes generate`; do not edit.\n"
            "%s\n",
            scale, OPCOST_SHAPE_HEADER);
    for (int i = 0; i < d->nbins; ++i)
        for (size_t j = 0; j < COUNT(file_dtypes); ++j)
            for (size_t k = 0; k < COUNT(file_layouts); ++k)
                fprintf(f, "%s,%lld,%lld,%s,%s,%.9g\n", rowops_op_name(m->op),
                        (long long)(d->bins[i].rows * m->rows_per_token),
                        (long long)m->n, rowops_dtype_name(file_dtypes[j]),
                        opcost_layout_name(file_layouts[k]), d->bins[i].freq);
}

/* Writes path through the one output file (outfile.h): a fresh
 * temporary beside it, renamed over it; a failed run leaves the old file
 * whole, and a link planted at the path is replaced, never written
 * through. */
static int write_file(const char *path, const model *m, const trace_source *t,
                      const derivation *d, char *err, size_t errlen)
{
    opcost_outfile o;
    if (opcost_outfile_open(&o, "--out-dir", path, err, errlen))
        return -1;
    write_model_file(o.f, m, t, d);
    return opcost_outfile_commit(&o, err, errlen);
}

/* ---- command line ---------------------------------------------------- */

#define PROG "opcost shapes"

static const char usage_text[] =
    "usage: " PROG " derive TRACE.csv [options]\n"
    "       " PROG " generate [--traces-dir DIR] [--out-dir DIR]\n"
    "       " PROG " check [--shapes-dir DIR] FILE...\n"
    "\n"
    "  derive    simulate a continuous-batching server over a request trace "
    "and\n"
    "            print the histogram of rows per call as CSV rows,freq\n"
    "  generate  regenerate the model shape files <model>-conv.csv and\n"
    "            <model>-code.csv from the committed traces\n"
    "  check     parse shape files (or set names) and report their errors\n"
    "Run '" PROG " COMMAND --help' for a command's options.\n";

static const char derive_help[] =
    "usage: " PROG " derive TRACE.csv [options]\n"
    "Simulates a continuous-batching server (the model is in "
    "bench/shapes/derive.h)\n"
    "over TRACE.csv (header TIMESTAMP,ContextTokens,GeneratedTokens) and "
    "prints\n"
    "the binned histogram of rows per call (tokens per forward step) as CSV\n"
    "'rows,freq', after '#' lines stating the model, its parameters and a\n"
    "summary of the simulation.\n"
    "  --token-budget N         most tokens in one step, 1..1048576 "
    "(default 8192)\n"
    "  --max-running N          most requests running at once, 1..token "
    "budget\n"
    "                           (default 256, or the budget if smaller)\n"
    "  --bins N                 most bins in the histogram, 1..64 (default "
    "16)\n"
    "  --step-a-ms X            fixed time of a step in ms, 0..1000 "
    "(default 5)\n"
    "  --step-b-ms-per-ktok X   time per 1000 tokens of a step in ms, "
    "0..1000\n"
    "                           (default 32)\n"
    "  -h, --help               this text\n";

static const char generate_help[] =
    "usage: " PROG " generate [--traces-dir DIR] [--out-dir DIR]\n"
    "Regenerates every model shape file, <model>-<trace>.csv for the models\n"
    "llama-3.1-8b, llama-3.1-70b, qwen2.5-7b, deepseek-v3, gemma-2-2b and\n"
    "qk-norm-128 and the traces conv and code, from\n"
    "DIR/AzureLLMInferenceTrace_{conv,code}.csv with the default scheduler\n"
    "parameters and 16 bins. The output is the same byte for byte on every "
    "run.\n"
    "  --traces-dir DIR   the traces (default shapes/traces)\n"
    "  --out-dir DIR      where the shape files go (default shapes)\n"
    "  -h, --help         this text\n";

static const char check_help[] =
    "usage: " PROG " check [--shapes-dir DIR] FILE...\n"
    "Parses each shape file (a path, or a set name resolved as opcost run\n"
    "resolves it) and reports the first error of each; exit status 2 if any\n"
    "file has one.\n"
    "  --shapes-dir DIR   where set names resolve (default: the source\n"
    "                     tree's shapes/, whatever the current directory)\n"
    "  -h, --help         this text\n";

/* Reports a usage error; returns the exit status for it. */
static int usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int usage_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, PROG " %s: ", cmd);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n(see '" PROG " %s --help')\n", cmd);
    return 2;
}

/* An integer option in lo..hi; 0, or -1 after reporting. */
static int int_option(const char *cmd, const char *opt, const char *s,
                      int64_t lo, int64_t hi, int64_t *v)
{
    if (opcost_parse_count(s, v) == 0 && *v >= lo && *v <= hi)
        return 0;
    usage_error(cmd, "%s: must be an integer in %lld..%lld, got '%s'", opt,
                (long long)lo, (long long)hi, s);
    return -1;
}

/* A time option in ms, 0..max_ms, to integer nanoseconds. */
static int ms_option(const char *cmd, const char *opt, const char *s,
                     double max_ms, int64_t *ns)
{
    char *end;
    const double x = strtod(s, &end);
    if (end != s && !*end && isfinite(x) && x >= 0 && x <= max_ms) {
        *ns = llround(x * 1e6);
        return 0;
    }
    usage_error(cmd, "%s: must be a number of ms in 0..%g, got '%s'", opt,
                max_ms, s);
    return -1;
}

/* What getopt_long returned for a bad option, as a usage error. */
static int option_error(const char *cmd, int c, char **argv)
{
    const char *opt = argv[optind - 1];
    if (c == ':')
        return usage_error(cmd, "option '%s' needs a value", opt);
    return usage_error(cmd, "unknown option '%s'", opt);
}

static int cmd_derive(int argc, char **argv)
{
    enum { O_BUDGET = 256, O_RUNNING, O_BINS, O_A, O_B };
    static const struct option opts[] = {
        {"token-budget", required_argument, NULL, O_BUDGET},
        {"max-running", required_argument, NULL, O_RUNNING},
        {"bins", required_argument, NULL, O_BINS},
        {"step-a-ms", required_argument, NULL, O_A},
        {"step-b-ms-per-ktok", required_argument, NULL, O_B},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    opcost_sched_params p = opcost_sched_defaults();
    int64_t bins = OPCOST_DEFAULT_BINS;
    int running_given = 0, c;
    const double max_ms = OPCOST_MAX_STEP_NS / 1e6;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'h': fputs(derive_help, stdout); return 0;
        case O_BUDGET:
            bad = int_option("derive", "--token-budget", optarg, 1,
                             OPCOST_MAX_TOKEN_BUDGET, &p.token_budget);
            break;
        case O_RUNNING:
            bad = int_option("derive", "--max-running", optarg, 1,
                             OPCOST_MAX_TOKEN_BUDGET, &p.max_running);
            running_given = 1;
            break;
        case O_BINS:
            bad = int_option("derive", "--bins", optarg, 1, OPCOST_MAX_BINS,
                             &bins);
            break;
        case O_A:
            bad = ms_option("derive", "--step-a-ms", optarg, max_ms,
                            &p.step_a_ns);
            break;
        case O_B:
            bad = ms_option("derive", "--step-b-ms-per-ktok", optarg, max_ms,
                            &p.step_b_ns_per_ktok);
            break;
        default: return option_error("derive", c, argv);
        }
        if (bad)
            return 2;
    }
    if (p.max_running > p.token_budget) {
        if (running_given)
            return usage_error("derive",
                               "--max-running: must not exceed "
                               "--token-budget (%lld), got %lld",
                               (long long)p.token_budget,
                               (long long)p.max_running);
        p.max_running = p.token_budget; /* the default cap cannot apply */
    }
    if (argc - optind != 1)
        return usage_error("derive", "expected one TRACE.csv, got %d",
                           argc - optind);
    derivation d;
    char err[1024];
    if (derive_trace(argv[optind], &p, (int)bins, &d, err, sizeof err) != 0) {
        fprintf(stderr, PROG " derive: %s\n", err);
        return 2; /* the trace is bad input */
    }
    printf("# Rows per call derived from %s by `" PROG " derive`.\n",
           argv[optind]);
    describe(stdout, &d);
    puts("rows,freq");
    for (int i = 0; i < d.nbins; ++i)
        printf("%lld,%.9g\n", (long long)d.bins[i].rows, d.bins[i].freq);
    opcost_sim_free(&d.sim);
    return fflush(stdout) == 0 ? 0 : 1;
}

static int cmd_generate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"traces-dir", required_argument, NULL, 't'},
        {"out-dir", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0}};
    const char *traces_dir = "shapes/traces", *out_dir = "shapes";
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        switch (c) {
        case 'h': fputs(generate_help, stdout); return 0;
        case 't': traces_dir = optarg; break;
        case 'o': out_dir = optarg; break;
        default: return option_error("generate", c, argv);
        }
    }
    if (optind != argc)
        return usage_error("generate", "unexpected argument '%s'",
                           argv[optind]);
    const opcost_sched_params p = opcost_sched_defaults();
    char err[1024], path[4096];
    for (size_t t = 0; t < COUNT(traces); ++t) {
        derivation d;
        snprintf(path, sizeof path, "%s/%s", traces_dir, traces[t].file);
        if (derive_trace(path, &p, OPCOST_DEFAULT_BINS, &d, err, sizeof err)) {
            fprintf(stderr, PROG " generate: %s\n", err);
            return 2; /* the trace is bad input */
        }
        for (size_t m = 0; m < COUNT(models); ++m) {
            snprintf(path, sizeof path, "%s/%s-%s.csv", out_dir, models[m].name,
                     traces[t].key);
            if (write_file(path, &models[m], &traces[t], &d, err, sizeof err) !=
                0) {
                fprintf(stderr, PROG " generate: %s\n", err);
                opcost_sim_free(&d.sim);
                return 1;
            }
            printf("wrote %s (%d rows)\n", path,
                   d.nbins * (int)(COUNT(file_dtypes) * COUNT(file_layouts)));
        }
        opcost_sim_free(&d.sim);
    }
    return 0;
}

static int cmd_check(int argc, char **argv)
{
    static const struct option opts[] = {
        {"help", no_argument, NULL, 'h'},
        {"shapes-dir", required_argument, NULL, 'd'},
        {NULL, 0, NULL, 0}};
    const char *shapes_dir = opcost_default_shapes_dir();
    int c;
    while ((c = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
        if (c == 'd') {
            shapes_dir = optarg;
            continue;
        }
        if (c != 'h')
            return option_error("check", c, argv);
        fputs(check_help, stdout);
        return 0;
    }
    if (optind == argc)
        return usage_error("check", "expected at least one FILE");
    int status = 0;
    for (int i = optind; i < argc; ++i) {
        char path[4096], err[1024];
        opcost_shape_set set;
        if (opcost_shape_set_resolve(argv[i], shapes_dir, path, sizeof path,
                                     err, sizeof err) != 0 ||
            opcost_shape_set_load(path, &set, err, sizeof err) != 0) {
            fprintf(stderr, "%s\n", err);
            status = 2; /* malformed input */
            continue;
        }
        printf("%s: ok, %zu rows\n", path, set.count);
        opcost_shape_set_free(&set);
    }
    return status;
}

int opcost_shapes_main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_text, stderr);
        return 2;
    }
    const char *cmd = argv[1];
    /* getopt_long sees the subcommand as its program name; optind = 0
     * restarts its scan, since this may run more than once per process. */
    optind = 0;
    opterr = 0;
    if (strcmp(cmd, "derive") == 0)
        return cmd_derive(argc - 1, argv + 1);
    if (strcmp(cmd, "generate") == 0)
        return cmd_generate(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0)
        return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0 ||
        strcmp(cmd, "help") == 0) {
        fputs(usage_text, stdout);
        return 0;
    }
    fprintf(stderr, PROG ": unknown command '%s'\n%s", cmd, usage_text);
    return 2;
}
