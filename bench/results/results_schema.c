/* The results CSV's schema (results_schema.h): the column table, the
 * names of its enums, a fresh row, the row rules and the columns of each
 * schema version. */
#include "results_schema.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *opcost_attribution_source_name(opcost_attribution_source s)
{
    static const char *const names[] = {"differential", "record_function",
                                        "cupti"};
    return (unsigned)s < OPCOST_ATTRIBUTION_SOURCE_COUNT ? names[s] : "?";
}

/* The type comes from the struct member itself, so table and struct cannot
 * disagree; the two enums are named explicitly (both are unsigned int). */
#define MEMBER(f) (((opcost_result *)0)->f)
#define KIND(f)                                                                \
    _Generic(MEMBER(f), char * : T_TEXT, int64_t : T_INT, double : T_NUM)
#define SIZE(f) sizeof MEMBER(f)
#define COL(f, req) #f, KIND(f), offsetof(opcost_result, f), SIZE(f), req
#define ENUM_COL(f, t) #f, t, offsetof(opcost_result, f), SIZE(f), 1

const column results_columns[] = {
    {COL(schema_version, 1), 1},
    {COL(run_id, 1), 1},
    {COL(timestamp_utc, 1), 1},
    {COL(git_sha, 0), 1},
    {COL(host, 0), 1},
    {COL(cpu, 0), 1},
    {COL(gpu, 0), 1},
    {COL(torch_version, 0), 1},
    {COL(device, 0), 1},
    {COL(threads, 0), 1},
    {COL(distribution, 0), 1},
    {COL(op, 1), 1},
    {COL(B, 0), 1},
    {COL(N, 0), 1},
    {COL(dtype, 0), 1},
    {COL(weight_dtype, 0), 1},
    {COL(layout, 0), 1},
    {COL(freq, 0), 1},
    {COL(path, 1), 1},
    {COL(variant, 0), 1},
    {COL(dispatch_path, 0), 1},
    {ENUM_COL(cache_state, T_CACHE), 1},
    {ENUM_COL(status, T_STATUS), 1},
    {COL(reps, 0), 1},
    {COL(n_samples, 0), 1},
    {COL(median_us, 0), 1},
    {COL(min_us, 0), 1},
    {COL(p90_us, 0), 1},
    {COL(mean_us, 0), 1},
    {COL(stddev_us, 0), 1},
    {COL(ci95_rel, 0), 1},
    {COL(compile_ms, 0), 1},
    {COL(kernel_us, 0), 1},
    {COL(conversion_us, 0), 1},
    {COL(launch_us, 0), 1},
    {COL(dispatch_us, 0), 1},
    {COL(idle_us, 0), 1},
    {COL(bytes, 0), 1},
    {COL(gbps, 0), 1},
    {COL(ceiling_gbps, 0), 1},
    {COL(frac_of_peak, 0), 1},
    {COL(note, 0), 1},
    /* version 2: measured attribution, the GPU, ceilings per op mix */
    {COL(device_us, 0), 2},
    {COL(other_kernel_us, 0), 2},
    {COL(attribution_source, 0), 2},
    {COL(tracer_overhead, 0), 2},
    {COL(sm_clock_mhz, 0), 2},
    {COL(throttle_reasons, 0), 2},
    {COL(ceiling_kind, 0), 2},
    {COL(working_set_bytes, 0), 2},
    {COL(ci95_pooled_rel, 0), 2},
    /* version 3: intervals that include the run-to-run noise */
    {COL(ci95_reps_rel, 0), 3},
    {COL(run_noise_rel, 0), 3},
    /* version 4: paired measurement in rounds */
    {COL(paired_with, 0), 4},
    {COL(ratio, 0), 4},
    {COL(ratio_ci95_rel, 0), 4},
    {COL(p_value, 0), 4},
    {COL(verdict, 0), 4},
    {COL(rounds, 0), 4},
    {COL(frac_of_peak_ci95_rel, 0), 4},
    {COL(frac_of_peak_best, 0), 4},
    {COL(probe_gbps, 0), 4},
    {COL(stopped_by, 0), 4},
    {COL(side, 0), 4},
    /* version 5: the model paths' evidence */
    {COL(norm_share, 0), 5},
    {COL(graph_breaks, 0), 5},
    {COL(recompiles, 0), 5},
    {COL(op_calls, 0), 5},
    {COL(copies_around, 0), 5},
    {COL(fusion_boundary, 0), 5},
    /* version 6: the bandwidth state of the paired fraction's rounds */
    {COL(probe_state, 0), 6},
    /* version 7: the measured error at verification */
    {COL(out_err_units, 0), 7},
    {COL(residual_err_units, 0), 7},
};
_Static_assert(sizeof results_columns / sizeof results_columns[0] ==
                   RESULTS_NCOLS,
               "RESULTS_NCOLS (results_schema.h) must count the table");

