#include "verify.h"
#include "reference_f64.h"
#include "rowops_bridge.h"
#include "rowops_elem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void opcost_tolerance(rowops_dtype dt, double *rtol, double *atol)
{
    switch (dt) {
    case ROWOPS_F16: *rtol = 1.5e-3, *atol = 1e-5; break;
    case ROWOPS_BF16: *rtol = 1e-2, *atol = 1e-4; break;
    case ROWOPS_F64: *rtol = 1e-12, *atol = 1e-14; break;
    default: *rtol = 1e-5, *atol = 1e-6; break;
    }
}

static int close_enough(double got, double want, double rtol, double atol)
{
    if (isnan(want))
        return isnan(got);
    return fabs(got - want) <= atol + rtol * fabs(want);
}

/* One row's call: rank-1 descriptors of row `row` of each input. */
static rowops_tensor row_of(const rowops_tensor *t, int64_t row)
{
    rowops_tensor r = *t;
    r.data = rowops_tensor_row_ptr(t, row);
    r.rank = 1;
    r.sizes[0] = t->sizes[t->rank - 1];
    r.strides[0] = t->strides[t->rank - 1];
    return r;
}

/* The dtype's significand bits (p: its rounding is 2^-p relative at most)
 * and its smallest normal (below it the relative error means nothing). */
static void rounding_of(rowops_dtype dt, int *p, double *tiny)
{
    *p = dt == ROWOPS_BF16  ? 8
         : dt == ROWOPS_F16 ? 11
         : dt == ROWOPS_F32 ? 24
                            : 53;
    *tiny = dt == ROWOPS_F16   ? ldexp(1, -14)
            : dt == ROWOPS_F64 ? ldexp(1, -1022)
                               : ldexp(1, -126);
}

/* Checks one row against want within (rtol, atol); *units keeps the
 * largest error seen, in units of 2^-p relative (rounding_of). */
static int check_row(const char *name, const rowops_tensor *t, int64_t row,
                     const double *want, int64_t n, double rtol, double atol,
                     double *units, char *why, size_t len)
{
    const rowops_tensor r = row_of(t, row);
    int p;
    double tiny;
    rounding_of(r.dtype, &p, &tiny);
    for (int64_t i = 0; i < n; ++i) {
        const double got = rowops_load_d(r.data, i * r.strides[0], r.dtype);
        const double mag = fabs(want[i]);
        if (mag >= tiny && isfinite(got)) {
            const double u = ldexp(fabs(got - want[i]) / mag, p);
            *units = isnan(*units) || u > *units ? u : *units;
        }
        if (!close_enough(got, want[i], rtol, atol)) {
            snprintf(why, len,
                     "%s[%lld, %lld] = %.9g, expected %.9g (rtol %g, atol %g)",
                     name, (long long)row, (long long)i, got, want[i], rtol,
                     atol);
            return 1;
        }
    }
    return 0;
}

/* The reference of the checked rows of `set`, computed on first use.
 * Every row up to OPCOST_VERIFY_ALL_ELEMS elements; beyond, rows spread
 * evenly (the first and last included), so huge points do not spend
 * seconds in the double-precision reference. */
static const opcost_expected *expected_for(opcost_workload *w, int set)
{
    opcost_expected *e = &w->expected;
    if (e->set == set && e->eps == w->c.eps)
        return e;
    free(e->out);
    free(e->h);
    free(e->rstd);
    memset(e, 0, sizeof *e);
    e->set = -1;
    const int64_t n = w->c.N, B = w->c.B;
    const int fused = w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    e->step = B * n <= OPCOST_VERIFY_ALL_ELEMS
                  ? 1
                  : (B + OPCOST_VERIFY_ROWS - 1) / OPCOST_VERIFY_ROWS;
    e->rows = (B + 2 * e->step - 2) / e->step; /* the last row included */
    e->out = malloc(sizeof(double) * (size_t)(e->rows * n + 1));
    e->h = fused ? malloc(sizeof(double) * (size_t)(e->rows * n + 1)) : NULL;
    e->rstd = malloc(sizeof(double) * (size_t)e->rows);
    if (!e->out || !e->rstd || (fused && !e->h))
        return NULL;
    const rowops_call whole = opcost_workload_host_call(w, set);
    for (int64_t j = 0; j < e->rows; ++j) {
        const int64_t row = j * e->step < B ? j * e->step : B - 1;
        rowops_call c = whole;
        c.x = row_of(&whole.x, row);
        if (fused)
            c.residual = row_of(&whole.residual, row);
        rowops_reference_f64(&c, e->out + j * n, fused ? e->h + j * n : NULL,
                             &e->rstd[j]);
    }
    e->set = set;
    e->eps = w->c.eps;
    return e;
}

/* The bytes a descriptor's elements span (non-negative strides). */
static size_t extent_bytes(const rowops_tensor *t)
{
    int64_t last = 0;
    for (int d = 0; d < t->rank; ++d) {
        if (t->sizes[d] == 0)
            return 0;
        last += (t->sizes[d] - 1) * t->strides[d];
    }
    return (size_t)(last + 1) * rowops_dtype_size(t->dtype);
}

/* A GPU output copied to the host (into *copy, malloc'd), so it can be
 * read; a host output as it is. -1 with why on failure. */
