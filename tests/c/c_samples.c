#include "c_samples.h"
#include "rowops_elem.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int c_failures = 0;
int c_checks = 0;

void c_expect_str(const char *file, int line, const char *got, const char *want,
                  const char *fmt, ...)
{
    ++c_checks;
    if (!strcmp(got, want))
        return;
    ++c_failures;
    fprintf(stderr, "%s:%d: FAIL: ", file, line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\n  got  %s\n  want %s\n", got, want);
}

int c_report(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, c_checks, c_failures);
    return c_failures ? 1 : 0;
}

const char *c_layout_name(c_layout layout)
{
    static const char *names[] = {"contiguous",  "transposed", "row_strided",
                                  "col_strided", "expanded",   "offset",
                                  "3d"};
    return layout < C_LAYOUT_COUNT ? names[layout] : "unknown";
}

double c_rtol(rowops_dtype dtype)
{
    switch (dtype) {
    case ROWOPS_F16: return 1.5e-3;
    case ROWOPS_BF16: return 1e-2;
    case ROWOPS_F64: return 1e-12;
    default: return 2e-6;
    }
}

double c_atol(rowops_dtype dtype)
{
    switch (dtype) {
    case ROWOPS_F16: return 1e-4;
    case ROWOPS_BF16: return 1e-3;
    case ROWOPS_F64: return 1e-14;
    default: return 1e-6;
    }
}

static uint32_t next_random(uint32_t *state)
{
    *state ^= *state << 13;
    *state ^= *state >> 17;
    *state ^= *state << 5;
    return *state;
}

/* Uniform in [-2, -0.1] u [0.1, 2]: never zero. */
static double random_value(uint32_t *state)
{
    const double u = (next_random(state) >> 8) / 16777216.0;
    const double mag = 0.1 + 1.9 * u;
    return (next_random(state) & 1) ? mag : -mag;
}

static void *track(c_sample *s, size_t bytes)
{
    /* 64-byte aligned, like PyTorch's CPU allocator, so contiguous samples
     * are eligible for the fast kernels. */
    void *p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    s->buffers[s->nbuf++] = p;
    return p;
}

/* Allocates storage for a [B, N] (or [B, 2, N]) tensor in `layout` and
 * fills its descriptor; fill: 1 random values, 0 NaN poison. */
static void make_tensor(c_sample *s, rowops_tensor *t, rowops_dtype dt,
                        c_layout layout, int64_t B, int64_t N, int fill,
                        uint32_t *rng)
{
    const size_t es = rowops_dtype_size(dt);
    int64_t elems = 0, offset = 0;
    memset(t, 0, sizeof *t);
    t->dtype = dt;
    t->device = ROWOPS_DEVICE_CPU;
    t->rank = 2;
    t->sizes[0] = B;
    t->sizes[1] = N;
    switch (layout) {
    case C_TRANSPOSED:
        elems = B * N;
        t->strides[0] = 1;
        t->strides[1] = B;
        break;
    case C_ROW_STRIDED:
        elems = B * (N + 3);
        t->strides[0] = N + 3;
        t->strides[1] = 1;
        break;
    case C_COL_STRIDED:
        elems = B * 2 * N;
        t->strides[0] = 2 * N;
        t->strides[1] = 2;
        break;
    case C_EXPANDED:
        elems = N;
        t->strides[0] = 0;
        t->strides[1] = 1;
        break;
    case C_OFFSET:
        elems = B * N + 1;
        offset = 1;
        t->strides[0] = N;
        t->strides[1] = 1;
        break;
    case C_3D:
        elems = B * 2 * N;
        t->rank = 3;
        t->sizes[1] = 2;
        t->sizes[2] = N;
        t->strides[0] = N;
        t->strides[1] = B * N;
        t->strides[2] = 1;
        break;
    default:
        elems = B * N;
        t->strides[0] = N;
        t->strides[1] = 1;
        break;
    }
    char *base = track(s, (size_t)elems * es);
    if (fill) {
        for (int64_t i = 0; i < elems; ++i)
            rowops_store_d(base, i, dt, random_value(rng));
    } else {
        memset(base, 0xff, (size_t)elems * es); /* NaN in every dtype */
    }
    t->data = base + offset * (int64_t)es;
}