static const char *const status_names[] = {"ok", "skipped", "wrong", "error"};
static const char *const cache_names[] = {"cold", "warm"};
#define NSTATUS (sizeof status_names / sizeof status_names[0])
#define NCACHE (sizeof cache_names / sizeof cache_names[0])

const char *const results_sample_columns[] = {
    "run_id", "point", "path", "variant", "rep", "sample", "us", "round"};
_Static_assert(sizeof results_sample_columns /
                       sizeof results_sample_columns[0] ==
                   RESULTS_NSAMPLE_COLS,
               "RESULTS_NSAMPLE_COLS (results_schema.h) must count them");

size_t opcost_results_ncolumns(void)
{
    return RESULTS_NCOLS;
}

const char *opcost_results_column_name(size_t i)
{
    return i < RESULTS_NCOLS ? results_columns[i].name : NULL;
}

int opcost_results_header(char *buf, size_t len)
{
    size_t used = 0;
    for (size_t i = 0; i < RESULTS_NCOLS; ++i) {
        const int w = snprintf(buf + used, len > used ? len - used : 0, "%s%s",
                               i ? "," : "", results_columns[i].name);
        used += (size_t)w;
    }
    return used < len ? (int)used : -1;
}

const char *opcost_status_name(opcost_status s)
{
    return (unsigned)s < NSTATUS ? status_names[s] : "?";
}

const char *opcost_cache_state_name(opcost_cache_state c)
{
    return (unsigned)c < NCACHE ? cache_names[c] : "?";
}

void opcost_result_init(opcost_result *row)
{
    memset(row, 0, sizeof *row);
    for (size_t i = 0; i < RESULTS_NCOLS; ++i) {
        void *p = (char *)row + results_columns[i].offset;
        if (results_columns[i].type == T_INT)
            *(int64_t *)p = OPCOST_INT_NA;
        else if (results_columns[i].type == T_NUM)
            *(double *)p = NAN;
    }
    row->schema_version = OPCOST_RESULTS_SCHEMA_VERSION;
    row->status = OPCOST_STATUS_OK;
    row->cache_state = OPCOST_CACHE_WARM;
}

const void *results_field_ptr(const opcost_result *r, const column *c)
{
    return (const char *)r + c->offset;
}

unsigned results_enum_value(const opcost_result *r, const column *c)
{
    return c->type == T_STATUS
               ? (unsigned)*(const opcost_status *)results_field_ptr(r, c)
               : (unsigned)*(const opcost_cache_state *)results_field_ptr(r, c);
}

const char *const *results_enum_names(const column *c, size_t *count)
{
    *count = c->type == T_STATUS ? NSTATUS : NCACHE;
    return c->type == T_STATUS ? status_names : cache_names;
}

size_t results_column_index(const char *name)
{
    for (size_t i = 0; i < RESULTS_NCOLS; ++i)
        if (!strcmp(results_columns[i].name, name))
            return i;
    return 0;
}

/* The text columns of version 4 that hold one of a few names (or are
 * empty: does not apply). */
static int check_names(const opcost_result *r, size_t *bad, char *msg,
                       size_t len)
{
    static const struct {
        const char *column;
        size_t offset;
        const char *names[6];
    } named[] = {
        {"verdict",
         offsetof(opcost_result, verdict),
         {"same", "faster", "slower", "unsure"}},
        {"stopped_by",
         offsetof(opcost_result, stopped_by),
         {"target", "budget", "rounds", "interrupted", "failed"}},
        {"side", offsetof(opcost_result, side), {"base", "new"}},
    };
    for (size_t i = 0; i < sizeof named / sizeof named[0]; ++i) {
        const char *v = (const char *)r + named[i].offset;
        int known = !v[0];
        char list[128] = "";
        for (int k = 0; k < 6 && named[i].names[k]; ++k) {
            known |= !strcmp(v, named[i].names[k]);
            const size_t u = strlen(list);
            snprintf(list + u, sizeof list - u, "%s%s", k ? ", " : "",
                     named[i].names[k]);
        }
        if (!known) {
            *bad = results_column_index(named[i].column);
            snprintf(msg, len, "%s: \"%.64s\" is not one of %s (or empty)",
                     named[i].column, v, list);
            return -1;
        }
    }
    return 0;
}

