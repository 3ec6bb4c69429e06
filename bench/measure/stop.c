#include "stop.h"
#include "stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Stopping rules. */
static int hit_cap(opcost_stop_rule *r, size_t n)
{
    if (r->max_samples && n >= r->max_samples) {
        r->stopped_by = "max_samples";
        return 1;
    }
    return 0;
}

static int budget_should_stop(opcost_stop_rule *r, const double *samples,
                              size_t n, double elapsed_s)
{
    (void)samples;
    if (hit_cap(r, n))
        return 1;
    if (n >= r->min_samples && elapsed_s >= r->budget_s) {
        r->stopped_by = "budget";
        return 1;
    }
    return 0;
}

static int noise_should_stop(opcost_stop_rule *r, const double *samples,
                             size_t n, double elapsed_s)
{
    if (hit_cap(r, n))
        return 1;
    if (n < r->min_samples)
        return 0;
    if (n >= r->next_check) {
        if (n > r->scratch_cap) {
            size_t cap = r->scratch_cap ? r->scratch_cap : 64;
            while (cap < n)
                cap *= 2;
            double *p = realloc(r->scratch, cap * sizeof *p);
            if (!p)
                return -1;
            r->scratch = p;
            r->scratch_cap = cap;
        }
        r->last_ci95_rel = opcost_median_ci95_rel(samples, n, r->scratch);
        const size_t step = n / 16 > r->check_every ? n / 16 : r->check_every;
        r->next_check = n + step;
        if (r->last_ci95_rel <= r->target_rel) {
            r->stopped_by = "noise";
            return 1;
        }
    }
    if (elapsed_s >= r->budget_s) {
        r->stopped_by = "budget";
        return 1;
    }
    return 0;
}

static int check_budget(double budget_s, char *err, size_t errlen)
{
    if (!(budget_s >= 0.0) || !isfinite(budget_s)) {
        snprintf(err, errlen, "budget_s: must be finite and >= 0 (got %g)",
                 budget_s);
        return -1;
    }
    return 0;
}

int opcost_stop_budget(opcost_stop_rule *r, double budget_s, size_t min_samples,
                       char *err, size_t errlen)
{
    if (check_budget(budget_s, err, errlen))
        return -1;
    if (min_samples < 1) {
        snprintf(err, errlen, "min_samples: must be >= 1 (got %zu)",
                 min_samples);
        return -1;
    }
    memset(r, 0, sizeof *r);
    r->should_stop = budget_should_stop;
    r->name = "budget";
    r->budget_s = budget_s;
    r->min_samples = min_samples;
    r->target_rel = NAN;
    opcost_stop_reset(r);
    return 0;
}

int opcost_stop_noise(opcost_stop_rule *r, double target_rel, double budget_s,
                      size_t min_samples, size_t check_every, char *err,
                      size_t errlen)
{
    if (!(target_rel > 0.0 && target_rel < 1.0)) {
        snprintf(err, errlen, "target_rel: must be in (0, 1) (got %g)",
                 target_rel);
        return -1;
    }
    if (check_budget(budget_s, err, errlen))
        return -1;
    if (min_samples < 6) {
        snprintf(err, errlen,
                 "min_samples: must be >= 6, the fewest samples with a 95%% "
                 "interval of the median (got %zu)",
                 min_samples);
        return -1;
    }
    if (check_every < 1) {
        snprintf(err, errlen, "check_every: must be >= 1 (got %zu)",
                 check_every);
        return -1;
    }
    memset(r, 0, sizeof *r);
    r->should_stop = noise_should_stop;
    r->name = "noise";
    r->budget_s = budget_s;
    r->min_samples = min_samples;
    r->target_rel = target_rel;
    r->check_every = check_every;
    opcost_stop_reset(r);
    return 0;
}

void opcost_stop_reset(opcost_stop_rule *r)
{
    r->stopped_by = NULL;
    r->last_ci95_rel = NAN;
    r->next_check = 0;
}

void opcost_stop_free(opcost_stop_rule *r)
{
    free(r->scratch);
    r->scratch = NULL;
    r->scratch_cap = 0;
}
