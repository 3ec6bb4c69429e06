/* One row of results and one raw sample: the types every stage shares
 * (the engine fills them, bench/results/results_csv.h writes and reads
 * them, analysis reads them). Columns are documented in results/README.md. */
#ifndef OPCOST_ROW_H
#define OPCOST_ROW_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Where a row's parts come from (the attribution_source column). */
typedef enum opcost_attribution_source {
    OPCOST_ATTRIBUTION_DIFFERENTIAL = 0,
    OPCOST_ATTRIBUTION_RECORD_FUNCTION,
    OPCOST_ATTRIBUTION_CUPTI,
    OPCOST_ATTRIBUTION_SOURCE_COUNT
} opcost_attribution_source;

const char *opcost_attribution_source_name(opcost_attribution_source s);

/* Capacity of text fields, including the terminating NUL. */
#define OPCOST_TEXT_MAX 128
#define OPCOST_NOTE_MAX 1024

/* An integer column left empty (does not apply). */
#define OPCOST_INT_NA INT64_MIN

typedef enum opcost_status {
    OPCOST_STATUS_OK = 0,
    OPCOST_STATUS_SKIPPED,
    OPCOST_STATUS_WRONG,
    OPCOST_STATUS_ERROR
} opcost_status;

typedef enum opcost_cache_state {
    OPCOST_CACHE_COLD = 0,
    OPCOST_CACHE_WARM
} opcost_cache_state;

/* One row, one field per column in column order. A double that does not
 * apply is NAN (written empty); an integer that does not apply is
 * OPCOST_INT_NA (written empty); text may be empty unless required. */
typedef struct opcost_result {
    int64_t schema_version;
    char run_id[OPCOST_TEXT_MAX];
    char timestamp_utc[OPCOST_TEXT_MAX];
    char git_sha[OPCOST_TEXT_MAX];
    char host[OPCOST_TEXT_MAX];
    char cpu[OPCOST_TEXT_MAX];
    char gpu[OPCOST_TEXT_MAX];
    char torch_version[OPCOST_TEXT_MAX];
    char device[OPCOST_TEXT_MAX];
    int64_t threads;
    char distribution[OPCOST_TEXT_MAX];
    char op[OPCOST_TEXT_MAX];
    int64_t B;
    int64_t N;
    char dtype[OPCOST_TEXT_MAX];
    char weight_dtype[OPCOST_TEXT_MAX];
    char layout[OPCOST_TEXT_MAX];
    char freq[OPCOST_TEXT_MAX];
    char path[OPCOST_TEXT_MAX];
    char variant[OPCOST_TEXT_MAX];
    char dispatch_path[OPCOST_TEXT_MAX];
    opcost_cache_state cache_state;
    opcost_status status;
    int64_t reps;
    int64_t n_samples;
    double median_us;
    double min_us;
    double p90_us;
    double mean_us;
    double stddev_us;
    double ci95_rel;
    double device_us; /* GPU: device time per call (CUDA events) */
    double compile_ms;
    double kernel_us;
    double other_kernel_us; /* compute of kernels other than ours */
    double conversion_us;
    double launch_us;
    double dispatch_us;
    double idle_us;
    /* differential, record_function or cupti (bench/measure/attribution.h) */
    char attribution_source[OPCOST_TEXT_MAX];
    double tracer_overhead; /* traced median / untraced median */
    int64_t bytes;
    double gbps;
    double ceiling_gbps;
    double frac_of_peak;
    double sm_clock_mhz;                    /* GPU: SM clock at the point */
    char throttle_reasons[OPCOST_TEXT_MAX]; /* GPU: clock event reasons */
    /* which ceiling frac_of_peak divides by ("dram fused nt", "l3 rows
     * plain", ...) and the bytes one call touches (its level) */
    char ceiling_kind[OPCOST_TEXT_MAX];
    int64_t working_set_bytes;
    /* the distribution-free interval of the pooled samples' median (what
     * ci95_rel was in version 1) */
    double ci95_pooled_rel;
    /* version 3 */
    double ci95_reps_rel; /* the repetitions' own interval (v2's ci95_rel) */
    double run_noise_rel; /* the run's run-to-run noise (per run) */
    /* version 4: paired measurement (rounds; bench/measure/rounds.h) */
    char paired_with[OPCOST_TEXT_MAX]; /* the member `ratio` is against */
    double ratio;                      /* this member's time / paired_with's */
    double ratio_ci95_rel; /* its 95 % interval: ratio / (1+c) .. ratio (1+c) */
    double p_value; /* the paired test of ratio = 1, before any correction */
    char verdict[OPCOST_TEXT_MAX]; /* same, faster, slower or unsure */
    int64_t rounds;                /* the rounds `ratio` rests on */
    double frac_of_peak_ci95_rel;  /* frac_of_peak's interval (paired) */
    double frac_of_peak_best;      /* gbps / ceiling_gbps (v3's figure) */
    double probe_gbps; /* the probe paired with the row, at this point */
    char stopped_by[OPCOST_TEXT_MAX]; /* why the point's rounds ended */
    char side[OPCOST_TEXT_MAX];       /* opcost ab: base or new */
    /* version 5: the model paths (bench/python/opcost_model.py) */
    double norm_share;     /* the norm's share of one call of the model */
    int64_t graph_breaks;  /* compiled: Dynamo's graph breaks */
    int64_t recompiles;    /* compiled: graphs compiled while timing */
    int64_t op_calls;      /* compiled: rowops calls in the output code */
    int64_t copies_around; /* compiled: copy or cast kernels next to them */
    /* compiled: the generated kernels that read or write the norm's
     * tensors (or, without rowops calls, that compute the norm) */
    char fusion_boundary[OPCOST_NOTE_MAX];
    /* version 6: the host's bandwidth in the rounds frac_of_peak rests on
     * (bench/measure/bandwidth_state.h): full, reduced, mixed; empty where
     * the point does not stream from DRAM */
    char probe_state[OPCOST_TEXT_MAX];
    /* version 7: the path's error against the float64 reference at its
     * verification, in units of 2^-p of each element's magnitude (p: the
     * dtype's significand bits): out (y) and residual_out (h) */
    double out_err_units;
    double residual_err_units;
    char note[OPCOST_NOTE_MAX];
} opcost_result;

/* A row with schema_version set, every number "does not apply", every text
 * empty, status ok and cache_state warm. */
void opcost_result_init(opcost_result *row);

/* One raw sample of a row (the sidecar: results_csv.h). */
typedef struct opcost_sample {
    int64_t point;
    int64_t rep;    /* 0-based repetition */
    int64_t sample; /* 0-based index within the repetition */
    double us;
    /* the round of the point it was taken in (OPCOST_INT_NA: sidecars of
     * schema versions 1-3, which had no rounds) */
    int64_t round;
} opcost_sample;

const char *opcost_status_name(opcost_status s);
const char *opcost_cache_state_name(opcost_cache_state c);

#ifdef __cplusplus
}
#endif

#endif
