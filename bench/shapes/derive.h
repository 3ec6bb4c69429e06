/* Rows per call from a request trace: a continuous-batching scheduler
 * simulation turns the trace's requests into forward steps, and each step is
 * one call of every per-layer norm with B = the tokens of that step.
 *
 * The scheduler model (also stated in every generated shape file):
 *   - requests arrive at their trace timestamps;
 *   - a step schedules at most token_budget tokens (default 8192), and at
 *     most max_running requests (default 256) run at once;
 *   - a step first schedules one decode token for every running request
 *     whose prefill is complete, then prefill chunks first-come-first-served
 *     (the partially prefilled request, then waiting requests in arrival
 *     order), each chunk as large as the remaining budget allows (chunked
 *     prefill); a waiting request joins the running set, if fewer than
 *     max_running run, when its first chunk is scheduled;
 *   - the step that completes a request's prefill yields its first generated
 *     token; GeneratedTokens - 1 decode steps follow, then it leaves;
 *   - step time = a + b * tokens of the step. Defaults: a = 5 ms and b = 32
 *     ms per 1000 tokens, Llama-3.1-8B in bfloat16 on one H100 SXM: a is one
 *     read of its 16.1 GB of weights at 3.35 TB/s (4.8 ms); b is 2 * 8.03e9
 *     FLOP per token at half the 989 TFLOPS dense bfloat16 peak (32 us);
 *   - with nothing to run, the clock jumps to the next arrival;
 *   - not modelled: KV-cache capacity, preemption, attention cost growing
 *     with context, speculative decoding.
 * max_running may not exceed token_budget (as in vLLM), so every running
 * decode always fits in its step. The clock counts integer nanoseconds (a
 * and b are rounded to 1 ns and 1 ns per 1000 tokens), so results are
 * identical on every machine.
 *
 * Histogram: steps are binned by B into power-of-two bins [2^k, 2^(k+1));
 * if more than max_bins bins would be non-empty, the edges are widened to
 * [2^(wk), 2^(w(k+1))) with the smallest w that fits. A bin's rows is the
 * mean B of its steps, rounded half up (the mean keeps the bin's total
 * tokens, which a cost linear in B needs); its freq is its share of the
 * steps, so the freqs sum to 1. */
#ifndef OPCOST_DERIVE_H
#define OPCOST_DERIVE_H

#include "trace.h"

#include <stddef.h>
#include <stdint.h>

#define OPCOST_DEFAULT_TOKEN_BUDGET 8192
#define OPCOST_DEFAULT_MAX_RUNNING 256
#define OPCOST_DEFAULT_STEP_A_NS 5000000           /* 5 ms */
#define OPCOST_DEFAULT_STEP_B_NS_PER_KTOK 32000000 /* 32 ms per 1000 */
#define OPCOST_DEFAULT_BINS 16

#define OPCOST_MAX_TOKEN_BUDGET 1048576
#define OPCOST_MAX_STEP_NS 1000000000 /* bound of a, and of b per 1000 */
#define OPCOST_MAX_BINS 64

typedef struct opcost_sched_params {
    int64_t token_budget;       /* 1..OPCOST_MAX_TOKEN_BUDGET */
    int64_t max_running;        /* 1..token_budget */
    int64_t step_a_ns;          /* 0..OPCOST_MAX_STEP_NS */
    int64_t step_b_ns_per_ktok; /* 0..OPCOST_MAX_STEP_NS */
} opcost_sched_params;

/* The defaults above. */
opcost_sched_params opcost_sched_defaults(void);

typedef struct opcost_sim {
    int64_t *step_rows; /* B of every step, in order; each >= 1 */
    size_t steps;
    int64_t tokens;      /* sum of step_rows */
    int64_t duration_ns; /* first arrival to the end of the last step */
} opcost_sim;

/* Runs the scheduler over requests (arrival_s >= 0 and not decreasing,
 * token counts 1..INT32_MAX). Returns 0, or -1 with a message naming the
 * request or parameter and the rule in err (*out needs no free then). */
int opcost_simulate(const opcost_request *requests, size_t count,
                    const opcost_sched_params *params, opcost_sim *out,
                    char *err, size_t errlen);

void opcost_sim_free(opcost_sim *sim);

typedef struct opcost_bin {
    int64_t lo, hi; /* B in [lo, hi) */
    int64_t steps;  /* steps in the bin, >= 1 */
    int64_t rows;   /* mean B of those steps, rounded half up */
    double freq;    /* steps / all steps */
} opcost_bin;

/* Bins steps (each B in 1..INT32_MAX) into at most max_bins
 * (1..OPCOST_MAX_BINS) non-empty bins, ascending, written to bins (room for
 * OPCOST_MAX_BINS). Returns their count, or -1 with a message in err. */
int opcost_bin_steps(const int64_t *step_rows, size_t steps, int max_bins,
                     opcost_bin *bins, char *err, size_t errlen);

/* The `opcost shapes` command line: argv[0] is "shapes" (not read), then
 *   derive TRACE.csv [--token-budget N] [--max-running N] [--bins N]
 *          [--step-a-ms X] [--step-b-ms-per-ktok X]
 *   generate [--traces-dir DIR] [--out-dir DIR]
 *   check FILE...
 * Returns the exit status: 0 ok, 1 bad input or failure, 2 usage error. */
int opcost_shapes_main(int argc, char **argv);

#endif
