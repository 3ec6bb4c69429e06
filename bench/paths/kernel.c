/* `kernel`: the rowops C kernel alone, on inputs already in the layout it
 * wants (contiguous, aligned: converted once in prepare, not timed),
 * called directly with no eligibility check and no dispatcher. The
 * variant picks the kernel (auto: what rowops_choose picks). */
#include "path.h"
#include "python_route.h"
#include "rowops_bridge.h"
#include "variants.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct kernel_state {
    rowops_call *calls; /* per set: contiguous inputs, the set's outputs */
    void *copies;       /* contiguous copies of non-contiguous inputs */
    void *dev_copies;   /* on a GPU: those copies on the device */
    void *python;       /* a Python-called variant's state (python_route) */
    rowops_impl impl;
    opcost_cpu_kernel kernel; /* NULL on a GPU */
} kernel_state;

static void copy_rows(const rowops_tensor *src, rowops_tensor *dst)
{
    const size_t es = rowops_dtype_size(src->dtype);
    const int64_t B = src->sizes[0], N = src->sizes[1];
    for (int64_t b = 0; b < B; ++b)
        for (int64_t i = 0; i < N; ++i)
            memcpy((char *)dst->data + (size_t)(b * N + i) * es,
                   (const char *)src->data +
                       (size_t)(b * src->strides[0] + i * src->strides[1]) * es,
                   es);
}

/* On a GPU: the contiguous copies uploaded, and the calls' x and residual
 * rebased to the device copy. */
static int to_device(kernel_state *s, size_t bytes, int nsets, int fused,
                     char *why, size_t len)
{
    char e[256];
    s->dev_copies = rowops_bridge_cuda_alloc(bytes, e, sizeof e);
    if (!s->dev_copies ||
        rowops_bridge_cuda_copy(s->dev_copies, s->copies, bytes,
                                ROWOPS_BRIDGE_TO_DEVICE, e, sizeof e)) {
        snprintf(why, len, "cannot upload the contiguous inputs: %s", e);
        return -1;
    }
    for (int i = 0; i < nsets; ++i) {
        rowops_tensor *t[2] = {&s->calls[i].x, &s->calls[i].residual};
        for (int k = 0; k < (fused ? 2 : 1); ++k) {
            t[k]->data = (char *)s->dev_copies +
                         ((char *)t[k]->data - (char *)s->copies);
            t[k]->device = ROWOPS_DEVICE_CUDA;
        }
    }
    return 0;
}