static int readable(const rowops_tensor *t, rowops_tensor *host, void **copy,
                    char *why, size_t len)
{
    *host = *t;
    *copy = NULL;
    if (!t->data || t->device != ROWOPS_DEVICE_CUDA)
        return 0;
    const size_t bytes = extent_bytes(t);
    *copy = malloc(bytes ? bytes : 1);
    char e[256];
    if (!*copy || rowops_bridge_cuda_copy(*copy, t->data, bytes,
                                          ROWOPS_BRIDGE_TO_HOST, e, sizeof e)) {
        snprintf(why, len, "cannot read an output back from the GPU: %s",
                 *copy ? e : "out of memory");
        return -1;
    }
    host->data = *copy;
    host->device = ROWOPS_DEVICE_CPU;
    return 0;
}

static int verify_host(opcost_workload *w, int set, const opcost_outputs *got,
                       double scale, char *why, size_t len);

/* A wrong rstd of the fused op, explained where it can be: the contract
 * rounds h = x + residual to x's dtype before the reduction; an rstd that
 * matches the reduction over the unrounded sum (exact in double) says the
 * code skipped that rounding (Inductor's fused kernels keep h in float32
 * unless they emulate eager's casts). Appended to why. */
static void explain_rstd(opcost_workload *w, int set, int64_t row, double got,
                         double rtol, double atol, char *why, size_t len)
{
    if (w->c.dtype == ROWOPS_F32 || w->c.dtype == ROWOPS_F64)
        return; /* the sum is already in the dtype the reduction reads */
    const rowops_call c = opcost_workload_host_call(w, set);
    const rowops_tensor x = row_of(&c.x, row), r = row_of(&c.residual, row);
    const int64_t n = w->c.N;
    double ss = 0;
    for (int64_t i = 0; i < n; ++i) {
        const double h = rowops_load_d(x.data, i * x.strides[0], x.dtype) +
                         rowops_load_d(r.data, i * r.strides[0], r.dtype);
        ss += h * h;
    }
    const double unrounded = 1 / sqrt(ss / (double)n + w->c.eps);
    if (!close_enough(got, unrounded, rtol, atol))
        return;
    const size_t used = strlen(why);
    snprintf(why + used, len - used,
             "; it is the rstd of h = x + residual left unrounded (%.9g, "
             "%.2g from it): the code skipped the rounding of h to %s "
             "before the reduction, which the contract requires",
             unrounded, fabs(got - unrounded) / unrounded,
             rowops_dtype_name(w->c.dtype));
}

int opcost_verify_outputs(opcost_workload *w, int set,
                          const opcost_outputs *got, char *why, size_t len)
{
    return opcost_verify_outputs_within(w, set, got, 1.0, why, len);
}

int opcost_verify_outputs_within(opcost_workload *w, int set,
                                 const opcost_outputs *got, double scale,
                                 char *why, size_t len)
{
    opcost_outputs host;
    void *copies[3] = {NULL, NULL, NULL};
    int rc = readable(&got->out, &host.out, &copies[0], why, len) ||
                     readable(&got->residual_out, &host.residual_out,
                              &copies[1], why, len) ||
                     readable(&got->rstd, &host.rstd, &copies[2], why, len)
                 ? -1
                 : verify_host(w, set, &host, scale, why, len);
    for (int i = 0; i < 3; ++i)
        free(copies[i]);
    return rc;
}

static int verify_host(opcost_workload *w, int set, const opcost_outputs *got,
                       double scale, char *why, size_t len)
{
    const int64_t n = w->c.N;
    const int fused = w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const opcost_expected *e = expected_for(w, set);
    if (!e) {
        snprintf(why, len, "cannot allocate the reference rows");
        return 1;
    }
    double rtol, atol, rstd_rtol, rstd_atol;
    opcost_tolerance(w->c.dtype, &rtol, &atol);
    opcost_tolerance(w->c.dtype == ROWOPS_F64 ? ROWOPS_F64 : ROWOPS_F32,
                     &rstd_rtol, &rstd_atol);
    rtol *= scale, atol *= scale, rstd_rtol *= scale, rstd_atol *= scale;
    int p;
    double tiny;
    rounding_of(w->c.dtype, &p, &tiny);
    const double h_rtol = scale > 1 ? ldexp(scale, -p) : 0;
    if (!got->out.data && !(fused && got->residual_out.data)) {
        snprintf(why, len, "no output to verify");
        return 1;
    }
    int bad = 0;
    w->verified_out_units = w->verified_residual_units = NAN;
    for (int64_t j = 0; j < e->rows && !bad; ++j) {
        const int64_t row = j * e->step < w->c.B ? j * e->step : w->c.B - 1;
        /* out is absent only for the torch.add calibration (h alone) */
        if (got->out.data)
            bad = check_row("out", &got->out, row, e->out + j * n, n, rtol,
                            atol, &w->verified_out_units, why, len);
        if (!bad && fused && got->residual_out.data)
            /* h is x + residual rounded once: exact (a peer's: within
             * scale units of 2^-p relative, p the dtype's significand) */
            bad =
                check_row("residual_out", &got->residual_out, row, e->h + j * n,
                          n, h_rtol, 0, &w->verified_residual_units, why, len);
        if (!bad && got->rstd.data) {
            const double g = rowops_load_d(
                got->rstd.data,
                rowops_index_offset(got->rstd.sizes, got->rstd.strides,
                                    got->rstd.rank, row),
                got->rstd.dtype);
            if (!close_enough(g, e->rstd[j], rstd_rtol, rstd_atol)) {
                snprintf(why, len, "rstd[%lld] = %.9g, expected %.9g",
                         (long long)row, g, e->rstd[j]);
                if (fused)
                    explain_rstd(w, set, row, g, rstd_rtol, rstd_atol, why,
                                 len);
                bad = 1;
            }
        }
    }
    return bad;
}