/* The row rules (results_schema.h). */
int results_check_row(const opcost_result *r, size_t *bad, char *msg,
                      size_t len)
{
    for (size_t i = 0; i < RESULTS_NCOLS; ++i) {
        const column *c = &results_columns[i];
        const void *p = results_field_ptr(r, c);
        *bad = i;
        if (c->type == T_TEXT) {
            const char *s = p;
            if (!memchr(s, '\0', c->size)) {
                snprintf(msg, len,
                         "%s: text is not NUL-terminated within "
                         "its %zu bytes",
                         c->name, c->size);
                return -1;
            }
            if (c->required && !s[0]) {
                snprintf(msg, len, "%s: is required (empty)", c->name);
                return -1;
            }
        } else if (c->type == T_INT) {
            const int64_t v = *(const int64_t *)p;
            if (v == OPCOST_INT_NA) {
                if (c->required) {
                    snprintf(msg, len, "%s: is required (empty)", c->name);
                    return -1;
                }
            } else if (c->offset == offsetof(opcost_result, schema_version) &&
                       (v < 1 || v > OPCOST_RESULTS_SCHEMA_VERSION)) {
                snprintf(msg, len,
                         "schema_version: %" PRId64 " is not a version this "
                         "code reads (1 to %d)",
                         v, OPCOST_RESULTS_SCHEMA_VERSION);
                return -1;
            } else if (v < 0) {
                /* Every schema-1 number is a count, size, time or ratio. */
                snprintf(msg, len, "%s: %" PRId64 " must be >= 0", c->name, v);
                return -1;
            }
        } else if (c->type == T_NUM) {
            const double v = *(const double *)p;
            if (!isnan(v) && !(isfinite(v) && v >= 0.0)) {
                snprintf(msg, len,
                         "%s: %g must be finite and >= 0 (NAN for "
                         "empty)",
                         c->name, v);
                return -1;
            }
        } else {
            size_t count;
            results_enum_names(c, &count);
            if (results_enum_value(r, c) >= count) {
                snprintf(msg, len, "%s: enum value %u is out of range", c->name,
                         results_enum_value(r, c));
                return -1;
            }
        }
    }
    if (r->attribution_source[0]) {
        int known = 0;
        for (int k = 0; k < OPCOST_ATTRIBUTION_SOURCE_COUNT; ++k)
            known |= !strcmp(r->attribution_source,
                             opcost_attribution_source_name(k));
        if (!known) {
            *bad = results_column_index("attribution_source");
            snprintf(msg, len,
                     "attribution_source: \"%.64s\" is not one of "
                     "differential, record_function, cupti",
                     r->attribution_source);
            return -1;
        }
    }
    if (check_names(r, bad, msg, len))
        return -1;
    /* freq weighs the row in every expected cost: a finite number > 0, as
     * the shape files require (a freq of -1 made a gate's regression), or
     * empty (a row of no distribution) */
    char *end;
    const double freq = strtod(r->freq, &end);
    if (r->freq[0] &&
        (end == r->freq || *end || !isfinite(freq) || !(freq > 0))) {
        *bad = results_column_index("freq");
        snprintf(msg, len, "freq: \"%.64s\" must be a finite number > 0",
                 r->freq);
        return -1;
    }
    if (r->status == OPCOST_STATUS_OK) {
        if (isnan(r->median_us) || isnan(r->min_us)) {
            *bad = results_column_index(isnan(r->median_us) ? "median_us"
                                                            : "min_us");
            snprintf(msg, len, "%s: is required when status is ok",
                     results_columns[*bad].name);
            return -1;
        }
        if (r->n_samples == OPCOST_INT_NA || r->n_samples < 1) {
            *bad = results_column_index("n_samples");
            snprintf(msg, len, "n_samples: must be >= 1 when status is ok");
            return -1;
        }
        if (!(r->median_us > 0)) {
            *bad = results_column_index("median_us");
            snprintf(msg, len,
                     "median_us: %g must be > 0 when status is ok (a call "
                     "takes time)",
                     r->median_us);
            return -1;
        }
    }
    if (r->status == OPCOST_STATUS_SKIPPED && !isnan(r->median_us)) {
        *bad = results_column_index("median_us");
        snprintf(msg, len,
                 "median_us: must be empty when status is skipped "
                 "(nothing was measured)");
        return -1;
    }
    return 0;
}

int opcost_result_check(const opcost_result *row, const char *where, char *err,
                        size_t errlen)
{
    char msg[256];
    size_t bad;
    if (results_check_row(row, &bad, msg, sizeof msg)) {
        snprintf(err, errlen, "%s: %s", where, msg);
        return -1;
    }
    return 0;
}

void results_versions_init(results_versions *s)
{
    for (int v = 1; v <= OPCOST_RESULTS_SCHEMA_VERSION; ++v) {
        size_t k = 0;
        for (size_t i = 0; i < RESULTS_NCOLS; ++i) {
            if (results_columns[i].since > v)
                continue;
            s->col[v - 1][k] = i;
            s->names[v - 1][k++] = results_columns[i].name;
        }
        s->n[v - 1] = k;
    }
}
