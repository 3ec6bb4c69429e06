/* The paired bandwidth probe (probe.h). */
#include "probe.h"
#include "buffer.h"
#include "ceiling.h"
#include "rowops_bridge.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <xmmintrin.h>
#define HAVE_MXCSR 1
#else
#define HAVE_MXCSR 0
#endif

/* MXCSR: flush denormal results to zero, treat denormal inputs as zero. */
#define MXCSR_FTZ 0x8000u
#define MXCSR_DAZ 0x0040u

typedef struct probe_state {
    opcost_ceiling_kernel_id kernel;
    int fused;
    int64_t rows;   /* B: the calls are split by rows, as the kernels' */
    size_t doubles; /* per tensor: its row bytes as doubles */
    const rowops_call *call; /* the set being moved (run) */
} probe_state;

/* A tensor's storage: the 64-byte aligned block the workload allocated (a
 * misaligned view starts one element into it). */
static double *storage(const rowops_tensor *t)
{
    return (double *)((uintptr_t)t->data & ~(uintptr_t)63);
}

static void probe_rows(void *ctx, int64_t begin, int64_t end)
{
    const probe_state *s = ctx;
    const size_t lo = (size_t)((double)s->doubles * (double)begin /
                               (double)s->rows),
                 hi = (size_t)((double)s->doubles * (double)end /
                               (double)s->rows);
    const rowops_call *c = s->call;
    double *a = storage(&c->x), *out = storage(&c->out);
    double *b = s->fused ? storage(&c->residual) : NULL;
    double *d = s->fused ? storage(&c->residual_out) : NULL;
#if HAVE_MXCSR
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | MXCSR_FTZ | MXCSR_DAZ);
#endif
    opcost_ceiling_kernel_run(s->kernel, a + lo, b ? b + lo : NULL, out + lo,
                              d ? d + lo : NULL, hi - lo, 3.0);
#if HAVE_MXCSR
    _mm_setcsr(saved);
#endif
}

int64_t opcost_probe_bytes(const opcost_workload *w)
{
    const size_t bytes =
        (size_t)(w->c.B * w->c.N) * rowops_dtype_size(w->c.dtype);
    const int fused = rowops_op_info_of(w->c.op)->fused;
    return (int64_t)(bytes / 8 * 8) * (fused ? 4 : 2);
}

static int prepare(opcost_path_run *r, int streaming, char *why, size_t len)
{
    const opcost_workload *w = r->w;
    probe_state *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(why, len, "out of memory (probe)");
        return -1;
    }
    r->priv = s;
    s->fused = rowops_op_info_of(w->c.op)->fused;
    s->rows = w->c.B;
    s->doubles = (size_t)(w->c.B * w->c.N) * rowops_dtype_size(w->c.dtype) / 8;
    if (!s->doubles) {
        snprintf(why, len, "a call moves less than 8 bytes a tensor");
        return 1;
    }
    s->kernel =
        s->fused ? (streaming ? OPCOST_CEILING_ADD2_NT : OPCOST_CEILING_ADD2)
                 : (streaming ? OPCOST_CEILING_COPY_NT : OPCOST_CEILING_COPY);
    double x = 0, y = 0;
    if (!w->cuda &&
        opcost_ceiling_kernel_run(s->kernel, &x, &x, &y, &y, 0, 3.0)) {
        snprintf(why, len, "no streaming stores in this build");
        return 1;
    }
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "probe %s%s",
             s->fused ? "add2" : "copy",
             w->cuda     ? " d2d"
             : streaming ? "_nt"
                         : "");
    return 0;
}

static int prepare_streaming(opcost_path_run *r, char *why, size_t len)
{
    return prepare(r, 1, why, len);
}

static int prepare_plain(opcost_path_run *r, char *why, size_t len)
{
    return prepare(r, 0, why, len);
}

