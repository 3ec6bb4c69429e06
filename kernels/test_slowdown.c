/* The run-time slowdown for opcost ab's checks (test_slowdown.h). */
#define _POSIX_C_SOURCE 200809L
#include "test_slowdown.h"
#include "rowops.h"
#include "rowops_elem.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static int64_t now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Whether the environment variable holds a number and nothing else (into
 * out); each hook then keeps the values it allows, the rest its no-op. */
static int env_number(const char *name, double *out)
{
    const char *v = getenv(name);
    char *end = NULL;
    *out = v ? strtod(v, &end) : 0;
    return v && end != v && !*end;
}

double rowops_test_slowdown(void)
{
    /* read once; a race between threads reads the same value */
    static double fraction = -1;
    if (fraction < 0) {
        double f;
        fraction =
            env_number(ROWOPS_TEST_SLOWDOWN_ENV, &f) && f > 0 && f <= 1 ? f : 0;
    }
    return fraction;
}

int64_t rowops_test_slowdown_start(void)
{
    return rowops_test_slowdown() > 0 ? now_ns() : 0;
}

void rowops_test_slowdown_spin(int64_t start)
{
    if (!start)
        return;
    const int64_t t = now_ns();
    const int64_t until =
        t + (int64_t)llround(rowops_test_slowdown() * (double)(t - start));
    while (now_ns() < until)
        ;
}

double rowops_test_wrong_scale(void)
{
    static double scale = -1;
    if (scale < 0) {
        double f;
        scale =
            env_number(ROWOPS_TEST_WRONG_SCALE_ENV, &f) && f > 0 && isfinite(f)
                ? f
                : 1;
    }
    return scale;
}

void rowops_test_wrong_rows(const rowops_call *c, int64_t row_begin,
                            int64_t row_end)
{
    const double s = rowops_test_wrong_scale();
    if (s == 1)
        return;
    const int64_t n = c->x.sizes[c->x.rank - 1];
    for (int64_t row = row_begin; row < row_end; ++row) {
        void *p = rowops_tensor_row_ptr(&c->out, row);
        for (int64_t i = 0; i < n; ++i)
            rowops_store_f(p, i, c->out.dtype,
                           (float)(s * rowops_load_f(p, i, c->out.dtype)));
    }
}
