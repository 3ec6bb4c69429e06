/* Every benchmark path, on small cases of each op, dtype and layout:
 * prepare, one run on poisoned outputs, verification against the C double
 * reference; and a path whose output is corrupted is caught as wrong. */
#include "c_samples.h"
#include "cpu_features.h"
#include "registry.h"
#include "rowops_bridge.h"
#include "rowops_elem.h"
#include "timer.h"
#include "timing.h"
#include "variants.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int prepare_and_verify(const opcost_path *p, opcost_workload *w,
                              const opcost_variant *variant, int corrupt,
                              char *why, size_t len)
{
    opcost_path_run r;
    memset(&r, 0, sizeof r);
    r.path = p;
    r.variant = variant;
    r.w = w;
    int rc = p->prepare(&r, why, len);
    /* corrupt 3: outputs computed from other inputs than the ones the
     * (already computed) expected rows come from: what a calibration
     * path's h alone can show. */
    const double x0 = rowops_load_d(w->sets[0].x.data, 0, w->sets[0].x.dtype);
    if (rc == 0) {
        opcost_workload_poison_outputs(w);
        if (corrupt == 3)
            rowops_store_d(w->sets[0].x.data, 0, w->sets[0].x.dtype, 1e3);
        rowops_bridge_poison_outputs(1);
        rc = p->run(&r, 0, why, len);
        rowops_bridge_poison_outputs(0);
        rowops_store_d(w->sets[0].x.data, 0, w->sets[0].x.dtype, x0);
        const double eps = w->c.eps;
        if (rc == 0 && corrupt == 1)
            /* outputs computed with another eps than the one verified */
            w->c.eps = 0.25;
        if (rc == 0 && corrupt == 2)
            /* a kernel that wrote a wrong element: the last of row 0 */
            rowops_store_d(w->sets[0].out.data, w->c.N - 1,
                           w->sets[0].out.dtype, 1e3);

        if (rc == 0)
            rc = p->verify(&r, 0, why, len);
        w->c.eps = eps;
        if (rc == 0 && corrupt)
            rc = 2; /* not caught */
    }
    if (r.priv)
        p->release(&r);
    return rc;
}

/* A small fused float32 case of the set "test". */
static const opcost_case small_case = {"test",
                                       ROWOPS_OP_FUSED_ADD_RMS_NORM,
                                       4,
                                       64,
                                       ROWOPS_F32,
                                       ROWOPS_F32,
                                       OPCOST_CONTIGUOUS,
                                       1,
                                       "1",
                                       1e-6};

/* p prepared on small_case's workload (and released): prepare's code, its
 * reason in why. */
static int prepare_small(const opcost_path *p, char *why, size_t len)
{
    opcost_workload w;
    char err[512];
    if (opcost_workload_make(&w, &small_case, 1 << 20, 0, 1, err, sizeof err)) {
        snprintf(why, len, "workload: %.400s", err);
        return -1;
    }
    opcost_path_run r;
    memset(&r, 0, sizeof r);
    r.path = p;
    r.variant = &opcost_variant_auto;
    r.w = &w;
    const int rc = p->prepare(&r, why, len);
    if (r.priv)
        p->release(&r);
    opcost_workload_free(&w);
    return rc;
}

static void prepare_gpu_only(const opcost_path *p)
{
    char why[512] = "";
    C_EXPECT(prepare_small(p, why, sizeof why) == 1 && strstr(why, "CUDA only"),
             "%s on a CPU workload: skipped with the reason (got '%s')",
             p->name, why);
}

/* The fewest bytes a call moves (the GB/s and ceiling of every row), from
 * the op table: each row tensor read or written once, the weight, rstd. */
static void case_bytes(void)
{
    opcost_case rows = {
        "test",      ROWOPS_OP_RMS_NORM_ROWS, 3, 64,  ROWOPS_BF16,
        ROWOPS_BF16, OPCOST_CONTIGUOUS,       1, "1", 1e-6};
    /* x, y: 3 x 64 bfloat16; rstd: 3 float32 */
    C_EXPECT(opcost_case_bytes(&rows) == 2 * 3 * 64 * 2 + 3 * 4,
             "rms_norm_rows bytes: got %lld",
             (long long)opcost_case_bytes(&rows));
    opcost_case fused = rows;
    fused.op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
    fused.weight_dtype = ROWOPS_F32;
    /* x, residual, out, residual_out; a float32 weight; rstd */
    C_EXPECT(opcost_case_bytes(&fused) == 4 * 3 * 64 * 2 + 64 * 4 + 3 * 4,
             "fused bytes: got %lld", (long long)opcost_case_bytes(&fused));
    fused.dtype = ROWOPS_F64;
    fused.weight_dtype = ROWOPS_F64; /* float64's rstd is float64 */
    C_EXPECT(opcost_case_bytes(&fused) == 4 * 3 * 64 * 8 + 64 * 8 + 3 * 8,
             "fused float64 bytes: got %lld",
             (long long)opcost_case_bytes(&fused));
}