static int run(opcost_path_run *r, int set, char *err, size_t len)
{
    probe_state *s = r->priv;
    const rowops_call call = opcost_workload_call(r->w, set);
    if (r->w->cuda) {
        /* one launch, as the op is one launch */
        void *const dst[2] = {storage(&call.out),
                              s->fused ? storage(&call.residual_out) : NULL};
        const void *const src[2] = {storage(&call.x),
                                    s->fused ? storage(&call.residual) : NULL};
        return rowops_bridge_cuda_copy_pairs(dst, src, s->fused ? 2 : 1,
                                             s->doubles * 8, err, len)
                   ? -1
                   : 0;
    }
    s->call = &call;
    rowops_bridge_parallel_for(s->rows, rowops_cpu_grain_rows(r->w->c.N),
                               probe_rows, s);
    s->call = NULL;
    return 0;
}

/* The probe moved what it must: the copy's bytes equal their source, and
 * add2's outputs hold a + b and 3 (a + b) at a few places (computed with
 * the same flushing of denormals). */
static int verify(opcost_path_run *r, int set, char *why, size_t len)
{
    probe_state *s = r->priv;
    const rowops_call call = opcost_workload_host_call(r->w, set);
    const double *a = storage(&call.x);
    const double *b = s->fused ? storage(&call.residual) : NULL;
    const size_t at[3] = {0, s->doubles / 2, s->doubles - 1};
    double got[2][3];
    for (int k = 0; k < 3; ++k) {
        const rowops_call dev = opcost_workload_call(r->w, set);
        const double *out = storage(&dev.out) + at[k];
        const double *res =
            s->fused ? storage(&dev.residual_out) + at[k] : NULL;
        if (r->w->cuda) {
            char e[256];
            if (rowops_bridge_cuda_copy(&got[0][k], out, 8,
                                        ROWOPS_BRIDGE_TO_HOST, e, sizeof e) ||
                (res &&
                 rowops_bridge_cuda_copy(&got[1][k], res, 8,
                                         ROWOPS_BRIDGE_TO_HOST, e, sizeof e))) {
                snprintf(why, len, "probe: reading its output back: %s", e);
                return -1;
            }
        } else {
            memcpy(&got[0][k], out, 8);
            if (res)
                memcpy(&got[1][k], res, 8);
        }
    }
    for (int k = 0; k < 3; ++k) {
        double want[2];
        if (!s->fused || r->w->cuda) {
            memcpy(&want[0], a + at[k], 8); /* a copy, bit for bit */
            if (b)
                memcpy(&want[1], b + at[k], 8);
        } else {
#if HAVE_MXCSR
            const unsigned saved = _mm_getcsr();
            _mm_setcsr(saved | MXCSR_FTZ | MXCSR_DAZ);
#endif
            volatile double h = a[at[k]] + b[at[k]];
            want[0] = h;
            want[1] = 3.0 * h;
#if HAVE_MXCSR
            _mm_setcsr(saved);
#endif
        }
        for (int t = 0; t < (s->fused ? 2 : 1); ++t)
            if (memcmp(&got[t][k], &want[t], 8)) {
                snprintf(why, len,
                         "probe: output %d at double %zu is not what it "
                         "moved",
                         t, at[k]);
                return 1;
            }
    }
    return 0;
}

static void release(opcost_path_run *r)
{
    free(r->priv);
    r->priv = NULL;
}

const opcost_path opcost_probe_streaming = {
    .name = "probe",
    .description = "the bytes of a call moved with streaming stores",
    .devices = OPCOST_ON_CPU | OPCOST_ON_CUDA,
    .prepare = prepare_streaming,
    .run = run,
    .verify = verify,
    .release = release,
};

const opcost_path opcost_probe_plain = {
    .name = "probe",
    .description = "the bytes of a call moved with ordinary stores",
    .devices = OPCOST_ON_CPU | OPCOST_ON_CUDA,
    .prepare = prepare_plain,
    .run = run,
    .verify = verify,
    .release = release,
};

/* ---- in place: the fused op's in-place form's traffic (probe.h) */

typedef struct in_place_state {
    int64_t rows;
    size_t doubles; /* per tensor */
    int nsets;
    double **copies; /* x's and residual's of each set: 2 * nsets */
    double *a, *b;   /* the set being moved (run) */
} in_place_state;

