#include "verify.h"
#include "reference_f64.h"
#include "rowops_elem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

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

static int check_row(const char *name, const rowops_tensor *t, int64_t row,
                     const double *want, int64_t n, double rtol, double atol,
                     char *why, size_t len)
{
    const rowops_tensor r = row_of(t, row);
    for (int64_t i = 0; i < n; ++i) {
        const double got = rowops_load_d(r.data, i * r.strides[0], r.dtype);
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

int opcost_verify_outputs(const opcost_workload *w, int set,
                          const opcost_outputs *got, char *why, size_t len)
{
    const rowops_call whole = opcost_workload_call(w, set);
    const int64_t n = w->c.N;
    const int fused = w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    double *out = malloc(sizeof(double) * (size_t)(2 * n + 1));
    if (!out) {
        snprintf(why, len, "cannot allocate the reference row");
        return 1;
    }
    double *h = out + n, rstd = 0.0;
    double rtol, atol, rstd_rtol, rstd_atol;
    opcost_tolerance(w->c.dtype, &rtol, &atol);
    opcost_tolerance(w->c.dtype == ROWOPS_F64 ? ROWOPS_F64 : ROWOPS_F32,
                     &rstd_rtol, &rstd_atol);
    int bad = 0;
    /* Every row up to OPCOST_VERIFY_ALL_ELEMS elements; beyond, rows
     * spread evenly (the first and last included), so huge points do not
     * spend seconds per path in the double-precision reference. */
    const int64_t total = w->c.B * n;
    const int64_t step =
        total <= OPCOST_VERIFY_ALL_ELEMS
            ? 1
            : (w->c.B + OPCOST_VERIFY_ROWS - 1) / OPCOST_VERIFY_ROWS;
    for (int64_t k = 0; k < w->c.B + step - 1 && !bad; k += step) {
        const int64_t row = k < w->c.B ? k : w->c.B - 1;
        rowops_call c = whole;
        c.x = row_of(&whole.x, row);
        if (fused)
            c.residual = row_of(&whole.residual, row);
        rowops_reference_f64(&c, out, fused ? h : NULL, &rstd);
        bad = check_row("out", &got->out, row, out, n, rtol, atol, why, len);
        if (!bad && fused && got->residual_out.data)
            /* h is x + residual rounded once: exact */
            bad = check_row("residual_out", &got->residual_out, row, h, n, 0, 0,
                            why, len);
        if (!bad && got->rstd.data) {
            const double g = rowops_load_d(
                got->rstd.data,
                rowops_index_offset(got->rstd.sizes, got->rstd.strides,
                                    got->rstd.rank, row),
                got->rstd.dtype);
            if (!close_enough(g, rstd, rstd_rtol, rstd_atol)) {
                snprintf(why, len, "rstd[%lld] = %.9g, expected %.9g",
                         (long long)row, g, rstd);
                bad = 1;
            }
        }
    }
    free(out);
    return bad;
}