/* --variants all on a transposed point: every CPU variant of the kernel
 * path on one workload, each with its own contiguous copies (a workload
 * held four; the fifth to seventh variant read "cannot allocate the kernel
 * path's contiguous inputs"). */
static void all_variants_one_workload(void)
{
    opcost_case c = {"test",
                     ROWOPS_OP_FUSED_ADD_RMS_NORM,
                     16,
                     256,
                     ROWOPS_BF16,
                     ROWOPS_BF16,
                     OPCOST_TRANSPOSED,
                     1,
                     "1",
                     1e-6};
    opcost_workload w;
    char err[512];
    C_EXPECT(opcost_workload_make(&w, &c, 1 << 20, 1, 1, err, sizeof err) == 0,
             "%s", err);
    const opcost_path *kernel = opcost_path_find("kernel");
    opcost_path_run runs[64];
    int n = 0, failed = 0;
    for (size_t i = 0; i < opcost_variant_count() && n < 64; ++i) {
        const opcost_variant *v = opcost_variant_at(i);
        opcost_path_run *r = &runs[n++];
        memset(r, 0, sizeof *r);
        r->path = kernel;
        r->variant = v;
        r->w = &w;
        char why[512] = "";
        const int rc = kernel->prepare(r, why, sizeof why);
        if (rc < 0) {
            ++failed;
            fprintf(stderr, "variant %s: %s\n", v->name, why);
        }
    }
    C_EXPECT(n >= 5 && failed == 0,
             "%d of %d variants could not be prepared on one workload", failed,
             n);
    for (int i = 0; i < n; ++i)
        if (runs[i].priv)
            kernel->release(&runs[i]);
    opcost_workload_free(&w);
}

/* A model path at a set without a model config: skipped, saying so;
 * rows only at the fused op's contiguous points. */
static void model_path_refuses(const opcost_path *p)
{
    char why[512] = "";
    C_EXPECT(prepare_small(p, why, sizeof why) == 1 &&
                 strstr(why, "'test' has no decoder config"),
             "%s at a set without a model: skipped with the reason (got '%s')",
             p->name, why);
    opcost_case c = small_case;
    C_EXPECT(p->applies && p->applies(&c), "%s applies to the fused op",
             p->name);
    c.layout = OPCOST_TRANSPOSED;
    C_EXPECT(!p->applies(&c), "%s: no row at a transposed point", p->name);
    c.layout = OPCOST_CONTIGUOUS;
    c.op = ROWOPS_OP_RMS_NORM_ROWS;
    C_EXPECT(!p->applies(&c), "%s: no row at rms_norm_rows", p->name);
}

/* The kernel path prepared with variant v on small_case at layout and B
 * (workload in w, the run in r); the prepare's code. -1 also when the
 * workload could not be made (r.priv then NULL). */
static int prepare_kernel(const opcost_variant *v, opcost_layout layout,
                          int64_t B, opcost_workload *w, opcost_path_run *r,
                          char *err, size_t len)
{
    opcost_case c = small_case;
    c.layout = layout;
    c.B = B;
    memset(r, 0, sizeof *r);
    if (opcost_workload_make(w, &c, 1 << 20, 0, 1, err, len)) {
        C_EXPECT(0, "workload: %s", err);
        return -1;
    }
    r->path = opcost_path_find("kernel");
    r->variant = v;
    r->w = w;
    return r->path->prepare(r, err, len);
}

static void release_kernel(opcost_workload *w, opcost_path_run *r)
{
    if (r->priv)
        r->path->release(r);
    if (r->w)
        opcost_workload_free(w);
}

/* The kernel path at a transposed point times contiguous copies: its
 * dispatch_path says so (the console labels the row "(copies)"); at a
 * contiguous point it is the kernel's name alone. */
