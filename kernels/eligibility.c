/* The eligibility function: the only place that picks an implementation.
 * It reads descriptors only, never data, so it gives the same answer for
 * real and fake tensors and can be unit-tested without memory.
 *
 * Fast path (CPU: AVX2 kernel, or the portable one without AVX2/FMA/F16C;
 * CUDA: the vectorized kernel) only if all hold, else the strided kernel:
 *   1. dtype float32, float16 or bfloat16;
 *   2. 1 <= N <= the one-pass limit of the dtype;
 *   3. (CUDA) compute capability >= 8.0 and N a multiple of the vector;
 *   4. every tensor but rstd: last-dimension stride 1, row stride >= N;
 *   5. every data pointer aligned to the vector width;
 *   6. every leading stride, in bytes, a multiple of the vector width, so
 *      every row starts aligned. Leading dims of size 1 are not checked. */
#include "cpu_features.h"
#include "rowops.h"

#include <stdarg.h>
#include <stdio.h>

const char *rowops_op_name(rowops_op op)
{
    switch (op) {
    case ROWOPS_OP_RMS_NORM_ROWS: return "rms_norm_rows";
    case ROWOPS_OP_FUSED_ADD_RMS_NORM: return "fused_add_rms_norm";
    default: return "unknown";
    }
}

const char *rowops_impl_name(rowops_impl impl)
{
    switch (impl) {
    case ROWOPS_IMPL_CPU_STRIDED: return "cpu_strided";
    case ROWOPS_IMPL_CUDA_STRIDED: return "cuda_strided";
    case ROWOPS_IMPL_REFERENCE: return "reference";
    case ROWOPS_IMPL_CPU_FAST_AVX2: return "cpu_fast_avx2";
    case ROWOPS_IMPL_CPU_FAST_PORTABLE: return "cpu_fast_portable";
    case ROWOPS_IMPL_CUDA_FAST: return "cuda_fast";
    default: return "unknown";
    }
}

int64_t rowops_one_pass_limit(rowops_dtype dtype)
{
    if (dtype == ROWOPS_F64 || dtype >= ROWOPS_DTYPE_COUNT)
        return 0;
    return ROWOPS_ONE_PASS_BYTES / (int64_t)rowops_dtype_size(dtype);
}

