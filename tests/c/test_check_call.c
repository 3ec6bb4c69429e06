/* rowops_check_call: each contract rule, broken once, named in the error. */
#include "c_samples.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void expect_error(const rowops_call *c, const char *needle,
                         const char *what)
{
    char err[256] = "";
    const int rc = rowops_check_call(c, err, sizeof err);
    C_EXPECT(rc == -1 && strstr(err, needle) != NULL,
             "%s: expected an error containing '%s', got rc=%d '%s'", what,
             needle, rc, err);
}

int main(void)
{
    c_sample s;
    c_sample_make(&s, ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F16, ROWOPS_F32,
                  C_CONTIGUOUS, 4, 8, 0, 1);
    char err[256] = "";
    C_EXPECT(rowops_check_call(&s.call, err, sizeof err) == 0,
             "valid call rejected: %s", err);

    rowops_call c = s.call;
    c.x.rank = 0;
    expect_error(&c, "x: must have rank >= 1", "rank 0");
    c = s.call;
    c.x.dtype = (rowops_dtype)17;
    expect_error(&c, "x: dtype", "bad dtype");
    c = s.call;
    c.eps = -1e-6;
    expect_error(&c, "eps: must be finite and >= 0", "negative eps");
    c.eps = NAN;
    expect_error(&c, "eps: must be finite and >= 0", "NaN eps");
    c.eps = INFINITY;
    expect_error(&c, "eps: must be finite and >= 0", "Inf eps");
    c = s.call;
    c.residual.sizes[1] = 9;
    expect_error(&c, "residual: must have the same shape as x", "shape");
    c = s.call;
    c.residual.dtype = ROWOPS_BF16;
    expect_error(&c, "residual: must have x's dtype", "residual dtype");
    c = s.call;
    c.weight.sizes[0] = 7;
    expect_error(&c, "weight: must have shape [N]", "weight shape");
    c = s.call;
    c.weight.dtype = ROWOPS_F64;
    expect_error(&c, "weight: dtype must be x's dtype or float32",
                 "weight dtype");
    c = s.call;
    c.residual.device = ROWOPS_DEVICE_CUDA;
    expect_error(&c, "on x's device", "device");
    c = s.call;
    c.rstd.dtype = ROWOPS_F16;
    expect_error(&c, "rstd: must have x's leading shape and dtype float32",
                 "rstd dtype");
    c_sample_free(&s);
    return c_report("test_check_call");
}
