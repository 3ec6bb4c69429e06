/* The model stacks' pilot (model_pilot.h). */
#include "model_pilot.h"
#include "timer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* The plan's model path whose calls are the stack as shipped, eager (the
 * eager model paths' baseline: paired with itself), else its first eager one,
 * else its first; with compiled set, its first compiled one. NULL: none. */
static const opcost_path *model_path(const opcost_plan *plan, int compiled)
{
    const opcost_path *eager = NULL, *any = NULL;
    for (int i = 0; i < plan->npaths; ++i) {
        const opcost_path *p = plan->paths[i];
        if (!p->model)
            continue;
        const int is_eager = strstr(p->name, "-eager") != NULL;
        if (compiled) {
            if (strstr(p->name, "-compiled"))
                return p;
            continue;
        }
        if (is_eager && p->paired_with && !strcmp(p->paired_with, p->name))
            return p;
        if (is_eager && !eager)
            eager = p;
        if (!any)
            any = p;
    }
    return compiled ? NULL : eager ? eager : any;
}

/* Prepares path p at point c (one warm input set) in r; 0 ready, else
 * why (1: skipped there, -1: an error). */
static int start(const opcost_plan *plan, const opcost_path *p,
                 const opcost_case *c, int narrow, size_t rotate_bytes,
                 opcost_workload *w, opcost_path_run *r, char *why, size_t len)
{
    memset(r, 0, sizeof *r);
    if (opcost_workload_make(w, c, rotate_bytes, 0, 1, why, len))
        return -1;
    r->path = p;
    r->variant = &opcost_variant_auto;
    r->w = w;
    r->plan = plan;
    r->model_narrow = narrow;
    r->pilot = 1;
    const int rc = p->prepare(r, why, len);
    if (rc) {
        if (r->priv)
            p->release(r);
        opcost_workload_free(w);
    }
    return rc;
}

static void stop(opcost_path_run *r, opcost_workload *w)
{
    if (r->priv)
        r->path->release(r);
    opcost_workload_free(w);
}

/* The mean of two calls after an untimed one; NAN when a call failed. */
static double call_seconds(opcost_path_run *r, char *why, size_t len)
{
    double sum = 0;
    for (int i = 0; i < 3; ++i) {
        const int64_t t0 = opcost_now_ns();
        if (r->path->run(r, 0, why, len))
            return NAN;
        if (i)
            sum += opcost_seconds_since(t0);
    }
    return sum / 2;
}

void opcost_model_pilot_run(const opcost_plan *plan, const opcost_case *lo,
                            const opcost_case *hi, const opcost_case *main,
                            int narrow, size_t rotate_bytes,
                            opcost_model_pilot *out)
{
    memset(out, 0, sizeof *out);
    out->a_s = out->per_token_s = out->compile_s = NAN;
    const int64_t t0 = opcost_now_ns();
    const opcost_path *p = model_path(plan, 0);
    if (!p) {
        snprintf(out->why, sizeof out->why, "no model path selected");
        return;
    }
    const opcost_case *at[2] = {lo, hi};
    double call[2] = {NAN, NAN};
    for (int k = 0; k < (hi->B != lo->B ? 2 : 1); ++k) {
        opcost_workload w;
        opcost_path_run r;
        if (start(plan, p, at[k], narrow, rotate_bytes, &w, &r, out->why,
                  sizeof out->why))
            break;
        call[k] = call_seconds(&r, out->why, sizeof out->why);
        stop(&r, &w);
    }
    if (isfinite(call[0]) && (hi->B == lo->B || isfinite(call[1]))) {
        out->available = 1;
        const double slope =
            hi->B != lo->B ? (call[1] - call[0]) / (double)(hi->B - lo->B) : 0;
        out->per_token_s = slope > 0 ? slope : 0;
        out->a_s = call[0] - out->per_token_s * (double)lo->B;
        if (out->a_s < 0)
            out->a_s = 0;
        /* a compile, where a compiled model path runs: its graph for
         * main's class, which main's point then reuses (the narrower
         * model's graphs are the same code, and compile alike: not
         * piloted) */
        const opcost_path *cp = narrow ? NULL : model_path(plan, 1);
        opcost_workload w;
        opcost_path_run r;
        char why[256];
        if (cp && cp->compile_ms &&
            start(plan, cp, main, narrow, rotate_bytes, &w, &r, why,
                  sizeof why) == 0) {
            const double ms = cp->compile_ms(&r);
            out->compile_s = ms > 0 ? ms / 1e3 : NAN;
            stop(&r, &w);
        }
    }
    out->seconds = opcost_seconds_since(t0);
}