static void kernel_names_its_copies(void)
{
    for (int l = 0; l < 2; ++l) {
        opcost_workload w;
        opcost_path_run r;
        char err[512];
        const int rc = prepare_kernel(&opcost_variant_auto,
                                      l ? OPCOST_TRANSPOSED : OPCOST_CONTIGUOUS,
                                      small_case.B, &w, &r, err, sizeof err);
        C_EXPECT(rc == 0, "kernel: %s", err);
        const char *tail = strstr(r.dispatch_path, OPCOST_KERNEL_ON_COPIES);
        C_EXPECT(l ? tail && !tail[strlen(OPCOST_KERNEL_ON_COPIES)]
                   : !tail && r.dispatch_path[0],
                 "kernel at a %s point: dispatch_path '%s'",
                 l ? "transposed" : "contiguous", r.dispatch_path);
        release_kernel(&w, &r);
    }
}

/* The kernel path with a column-major variant at a transposed point: the
 * kernel on the point's own inputs (no copies, no suffix), verified; the
 * short-column kernel refused where the columns are too far apart. */
static void kernel_takes_columns_as_they_lie(void)
{
    static const char *const names[] = {"cpu_colmajor_avx2",
                                        "cpu_colmajor_narrow"};
    static const int64_t rows[] = {4, 20};
    for (int v = 0; v < 2; ++v)
        for (int b = 0; b < 2; ++b) {
            const unsigned need =
                v ? ROWOPS_CPU_FAST512_FEATURES : ROWOPS_CPU_FAST_FEATURES;
            if ((rowops_cpu_features() & need) != need) {
                printf("SKIP kernel %s: the CPU lacks its features\n",
                       names[v]);
                continue;
            }
            opcost_workload w;
            opcost_path_run r;
            char err[512];
            const int rc =
                prepare_kernel(opcost_variant_find(names[v]), OPCOST_TRANSPOSED,
                               rows[b], &w, &r, err, sizeof err);
            if (v == 1 && b == 1) { /* columns 20 apart */
                C_EXPECT(rc == 1 && strstr(err, "beyond its 16"),
                         "%s at B = 20: rc %d, '%s'", names[v], rc, err);
            } else {
                C_EXPECT(rc == 0, "%s at B = %lld: %s", names[v],
                         (long long)rows[b], err);
                C_EXPECT(rc || !strcmp(r.dispatch_path, names[v]),
                         "%s: dispatch_path '%s'", names[v], r.dispatch_path);
                C_EXPECT(rc || (!r.path->run(&r, 0, err, sizeof err) &&
                                !r.path->verify(&r, 0, err, sizeof err)),
                         "%s at B = %lld: %s", names[v], (long long)rows[b],
                         err);
            }
            release_kernel(&w, &r);
        }
}

/* A path whose every call lasts 1.2 ms, counting its calls. */
static int counted_calls;

static int counted_call(opcost_path_run *r, int set, char *err, size_t len)
{
    (void)r, (void)set, (void)err, (void)len;
    const int64_t start = opcost_now_ns();
    while (opcost_now_ns() - start < 1200000)
        ;
    ++counted_calls;
    return 0;
}

/* The counted path over small_case's sets: 0, or -1 (reported). */
static int counted_run(opcost_workload *w, opcost_path *p, opcost_path_run *r)
{
    char err[512];
    if (opcost_workload_make(w, &small_case, 1 << 20, 1, 1, err, sizeof err)) {
        C_EXPECT(0, "workload: %s", err);
        return -1;
    }
    memset(p, 0, sizeof *p);
    p->name = "counted";
    p->run = counted_call;
    memset(r, 0, sizeof *r);
    r->path = p;
    r->variant = &opcost_variant_auto;
    r->w = w;
    return 0;
}

/* The warm-up before timing: two calls per input set (until 0.5 s) for an
 * op path; a model path's whole warm-up is two calls, whatever its sets.
 * Calls of >= 1 ms calibrate in one call. */
static void model_warm_up_is_two_calls(void)
{
    opcost_workload w;
    opcost_path p;
    opcost_path_run r;
    if (counted_run(&w, &p, &r))
        return;
    for (int model = 0; model < 2; ++model) {
        p.model = model;
        counted_calls = 0;
        opcost_timer_state t;
        C_EXPECT(opcost_timing_begin(&t, &r, OPCOST_TIME_RUN, 20, 0.005, 0) ==
                     0,
                 "timing begins");
        if (model)
            C_EXPECT(counted_calls == 3,
                     "a model path: 1 calibration call + 2 warm-up calls "
                     "(got %d)",
                     counted_calls);
        else
            C_EXPECT(counted_calls > 3 && w.nsets > 100,
                     "an op path: a warm-up pass over its %d sets (got %d "
                     "calls)",
                     w.nsets, counted_calls);
        opcost_timing_end(&t);
    }
    opcost_workload_free(&w);
}