int c_sample_make(c_sample *s, rowops_op op, rowops_dtype dtype,
                  rowops_dtype weight_dtype, c_layout layout, int64_t B,
                  int64_t N, int inplace, unsigned seed)
{
    uint32_t rng = seed * 2654435761u + 12345u;
    memset(s, 0, sizeof *s);
    rowops_call *c = &s->call;
    c->op = op;
    c->eps = 1e-6;
    /* Outputs follow the input layout, except where that would alias. */
    const c_layout out_layout = layout == C_EXPANDED ? C_CONTIGUOUS : layout;
    make_tensor(s, &c->x, dtype, layout, B, N, 1, &rng);
    if (op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        make_tensor(s, &c->residual, dtype, layout, B, N, 1, &rng);
        /* weight [N]; every other element in the column-strided layout */
        const int64_t ws = layout == C_COL_STRIDED ? 2 : 1;
        char *w = track(s, (size_t)(N * ws) * rowops_dtype_size(weight_dtype));
        for (int64_t i = 0; i < N * ws; ++i)
            rowops_store_d(w, i, weight_dtype, random_value(&rng));
        c->weight.data = w;
        c->weight.dtype = weight_dtype;
        c->weight.device = ROWOPS_DEVICE_CPU;
        c->weight.rank = 1;
        c->weight.sizes[0] = N;
        c->weight.strides[0] = ws;
    }
    if (inplace && op == ROWOPS_OP_FUSED_ADD_RMS_NORM && layout != C_EXPANDED) {
        c->out = c->x;
        c->residual_out = c->residual;
    } else {
        make_tensor(s, &c->out, dtype, out_layout, B, N, 0, &rng);
        if (op == ROWOPS_OP_FUSED_ADD_RMS_NORM)
            make_tensor(s, &c->residual_out, dtype, out_layout, B, N, 0, &rng);
    }
    /* rstd: dense over the leading dims, poisoned. */
    const rowops_dtype acc = rowops_acc_dtype(dtype);
    const int64_t rows = rowops_tensor_rows(&c->x);
    c->rstd.data = track(s, (size_t)rows * rowops_dtype_size(acc));
    memset(c->rstd.data, 0xff, (size_t)rows * rowops_dtype_size(acc));
    c->rstd.dtype = acc;
    c->rstd.device = ROWOPS_DEVICE_CPU;
    c->rstd.rank = c->x.rank - 1;
    int64_t stride = 1;
    for (int d = c->rstd.rank - 1; d >= 0; --d) {
        c->rstd.sizes[d] = c->x.sizes[d];
        c->rstd.strides[d] = stride;
        stride *= c->x.sizes[d];
    }
    return 0;
}

void c_sample_free(c_sample *s)
{
    for (int i = 0; i < s->nbuf; ++i)
        free(s->buffers[i]);
    s->nbuf = 0;
}

void c_run_kernel(rowops_impl impl, const rowops_call *call, int split)
{
    const rowops_cpu_kernel_fn fn = rowops_kernel_info_of(impl)->cpu;
    const int64_t rows = rowops_tensor_rows(&call->x);
    if (!split) {
        fn(call, 0, rows);
        return;
    }
    fn(call, rows / 2, rows);
    fn(call, 0, rows / 2);
}

rowops_tensor c_desc2d(rowops_dtype dt, uintptr_t addr, int64_t s0, int64_t s1,
                       int64_t st0, int64_t st1)
{
    rowops_tensor t;
    memset(&t, 0, sizeof t);
    t.data = (void *)addr;
    t.dtype = dt;
    t.rank = 2;
    t.sizes[0] = s0;
    t.sizes[1] = s1;
    t.strides[0] = st0;
    t.strides[1] = st1;
    return t;
}