static void in_place_rows(void *ctx, int64_t begin, int64_t end)
{
    const in_place_state *s = ctx;
    const size_t lo = (size_t)((double)s->doubles * (double)begin /
                               (double)s->rows),
                 hi = (size_t)((double)s->doubles * (double)end /
                               (double)s->rows);
#if HAVE_MXCSR
    const unsigned saved = _mm_getcsr();
    _mm_setcsr(saved | MXCSR_FTZ | MXCSR_DAZ);
#endif
    opcost_ceiling_kernel_run(OPCOST_CEILING_ADD2_IN_PLACE, s->a + lo,
                              s->b + lo, NULL, NULL, hi - lo, 3.0);
#if HAVE_MXCSR
    _mm_setcsr(saved);
#endif
}

static void release_in_place(opcost_path_run *r)
{
    in_place_state *s = r->priv;
    if (s && s->copies)
        for (int i = 0; i < 2 * s->nsets; ++i)
            free(s->copies[i]);
    if (s)
        free(s->copies);
    free(s);
    r->priv = NULL;
}

static int prepare_in_place(opcost_path_run *r, char *why, size_t len)
{
    const opcost_workload *w = r->w;
    if (w->cuda || !rowops_op_info_of(w->c.op)->fused) {
        snprintf(why, len,
                 "the in-place probe moves the fused op's bytes "
                 "on the CPU only");
        return 1;
    }
    in_place_state *s = calloc(1, sizeof *s);
    r->priv = s;
    if (s) {
        s->rows = w->c.B;
        s->doubles =
            (size_t)(w->c.B * w->c.N) * rowops_dtype_size(w->c.dtype) / 8;
        s->nsets = w->nsets;
        s->copies = calloc((size_t)(2 * w->nsets), sizeof *s->copies);
    }
    if (!s || !s->copies) {
        snprintf(why, len, "out of memory (in-place probe)");
        return -1;
    }
    if (!s->doubles) {
        snprintf(why, len, "a call moves less than 8 bytes a tensor");
        return 1;
    }
    /* its own copies: it writes what it reads, and the point's sets are
     * every other member's inputs */
    for (int set = 0; set < w->nsets; ++set) {
        const rowops_call c = opcost_workload_host_call(w, set);
        const rowops_tensor *t[2] = {&c.x, &c.residual};
        for (int k = 0; k < 2; ++k) {
            double *d = opcost_buffer_alloc(s->doubles * 8);
            if (!d) {
                snprintf(why, len, "out of memory (in-place probe, %zu bytes)",
                         s->doubles * 8);
                return -1;
            }
            memcpy(d, storage(t[k]), s->doubles * 8);
            s->copies[2 * set + k] = d;
        }
    }
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "probe add2_in_place");
    return 0;
}

static int run_in_place(opcost_path_run *r, int set, char *err, size_t len)
{
    (void)err;
    (void)len;
    in_place_state *s = r->priv;
    s->a = s->copies[2 * set];
    s->b = s->copies[2 * set + 1];
    rowops_bridge_parallel_for(s->rows, rowops_cpu_grain_rows(r->w->c.N),
                               in_place_rows, s);
    return 0;
}

/* The copies keep the values they held (a + 0 b), where those are
 * ordinary numbers (DAZ flushes a denormal, NaN is quieted). */
static int verify_in_place(opcost_path_run *r, int set, char *why, size_t len)
{
    const in_place_state *s = r->priv;
    const rowops_call c = opcost_workload_host_call(r->w, set);
    const double *orig[2] = {storage(&c.x), storage(&c.residual)};
    const size_t at[3] = {0, s->doubles / 2, s->doubles - 1};
    for (int k = 0; k < 2; ++k)
        for (int i = 0; i < 3; ++i) {
            const double v = orig[k][at[i]];
            if ((isnormal(v) || v == 0) &&
                memcmp(&s->copies[2 * set + k][at[i]], &v, 8)) {
                snprintf(why, len,
                         "in-place probe: tensor %d at double %zu changed", k,
                         at[i]);
                return 1;
            }
        }
    return 0;
}

const opcost_path opcost_probe_in_place = {
    .name = "probe",
    .description = "the bytes of an in-place call moved in place: x and "
                   "residual read and written back, ordinary stores",
    .devices = OPCOST_ON_CPU,
    .prepare = prepare_in_place,
    .run = run_in_place,
    .verify = verify_in_place,
    .release = release_in_place,
};