/* A sample's lead-in call: by the calibration (calls under 1 ms) where
 * lead_in is -1, else as told (opcost ab tells both sides the base's). */
static void lead_in_as_told(void)
{
    opcost_workload w;
    opcost_path p;
    opcost_path_run r;
    if (counted_run(&w, &p, &r))
        return;
    opcost_timer_state t;
    C_EXPECT(opcost_timing_begin(&t, &r, OPCOST_TIME_RUN, 20, 0.005, 0) == 0,
             "timing begins");
    C_EXPECT(t.lead_in == -1, "decided by the call (%d)", t.lead_in);
    const struct {
        int lead_in;
        double call_us;
        int extra;
    } cases[] = {{-1, 1.0, 1}, {-1, 2000.0, 0}, {0, 1.0, 0}, {1, 2000.0, 1}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        t.lead_in = cases[i].lead_in;
        t.call_us = cases[i].call_us;
        double us, device_us;
        counted_calls = 0;
        C_EXPECT(opcost_timing_sample(&t, &us, &device_us) == 0, "a sample");
        C_EXPECT(counted_calls == t.batch + cases[i].extra,
                 "lead_in %d, calls of %.0f us: %d calls, want %d",
                 cases[i].lead_in, cases[i].call_us, counted_calls,
                 t.batch + cases[i].extra);
    }
    opcost_timing_end(&t);
    opcost_workload_free(&w);
}