static int kernel_prepare(opcost_path_run *r, char *why, size_t len)
{
    kernel_state *s = calloc(1, sizeof *s);
    opcost_workload *w = r->w;
    if (!s || !(s->calls = calloc((size_t)w->nsets, sizeof *s->calls)))
        goto oom;
    r->priv = s;
    const int fused = w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const size_t bytes =
        (size_t)(w->c.B * w->c.N) * rowops_dtype_size(w->c.dtype);
    const size_t per_set = (bytes + 63) / 64 * 64 * (fused ? 2 : 1);
    /* the workload's: flushed with the sets as the inputs they copy. A
     * column-major variant takes a transposed point's inputs as they lie
     * (the layout it is for), so --variants pairs those kernels there. */
    const int as_they_lie = r->variant->fast == ROWOPS_LAYOUT_COLUMNS &&
                            w->c.layout == OPCOST_TRANSPOSED;
    if (w->c.layout != OPCOST_CONTIGUOUS && !as_they_lie &&
        !(s->copies = opcost_workload_scratch(w, per_set)))
        goto oom;
    for (int i = 0; i < w->nsets; ++i) {
        rowops_call c = opcost_workload_call(w, i);
        if (s->copies) {
            /* the host copy of the inputs, made contiguous */
            const rowops_call h = opcost_workload_host_call(w, i);
            char *base = (char *)s->copies + per_set * (size_t)i;
            rowops_tensor x =
                opcost_contiguous(base, w->c.dtype, w->c.B, w->c.N);
            copy_rows(&h.x, &x);
            c.x = x;
            if (fused) {
                rowops_tensor res = opcost_contiguous(
                    base + per_set / 2, w->c.dtype, w->c.B, w->c.N);
                copy_rows(&h.residual, &res);
                c.residual = res;
            }
        }
        s->calls[i] = c;
    }
    if (s->copies && w->cuda &&
        to_device(s, per_set * (size_t)w->nsets, w->nsets, fused, why, len))
        return -1;
    rowops_impl impl = r->variant->impl;
    if (r->variant == &opcost_variant_auto)
        impl = rowops_choose(&s->calls[0]).impl;
    else if (!opcost_variant_admits(r->variant, &s->calls[0], why, len))
        return 1;
    if (r->variant->runner) {
        /* a kernel called from Python: its Runner over the copies */
        kernel_state *k = s;
        r->priv = NULL;
        const int rc = opcost_python_prepare_calls(r, r->variant->runner,
                                                   k->calls, why, len);
        s->python = r->priv;
        r->priv = s;
        return rc;
    }
    s->impl = impl;
    s->kernel = opcost_cpu_kernel_of(impl);
    if (w->cuda ? !rowops_impl_is_cuda(impl) : !s->kernel) {
        snprintf(why, len, "no %s kernel for %s", w->cuda ? "CUDA" : "CPU",
                 rowops_impl_name(impl));
        return 1;
    }
    /* named so that nobody reads a transposed (or strided) row as the
     * cost of the call from that layout: kernel-e2e's row is */
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "%s%s",
             rowops_impl_name(impl), s->copies ? OPCOST_KERNEL_ON_COPIES : "");
    return 0;
oom:
    snprintf(why, len, "cannot allocate the kernel path's contiguous inputs");
    return -1;
}

/* Runs f on the Python-called variant's state (it owns r->priv there). */
#define AS_PYTHON(r, s, call)                                                  \
    do {                                                                       \
        (r)->priv = (s)->python;                                               \
        const int rc_ = (call);                                                \
        (s)->python = (r)->priv;                                               \
        (r)->priv = (s);                                                       \
        return rc_;                                                            \
    } while (0)

static int kernel_run(opcost_path_run *r, int set, char *err, size_t len)
{
    kernel_state *s = r->priv;
    if (s->python)
        AS_PYTHON(r, s, opcost_python_run(r, set, err, len));
    if (!s->kernel) /* a GPU kernel */
        return rowops_bridge_cuda_kernel(s->impl, &s->calls[set], err, len);
    opcost_run_cpu_kernel(s->impl, s->kernel, &s->calls[set]);
    return 0;
}

static int kernel_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    kernel_state *k = r->priv;
    if (k->python)
        AS_PYTHON(r, k, opcost_python_verify(r, set, why, len));
    const rowops_call *c = &((kernel_state *)r->priv)->calls[set];
    const opcost_outputs o = {c->out, c->residual_out, c->rstd};
    return opcost_verify_outputs(r->w, set, &o, why, len);
}

static void kernel_release(opcost_path_run *r)
{
    kernel_state *s = r->priv;
    if (s && s->python) {
        r->priv = s->python;
        opcost_python_release(r);
    }
    if (s) {
        free(s->calls);
        rowops_bridge_cuda_free(s->dev_copies);
        free(s);
    }
    r->priv = NULL;
}

const opcost_path opcost_path_kernel = {
    .name = "kernel",
    .devices = OPCOST_ON_CPU | OPCOST_ON_CUDA,
    .description =
        "the rowops C kernel alone, on inputs in the layout it wants "
        "(contiguous copies; a column-major variant's own layout as is)",
    .takes_variants = 1,
    .needs_torch = 1,
    .prepare = kernel_prepare,
    .run = kernel_run,
    .verify = kernel_verify,
    .convert = NULL,
    .release = kernel_release,
};