static rowops_choice choice(rowops_impl impl, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static rowops_choice choice(rowops_impl impl, const char *fmt, ...)
{
    rowops_choice c;
    va_list ap;
    c.impl = impl;
    va_start(ap, fmt);
    vsnprintf(c.reason, sizeof c.reason, fmt, ap);
    va_end(ap);
    return c;
}

typedef struct named_tensor {
    const char *name;
    const rowops_tensor *t;
} named_tensor;

/* Every tensor a call touches, for checks that apply to all of them. */
static int call_tensors(const rowops_call *call, named_tensor *out)
{
    int n = 0;
    out[n++] = (named_tensor){"x", &call->x};
    out[n++] = (named_tensor){"out", &call->out};
    out[n++] = (named_tensor){"rstd", &call->rstd};
    if (call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        out[n++] = (named_tensor){"residual", &call->residual};
        out[n++] = (named_tensor){"weight", &call->weight};
        out[n++] = (named_tensor){"residual_out", &call->residual_out};
    }
    return n;
}

/* Conditions 4-6 for one tensor; writes why it fails into why. */
static int layout_ok(const named_tensor *nt, int64_t n, int64_t align,
                     char *why, size_t len)
{
    const rowops_tensor *t = nt->t;
    const int64_t es = (int64_t)rowops_dtype_size(t->dtype);
    const int last = t->rank - 1;
    if (t->sizes[last] > 1 && t->strides[last] != 1) {
        snprintf(why, len, "%s has last-dimension stride %lld, not 1", nt->name,
                 (long long)t->strides[last]);
        return 0;
    }
    const uintptr_t addr = (uintptr_t)t->data;
    if (addr % (uintptr_t)align) {
        snprintf(
            why, len, "%s data pointer is %u bytes past a %lld-byte boundary",
            nt->name, (unsigned)(addr % (uintptr_t)align), (long long)align);
        return 0;
    }
    for (int d = 0; d < last; ++d) {
        if (t->sizes[d] <= 1)
            continue;
        if (d == last - 1 && t->strides[d] < n) {
            snprintf(why, len, "%s row stride %lld < N = %lld (rows overlap)",
                     nt->name, (long long)t->strides[d], (long long)n);
            return 0;
        }
        if ((t->strides[d] * es) % align) {
            snprintf(why, len,
                     "%s stride %lld of dim %d (%lld bytes) is not a "
                     "multiple of %lld bytes, so rows are not all aligned",
                     nt->name, (long long)t->strides[d], d,
                     (long long)(t->strides[d] * es), (long long)align);
            return 0;
        }
    }
    return 1;
}

rowops_choice rowops_choose(const rowops_call *call)
{
    named_tensor ts[6];
    const int nt = call_tensors(call, ts);
    for (int i = 0; i < nt; ++i)
        if (ts[i].t->rank > ROWOPS_MAX_RANK)
            return choice(ROWOPS_IMPL_REFERENCE,
                          "%s has rank %d, beyond the descriptor's %d "
                          "dimensions",
                          ts[i].name, ts[i].t->rank, ROWOPS_MAX_RANK);
    const rowops_device dev = call->x.device;
    if (dev == ROWOPS_DEVICE_OTHER)
        return choice(ROWOPS_IMPL_REFERENCE,
                      "device has no rowops kernel; using the reference");
#ifndef ROWOPS_HAVE_CUDA
    if (dev == ROWOPS_DEVICE_CUDA)
        return choice(ROWOPS_IMPL_REFERENCE,
                      "CUDA: library built without CUDA kernels");
#endif
    const int cuda = dev == ROWOPS_DEVICE_CUDA;
    const rowops_impl strided =
        cuda ? ROWOPS_IMPL_CUDA_STRIDED : ROWOPS_IMPL_CPU_STRIDED;
    const char *where = cuda ? "CUDA" : "CPU";
    const rowops_dtype dt = call->x.dtype;
    const int64_t n = call->x.sizes[call->x.rank - 1];
    const int64_t limit = rowops_one_pass_limit(dt);

    /* 1. dtype */
    if (limit == 0)
        return choice(strided, "%s strided: %s has no fast kernel", where,
                      rowops_dtype_name(dt));
    /* 2. N range */
    if (n < 1 || n > limit)
        return choice(strided,
                      "%s strided: N = %lld outside the %s one-pass range "
                      "[1, %lld]",
                      where, (long long)n, rowops_dtype_name(dt),
                      (long long)limit);
    /* 3. CUDA architecture and vector divisibility */
    const int64_t align =
        cuda ? ROWOPS_CUDA_VECTOR_BYTES : ROWOPS_CPU_VECTOR_BYTES;
    if (cuda) {
        if (call->cuda_arch < ROWOPS_CUDA_MIN_ARCH)
            return choice(strided,
                          "CUDA strided: compute capability %d.%d is below "
                          "the fast kernel's %d.%d",
                          call->cuda_arch / 10, call->cuda_arch % 10,
                          ROWOPS_CUDA_MIN_ARCH / 10, ROWOPS_CUDA_MIN_ARCH % 10);
        const int64_t vec = align / (int64_t)rowops_dtype_size(dt);
        if (n % vec)
            return choice(strided,
                          "CUDA strided: N = %lld is not a multiple of the "
                          "%lld-element vector",
                          (long long)n, (long long)vec);
    }
    /* 4-6. layout and alignment of every tensor but rstd (scalar writes) */
    for (int i = 0; i < nt; ++i) {
        char why[160];
        if (ts[i].t == &call->rstd)
            continue;
        if (!layout_ok(&ts[i], n, align, why, sizeof why))
            return choice(strided, "%s strided: %s", where, why);
    }
    if (cuda)
        return choice(ROWOPS_IMPL_CUDA_FAST,
                      "CUDA fast: %s, unit stride, 16-byte aligned rows, "
                      "N = %lld <= %lld, sm_%d",
                      rowops_dtype_name(dt), (long long)n, (long long)limit,
                      call->cuda_arch);
    char feats[64];
    const unsigned have = rowops_cpu_features();
    if ((have & ROWOPS_CPU_FAST_FEATURES) != ROWOPS_CPU_FAST_FEATURES)
        return choice(ROWOPS_IMPL_CPU_FAST_PORTABLE,
                      "CPU fast (portable): eligible, but the CPU lacks "
                      "AVX2+FMA+F16C (has %s)",
                      rowops_cpu_features_text(have, feats, sizeof feats));
    return choice(ROWOPS_IMPL_CPU_FAST_AVX2,
                  "CPU fast (AVX2): %s, unit stride, 32-byte aligned rows, "
                  "N = %lld <= %lld",
                  rowops_dtype_name(dt), (long long)n, (long long)limit);
}

rowops_choice rowops_choose_backward(const rowops_backward_call *call)
{
    const rowops_tensor *ts[] = {&call->grad_out,  &call->grad_residual_out,
                                 &call->grad_rstd, &call->h,
                                 &call->weight,    &call->rstd,
                                 &call->grad_h};
    static const char *names[] = {
        "grad_out", "grad_residual_out", "grad_rstd", "h", "weight", "rstd",
        "grad_h"};
    for (size_t i = 0; i < sizeof ts / sizeof ts[0]; ++i)
        if (ts[i]->rank > ROWOPS_MAX_RANK)
            return choice(ROWOPS_IMPL_REFERENCE,
                          "backward: %s has rank %d, beyond the descriptor's "
                          "%d dimensions",
                          names[i], ts[i]->rank, ROWOPS_MAX_RANK);
    switch (call->h.device) {
    case ROWOPS_DEVICE_CPU:
        return choice(ROWOPS_IMPL_CPU_STRIDED,
                      "CPU strided backward: %s, any strides",
                      rowops_dtype_name(call->h.dtype));
    case ROWOPS_DEVICE_CUDA:
        return choice(ROWOPS_IMPL_REFERENCE,
                      "CUDA backward: no CUDA backward kernel yet; using the "
                      "reference");
    default:
        return choice(ROWOPS_IMPL_REFERENCE,
                      "device has no rowops backward kernel; using the "
                      "reference");
    }
}
