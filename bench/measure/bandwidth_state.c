#include "bandwidth_state.h"
#include "stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *opcost_bw_state_name(opcost_bw_state s)
{
    static const char *const names[] = {"", "full", "reduced", "mixed"};
    return (unsigned)s < OPCOST_BW_COUNT ? names[s] : "?";
}

int opcost_bw_dram_sized(double moved, size_t llc_bytes)
{
    return moved >= OPCOST_DRAM_REFERENCE_LLCS * (double)llc_bytes;
}

void opcost_bw_split_free(opcost_bw_split *s)
{
    opcost_member_free(&s->used);
}

/* GB/s of each sample, and the median of the window around each. */
static void rolling_gbps(const opcost_member *p, double bytes, double *gbps,
                         double *rolled)
{
    for (size_t i = 0; i < p->n; ++i)
        gbps[i] = p->us[i] > 0 ? bytes / (p->us[i] * 1e-6) / 1e9 : 0;
    const size_t half = OPCOST_STATE_WINDOW / 2;
    for (size_t i = 0; i < p->n; ++i) {
        const size_t lo = i > half ? i - half : 0;
        const size_t hi = i + half + 1 < p->n ? i + half + 1 : p->n;
        double w[OPCOST_STATE_WINDOW];
        memcpy(w, gbps + lo, (hi - lo) * sizeof *w);
        rolled[i] = opcost_median_inplace(w, hi - lo);
    }
}

/* The samples of p whose class is want (1 full, 0 reduced, -1 any) into
 * out. */
static int keep(const opcost_member *p, const int *full, int want,
                opcost_member *out)
{
    if (opcost_member_alloc(out, p->name, p->n))
        return -1;
    for (size_t i = 0; i < p->n; ++i)
        if (want < 0 || full[i] == want) {
            out->us[out->n] = p->us[i];
            out->device_us[out->n] = p->device_us ? p->device_us[i] : NAN;
            out->round[out->n++] = p->round[i];
        }
    return 0;
}

/* The median GB/s of the n samples whose class is want (NAN: none);
 * scratch holds n. */
static double class_median(const double *gbps, const int *full, size_t n,
                           int want, double *scratch)
{
    size_t k = 0;
    for (size_t i = 0; i < n; ++i)
        if (full[i] == want)
            scratch[k++] = gbps[i];
    return k ? opcost_median_inplace(scratch, k) : NAN;
}

int opcost_bw_split_probe(const opcost_member *probe, double bytes,
                          double reference_gbps, opcost_bw_split *out)
{
    memset(out, 0, sizeof *out);
    out->reference_gbps = out->full_gbps = out->reduced_gbps = NAN;
    out->best_rolled_gbps = NAN;
    const size_t n = probe->n;
    double *gbps = calloc(n ? n : 1, sizeof *gbps);
    double *rolled = calloc(n ? n : 1, sizeof *rolled);
    int *full = calloc(n ? n : 1, sizeof *full);
    int rc = -1;
    if (!gbps || !rolled || !full)
        goto done;
    if (isnan(reference_gbps) || !(bytes > 0) || !n) {
        rc = keep(probe, full, -1, &out->used);
        goto done;
    }
    rolling_gbps(probe, bytes, gbps, rolled);
    double best = 0;
    for (size_t i = 0; i < n; ++i)
        best = rolled[i] > best ? rolled[i] : best;
    out->best_rolled_gbps = best;
    const double ref = reference_gbps > best ? reference_gbps : best;
    out->reference_gbps = ref;
    for (size_t i = 0; i < n; ++i) {
        full[i] = rolled[i] >= OPCOST_FULL_BANDWIDTH * ref;
        out->full += (size_t)full[i];
    }
    out->reduced = n - out->full;
    /* rolled is done with: the scratch of the medians */
    out->full_gbps = class_median(gbps, full, n, 1, rolled);
    out->reduced_gbps = class_median(gbps, full, n, 0, rolled);
    int want = -1;
    if (out->full >= OPCOST_PAIRED_MIN || !out->reduced)
        want = 1, out->state = OPCOST_BW_FULL;
    else if (out->reduced >= OPCOST_PAIRED_MIN || !out->full)
        want = 0, out->state = OPCOST_BW_REDUCED;
    else
        out->state = OPCOST_BW_MIXED;
    rc = keep(probe, full, want, &out->used);
done:
    free(gbps);
    free(rolled);
    free(full);
    return rc;
}