int main(void)
{
    char err[512];
    rowops_bridge_set_threads(2, err, sizeof err);
    case_bytes();
    all_variants_one_workload();
    model_warm_up_is_two_calls();
    lead_in_as_told();
    kernel_names_its_copies();
    kernel_takes_columns_as_they_lie();
    const rowops_dtype dtypes[] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16,
                                   ROWOPS_F64};
    const int64_t shapes[][2] = {{1, 1}, {5, 64}, {3, 4097}, {70, 300}};
    for (size_t pi = 0; pi < opcost_path_count(); ++pi) {
        const opcost_path *p = opcost_path_at(pi);
        if (!(p->devices & OPCOST_ON_CPU)) {
            /* GPU only: refused on a CPU workload, with the reason */
            prepare_gpu_only(p);
            continue;
        }
        if (p->peer) {
            /* foreign code, installed or not, with its own limits
             * (N % 8, dtypes): tests/sh/peers.sh checks each outcome */
            continue;
        }
        if (p->model) {
            /* a model has no rows at these shapes' set (tests/sh/
             * model_paths.sh runs the model paths on a tiny Llama) */
            model_path_refuses(p);
            continue;
        }
        /* compiled paths compile per (op, dtype, layout, N): two
         * compiles each, rms_norm_rows contiguous in bfloat16 and the
         * fused op transposed in float32 (their full coverage is the
         * --quick run's, whose points take every op, dtype and layout) */
        const int compiled = p->compile_ms != NULL;
        for (int op = 0; op < ROWOPS_OP_COUNT; ++op)
            for (int d = 0; d < (compiled ? 3 : 4); d += compiled ? 2 : 1)
                for (int l = 0; l < (compiled ? 2 : OPCOST_LAYOUT_COUNT); ++l)
                    for (int s = compiled; s < (compiled ? 2 : 4); ++s) {
                        if (compiled && (op != l || (d == 2) != (op == 0)))
                            continue;
                        opcost_case c;
                        memset(&c, 0, sizeof c);
                        c.distribution = "test";
                        c.op = (rowops_op)op;
                        c.B = shapes[s][0];
                        c.N = shapes[s][1];
                        c.dtype = c.weight_dtype = dtypes[d];
                        c.layout = (opcost_layout)l;
                        c.freq = 1;
                        c.eps = 1e-6;
                        opcost_workload w;
                        if (opcost_workload_make(&w, &c, 1 << 20, 1, 7, err,
                                                 sizeof err)) {
                            C_EXPECT(0, "workload: %s", err);
                            continue;
                        }
                        C_EXPECT(w.cache == OPCOST_CACHE_COLD && w.nsets >= 2,
                                 "inputs rotate beyond the 1 MiB 'LLC'");
                        char why[512] = "";
                        int rc = prepare_and_verify(p, &w, &opcost_variant_auto,
                                                    0, why, sizeof why);
                        /* Known deviation (docs/benchmark.md, "Paths"): with
                         * the rowops decomposition registered, Inductor may not
                         * round h = x + residual to a low-precision dtype
                         * before the reduction; verification reports it. */
                        const int may_deviate =
                            !strcmp(p->name, "compiled-python-decomposed") &&
                            c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM &&
                            (c.dtype == ROWOPS_BF16 || c.dtype == ROWOPS_F16);
                        /* ... and says which rounding was skipped */
                        if (may_deviate && rc == 1 &&
                            strstr(why, "left unrounded") &&
                            strstr(why, rowops_dtype_name(c.dtype)))
                            rc = 0;
                        /* calibration paths (torch.add) run the fused op
                         * only, add-kernel contiguous float32/bfloat16
                         * only: skipped elsewhere, with the reason */
                        const int calibration_skip =
                            p->calibration && rc == 1 &&
                            strstr(why, "calibration:") &&
                            (c.op != ROWOPS_OP_FUSED_ADD_RMS_NORM ||
                             (!strcmp(p->name, "add-kernel") &&
                              (c.layout != OPCOST_CONTIGUOUS ||
                               (c.dtype != ROWOPS_F32 &&
                                c.dtype != ROWOPS_BF16))));
                        /* the in-place form is the fused op's only */
                        const int no_inplace =
                            rc == 1 && c.op != ROWOPS_OP_FUSED_ADD_RMS_NORM &&
                            !strcmp(p->name, "eager-python-inplace") &&
                            strstr(why, "has no in-place form");
                        if (calibration_skip || no_inplace) {
                            opcost_workload_free(&w);
                            continue;
                        }
                        C_EXPECT(rc == 0, "%s %s %s %s B=%lld N=%lld: %d %s",
                                 p->name, rowops_op_name(c.op),
                                 rowops_dtype_name(c.dtype),
                                 opcost_layout_name(c.layout), (long long)c.B,
                                 (long long)c.N, rc, why);
                        if (s == 1) {
                            rc = prepare_and_verify(p, &w, &opcost_variant_auto,
                                                    p->calibration ? 3 : 1, why,
                                                    sizeof why);
                            C_EXPECT(rc == 1,
                                     "%s: wrong outputs not caught "
                                     "(%d %s)",
                                     p->name, rc, why);
                        }
                        if (s == 1 && !strncmp(p->name, "kernel", 6)) {
                            rc = prepare_and_verify(p, &w, &opcost_variant_auto,
                                                    2, why, sizeof why);
                            C_EXPECT(rc == 1 && strstr(why, "out[0, 63]"),
                                     "%s: a wrong element not caught (%d %s)",
                                     p->name, rc, why);
                        }
                        opcost_workload_free(&w);
                    }
    }
    /* forced kernel variants: run where eligible, skipped with a reason
     * where not */
    opcost_case c = {"test",
                     ROWOPS_OP_FUSED_ADD_RMS_NORM,
                     16,
                     4097,
                     ROWOPS_F32,
                     ROWOPS_F32,
                     OPCOST_CONTIGUOUS,
                     1,
                     "1",
                     1e-6};
    opcost_workload w;
    opcost_workload_make(&w, &c, 1 << 20, 0, 1, err, sizeof err);
    const opcost_path *kernel = opcost_path_find("kernel");
    char why[512];
    C_EXPECT(prepare_and_verify(kernel, &w, opcost_variant_find("cpu_strided"),
                                0, why, sizeof why) == 0,
             "strided variant runs anything: %s", why);
    const int fast =
        prepare_and_verify(kernel, &w, opcost_variant_find("cpu_fast_portable"),
                           0, why, sizeof why);
    C_EXPECT(fast == 1 && strstr(why, "not eligible"),
             "N = 4097 float32 rows are not 32-byte aligned: skipped (%d %s)",
             fast, why);
    opcost_workload_free(&w);
    c.N = 4096;
    opcost_workload_make(&w, &c, 1 << 20, 0, 1, err, sizeof err);
    C_EXPECT(prepare_and_verify(kernel, &w,
                                opcost_variant_find("cpu_fast_portable"), 0,
                                why, sizeof why) == 0,
             "portable variant on an eligible call: %s", why);
    opcost_workload_free(&w);
    return c_report("test_paths");
}
