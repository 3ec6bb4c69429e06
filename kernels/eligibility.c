/* The eligibility function: the only place that picks an implementation.
 * It reads descriptors only, never data, so it gives the same answer for
 * real and fake tensors and can be unit-tested without memory.
 *
 * Fast path (CPU: AVX2 kernel, or the portable one without AVX2/FMA/F16C;
 * CUDA: the vectorized kernel) only if all hold, else the strided kernel:
 *   1. dtype float32, float16 or bfloat16;
 *   2. 1 <= N <= the one-pass limit of the dtype;
 *   3. (CUDA) compute capability >= 8.0 (below it: the reference, as the
 *      kernels are built for sm_80 and sm_90 only);
 *   4. every tensor but rstd: last-dimension stride 1, row stride >= N;
 *   5. every data pointer aligned to the vector width (CUDA: to the
 *      element; the vector width then follows from N, the pointers and the
 *      strides, rowops_cuda_vector_elems, 16 bytes down to one element);
 *   6. every leading stride, in bytes, a multiple of the vector width, so
 *      every row starts aligned. Leading dims of size 1 are not checked.
 * On the CPU the fast kernel is the AVX-512 one where AVX-512 F+BW are
 * detected (with AVX2+FMA+F16C), else the AVX2 one, else the portable one;
 * the AVX kernels stream their stores (the _nt forms) when out +
 * residual_out fill at least ROWOPS_STREAM_LLC_NUM/DEN (3/8) of the
 * last-level cache (on the AVX2 kernel the fused op in float32 only).
 *
 * Column-major rows (CPU, AVX2+FMA+F16C, dtype as in 1., any N): x 2-D with
 * strides {1, S >= B} (a transposed view), residual with x's sizes and
 * strides, weight, out and residual_out with unit last-dimension stride and
 * non-overlapping rows, no output overlapping an input: the column-major
 * kernel reads the columns once and writes row-major outputs. */
#include "cpu_cache.h"
#include "cpu_features.h"
#include "cuda/launch_config.h"
#include "rowops.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int64_t rowops_one_pass_limit(rowops_dtype dtype)
{
    if (dtype == ROWOPS_F64 || dtype >= ROWOPS_DTYPE_COUNT)
        return 0;
    return ROWOPS_ONE_PASS_BYTES / (int64_t)rowops_dtype_size(dtype);
}

/* The reason is formatted only when asked for: the kernels' hot path
 * (rowops_choose_impl) skips the vsnprintf (~0.3 us). */
static rowops_choice choice(int want_reason, rowops_impl impl, const char *fmt,
                            ...) __attribute__((format(printf, 3, 4)));

static rowops_choice choice(int want_reason, rowops_impl impl, const char *fmt,
                            ...)
{
    rowops_choice c;
    c.impl = impl;
    c.reason[0] = '\0';
    if (want_reason) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(c.reason, sizeof c.reason, fmt, ap);
        va_end(ap);
        /* a CPU choice made within a capped instruction set says so (the
         * devices from the table's own lines: this file links without
         * kernel_table.c, as the parsers' fuzz targets build it) */
        static const int device_of[] = {
#define ROWOPS_KERNEL(id, name, cpu_fn, device, layout, features, what) device,
#include "kernel_table.def"
#undef ROWOPS_KERNEL
        };
        const char *cap = rowops_cpu_capability();
        if (cap && device_of[impl] == ROWOPS_DEVICE_CPU) {
            const size_t used = strlen(c.reason);
            snprintf(c.reason + used, sizeof c.reason - used, " [%s=%s]",
                     ROWOPS_CPU_CAPABILITY_ENV, cap);
        }
    }
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

/* Bytes [lo, hi) a descriptor can touch (sizes >= 1 assumed by caller). */
static void byte_span(const rowops_tensor *t, uintptr_t *lo, uintptr_t *hi)
{
    int64_t last = 0;
    for (int d = 0; d < t->rank; ++d)
        last += (t->sizes[d] - 1) * t->strides[d];
    const int64_t es = (int64_t)rowops_dtype_size(t->dtype);
    *lo = (uintptr_t)t->data;
    *hi = *lo + (uintptr_t)((last + 1) * es);
}

static int overlaps(const rowops_tensor *a, const rowops_tensor *b)
{
    uintptr_t alo, ahi, blo, bhi;
    byte_span(a, &alo, &ahi);
    byte_span(b, &blo, &bhi);
    return alo < bhi && blo < ahi;
}

/* The fused op in place: out is x and residual_out is residual. */
static int in_place(const rowops_call *c)
{
    return c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM && c->out.data == c->x.data &&
           c->residual_out.data == c->residual.data;
}

static int row_major_ok(const rowops_tensor *t, int64_t n)
{
    const int last = t->rank - 1;
    if (t->sizes[last] > 1 && t->strides[last] != 1)
        return 0;
    return t->rank < 2 || t->sizes[last - 1] <= 1 || t->strides[last - 1] >= n;
}

/* The column-major conditions (see the top); 1 if they all hold. */
static int colmajor_ok(const rowops_call *c)
{
    const rowops_tensor *x = &c->x;
    if (x->rank != 2 || x->sizes[0] < 2 || x->sizes[1] < 2 ||
        x->strides[0] != 1 || x->strides[1] < x->sizes[0])
        return 0;
    const int64_t n = x->sizes[1];
    if (!row_major_ok(&c->out, n) || overlaps(&c->out, x))
        return 0;
    if (c->op != ROWOPS_OP_FUSED_ADD_RMS_NORM)
        return 1;
    const rowops_tensor *r = &c->residual;
    if (r->rank != 2 || r->strides[0] != 1 || r->strides[1] != x->strides[1])
        return 0;
    return row_major_ok(&c->residual_out, n) && row_major_ok(&c->weight, n) &&
           !overlaps(&c->residual_out, x) && !overlaps(&c->residual_out, r) &&
           !overlaps(&c->out, r) && !overlaps(&c->out, &c->residual_out);
}

int rowops_colmajor_inplace_ok(const rowops_call *call)
{
    const rowops_tensor *x = &call->x, *r = &call->residual;
    /* below 16 rows every row would run in the kernel's scalar code,
     * which the strided kernel beats (capped to AVX2 and one thread,
     * float32 B = 3: x1.48 of its time, paired) */
    if (call->op != ROWOPS_OP_FUSED_ADD_RMS_NORM ||
        x->device != ROWOPS_DEVICE_CPU || x->rank != 2 || x->sizes[0] < 16 ||
        x->sizes[1] < 2 || x->strides[0] != 1 || x->strides[1] < x->sizes[0])
        return 0;
    const int same_as_x = r->rank == 2 && r->sizes[0] == x->sizes[0] &&
                          r->sizes[1] == x->sizes[1] && r->strides[0] == 1 &&
                          r->strides[1] == x->strides[1];
    return same_as_x && !overlaps(x, r) && call->out.data == x->data &&
           call->residual_out.data == r->data &&
           !memcmp(call->out.strides, x->strides, 2 * sizeof *x->strides) &&
           !memcmp(call->residual_out.strides, r->strides,
                   2 * sizeof *r->strides) &&
           row_major_ok(&call->weight, x->sizes[1]);
}

int rowops_colmajor_narrow_ok(const rowops_call *call)
{
    return call->x.device == ROWOPS_DEVICE_CPU && colmajor_ok(call) &&
           call->x.strides[1] <= ROWOPS_COLMAJOR_NARROW_MAX;
}

int rowops_colmajor_copy_ok(const rowops_call *call)
{
    if (call->x.device != ROWOPS_DEVICE_CPU || !colmajor_ok(call))
        return 0;
    const int64_t n = call->x.sizes[1];
    if (n * (int64_t)rowops_dtype_size(call->x.dtype) >
        ROWOPS_COLMAJOR_COPY_ROW_BYTES)
        return 0;
    const named_tensor outs[] = {{"out", &call->out},
                                 {"residual_out", &call->residual_out},
                                 {"weight", &call->weight}};
    const int count = call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM ? 3 : 1;
    char why[160];
    for (int i = 0; i < count; ++i)
        if (!layout_ok(&outs[i], n, ROWOPS_CPU_VECTOR_BYTES, why, sizeof why))
            return 0;
    return 1;
}

/* Column-major rows (see the top), not in place, on a CPU with
 * AVX2+FMA+F16C: which of the column-major kernels. */
static rowops_choice choose_colmajor(const rowops_call *call, int want)
{
    const rowops_dtype dt = call->x.dtype;
    const unsigned have = rowops_cpu_features();
    const int wide =
        (have & ROWOPS_CPU_FAST512_FEATURES) == ROWOPS_CPU_FAST512_FEATURES;
    /* The windows below were measured on a core that runs 512-bit
     * operations in two halves (Zen 4); on one with full-width units
     * (Zen 5) the AVX-512 tiles won at 16-bit S >= 6 (S >= 5 for
     * rms_norm_rows) and at every mid stride (kernels/rowops.h). */
    const int half_rate = (have & ROWOPS_CPU_AVX512_HALF_RATE) != 0;
    const int64_t narrow = dt == ROWOPS_F32 ? ROWOPS_COLMAJOR_NARROW_PICK_F32
                           : half_rate      ? ROWOPS_COLMAJOR_NARROW_MAX
                           : call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM
                               ? ROWOPS_COLMAJOR_NARROW_PICK_16_FULL_RATE
                               : ROWOPS_COLMAJOR_NARROW_PICK_16_FULL_RATE_ROWS;
    if (call->x.strides[1] <= narrow && wide)
        return choice(want, ROWOPS_IMPL_CPU_COLMAJOR_NARROW,
                      "CPU column-major, short columns (AVX-512): %s "
                      "rows at unit stride, columns %lld <= %lld apart, "
                      "row-major outputs",
                      rowops_dtype_name(dt), (long long)call->x.strides[1],
                      (long long)narrow);
    /* No AVX-512: short 16-bit columns gathered into rows for the
     * AVX2 row kernel, where its outputs are as that kernel wants */
    const int64_t copy_max = call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM
                                 ? ROWOPS_COLMAJOR_COPY_PICK_16
                                 : ROWOPS_COLMAJOR_COPY_PICK_16_ROWS;
    if (!wide && dt != ROWOPS_F32 && call->x.strides[1] <= copy_max &&
        rowops_colmajor_copy_ok(call))
        return choice(want, ROWOPS_IMPL_CPU_COLMAJOR_COPY,
                      "CPU column-major, short columns (AVX2): %s rows "
                      "at unit stride, columns %lld <= %lld apart, "
                      "gathered into rows for the AVX2 row kernel",
                      rowops_dtype_name(dt), (long long)call->x.strides[1],
                      (long long)copy_max);
    /* The tiles of the whole range read along memory, but at mid
     * strides (float32 S = 33-383, and the fused op in 16 bits S =
     * 128-767) on a half-rate core, where the AVX2 tiles' 512-byte
     * segments ran ahead (kernels/rowops.h, docs/dispatch.md: paired,
     * Zen 4). */
    const int64_t s = call->x.strides[1];
    const int mid =
        half_rate &&
        (dt == ROWOPS_F32 ? s > ROWOPS_COLMAJOR_AVX512_MAX_F32 &&
                                s < ROWOPS_COLMAJOR_AVX512_FROM_F32
                          : call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM &&
                                s > ROWOPS_COLMAJOR_AVX512_MAX_16 &&
                                s < ROWOPS_COLMAJOR_AVX512_FROM_16);
    if (!mid && wide)
        return choice(want, ROWOPS_IMPL_CPU_COLMAJOR_AVX512,
                      "CPU column-major (AVX-512): %s rows at unit "
                      "stride, columns %lld apart, row-major outputs, "
                      "the range's columns read along memory",
                      rowops_dtype_name(dt), (long long)call->x.strides[1]);
    return choice(want, ROWOPS_IMPL_CPU_COLMAJOR_AVX2,
                  "CPU column-major (AVX2): %s rows at unit stride, "
                  "columns %lld apart, row-major outputs%s",
                  rowops_dtype_name(dt), (long long)call->x.strides[1],
                  mid ? " (a mid stride on a core that runs 512-bit "
                        "operations in two halves)"
                      : "");
}

/* The row-major fast CPU kernel for a call that meets conditions 1-6:
 * portable, AVX2 or AVX-512, ordinary or streaming stores, which
 * prefetch. */
static rowops_choice choose_cpu_fast(const rowops_call *call, int want,
                                     int64_t n, int64_t limit)
{
    const rowops_dtype dt = call->x.dtype;
    char feats[64];
    const unsigned have = rowops_cpu_features();
    if ((have & ROWOPS_CPU_FAST_FEATURES) != ROWOPS_CPU_FAST_FEATURES)
        return choice(want, ROWOPS_IMPL_CPU_FAST_PORTABLE,
                      "CPU fast (portable): eligible, but the CPU lacks "
                      "AVX2+FMA+F16C (has %s)",
                      rowops_cpu_features_text(have, feats, sizeof feats));
    const double out_bytes = (double)rowops_tensor_rows(&call->x) * (double)n *
                             (double)rowops_dtype_size(dt) *
                             rowops_op_info_of(call->op)->row_outputs;
    const double llc = (double)rowops_cpu_llc_bytes_cached();
    const int wide =
        (have & ROWOPS_CPU_FAST512_FEATURES) == ROWOPS_CPU_FAST512_FEATURES;
    const int large =
        out_bytes * ROWOPS_STREAM_LLC_DEN >= ROWOPS_STREAM_LLC_NUM * llc;
    /* Streaming stores for every large call but the fused op in 16 bits on
     * the AVX2 kernel. Both kernels write each output's 64-byte line with
     * consecutive stores (a 32-element block) and start pass 2 away from
     * the inputs' page offsets (stream_rotation): measured here (Zen 4, 256
     * MiB, 2 threads, paired runs) fused bfloat16 streamed reaches 0.85-0.91
     * of the DRAM ceiling at 512 bits and 0.80-0.86 at 256 bits, against
     * 0.60-0.62 with ordinary stores. Before those two changes the 256-bit
     * kernel, writing half lines of h and out in turn, ran at 0.29 here and
     * was reported 10x below ordinary stores on AVX2-only EPYCs (Zen 2/3),
     * which no machine here has: there the fused 16-bit op keeps ordinary
     * stores (0.68 of the ceiling measured there) until streaming is
     * measured. */
    /* In place the outputs are the lines just read: a streaming store
     * spares no read for ownership there, only evicts them. float32 in place
     * keeps ordinary stores (the two-pass rows, cpu_fast_pipeline.h): Zen 5,
     * N = 4096, B = 925 and 3152, paired with the streamed kernel, x0.74-0.97
     * on one thread, x0.45-0.85 on two. bfloat16 in place measured the
     * other way (x1.05-1.33 with ordinary stores) and streams. */
    const int f32_in_place = dt == ROWOPS_F32 && in_place(call);
    const int stream =
        large && !f32_in_place &&
        (dt == ROWOPS_F32 || call->op == ROWOPS_OP_RMS_NORM_ROWS || wide);
    /* on a half-rate 512-bit core: AVX2 in the cache, and float16 when
     * streaming too (rowops.h) */
    const int half_rate = wide && (have & ROWOPS_CPU_AVX512_HALF_RATE);
    const int halved =
        half_rate &&
        (large
             ? dt == ROWOPS_F16
             : !(dt == ROWOPS_BF16 &&
                 out_bytes <= (double)ROWOPS_HALF_RATE_BF16_512_MAX_OUT_BYTES));
    const int use512 = wide && !halved;
    /* where measured faster (rowops.h): the streaming kernels' inputs
     * prefetched non-temporally */
    const int nta = stream && (have & ROWOPS_CPU_PREFETCH_NTA);
    const rowops_impl impl = use512 ? (nta ? ROWOPS_IMPL_CPU_FAST_AVX512_NTA
                                       : stream ? ROWOPS_IMPL_CPU_FAST_AVX512_NT
                                                : ROWOPS_IMPL_CPU_FAST_AVX512)
                                    : (nta      ? ROWOPS_IMPL_CPU_FAST_AVX2_NTA
                                       : stream ? ROWOPS_IMPL_CPU_FAST_AVX2_NT
                                                : ROWOPS_IMPL_CPU_FAST_AVX2);
    const char *isa = use512 ? "AVX-512" : "AVX2";
    if (stream)
        return choice(want, impl,
                      "CPU fast (%s, streaming stores%s): %s, unit stride, "
                      "32-byte aligned rows, N = %lld <= %lld, outputs "
                      "%.1f MiB >= %d/%d of the %.0f MiB last-level cache%s",
                      isa, nta ? ", non-temporal prefetch" : "",
                      rowops_dtype_name(dt), (long long)n, (long long)limit,
                      out_bytes / 1048576.0, ROWOPS_STREAM_LLC_NUM,
                      ROWOPS_STREAM_LLC_DEN, llc / 1048576.0,
                      halved ? " (float16, 512-bit in two halves: AVX2)" : "");
    if (large)
        return choice(want, impl,
                      "CPU fast (%s): %s, unit stride, 32-byte aligned rows, "
                      "N = %lld <= %lld, ordinary stores (%s)",
                      isa, rowops_dtype_name(dt), (long long)n,
                      (long long)limit,
                      f32_in_place ? "in place: the outputs are the lines "
                                     "just read"
                                   : "the AVX2 kernel streams the fused op in "
                                     "float32 only");
    return choice(want, impl,
                  "CPU fast (%s): %s, unit stride, 32-byte aligned rows, "
                  "N = %lld <= %lld%s",
                  isa, rowops_dtype_name(dt), (long long)n, (long long)limit,
                  halved ? " (in the cache on a core that runs 512-bit "
                           "operations in two halves: AVX2)"
                         : "");
}

/* The conditions at the top, in order (column-major rows, which take any
 * N, before the N range); the reason is formatted only when want is set. */
static rowops_choice choose(const rowops_call *call, int want)
{
    named_tensor ts[6];
    const int nt = call_tensors(call, ts);
    for (int i = 0; i < nt; ++i)
        if (ts[i].t->rank > ROWOPS_MAX_RANK)
            return choice(want, ROWOPS_IMPL_REFERENCE,
                          "%s has rank %d, beyond the descriptor's %d "
                          "dimensions",
                          ts[i].name, ts[i].t->rank, ROWOPS_MAX_RANK);
    const rowops_device dev = call->x.device;
    if (dev == ROWOPS_DEVICE_OTHER)
        return choice(want, ROWOPS_IMPL_REFERENCE,
                      "device has no rowops kernel; using the reference");
#ifndef ROWOPS_HAVE_CUDA
    if (dev == ROWOPS_DEVICE_CUDA)
        return choice(want, ROWOPS_IMPL_REFERENCE,
                      "CUDA: library built without CUDA kernels");
#endif
    const int cuda = dev == ROWOPS_DEVICE_CUDA;
    if (cuda && call->cuda_arch < ROWOPS_CUDA_MIN_ARCH)
        return choice(want, ROWOPS_IMPL_REFERENCE,
                      "CUDA: compute capability %d.%d has no rowops kernel "
                      "(built for sm_80 and sm_90); using the reference",
                      call->cuda_arch / 10, call->cuda_arch % 10);
    const rowops_impl strided =
        cuda ? ROWOPS_IMPL_CUDA_STRIDED : ROWOPS_IMPL_CPU_STRIDED;
    const char *where = cuda ? "CUDA" : "CPU";
    const rowops_dtype dt = call->x.dtype;
    const int64_t n = call->x.sizes[call->x.rank - 1];
    const int64_t limit = rowops_one_pass_limit(dt);

    /* 1. dtype */
    if (limit == 0)
        return choice(want, strided, "%s strided: %s has no fast kernel", where,
                      rowops_dtype_name(dt));
    /* column-major rows: their own kernels */
    if (!cuda && (rowops_cpu_features() & ROWOPS_CPU_FAST_FEATURES) ==
                     ROWOPS_CPU_FAST_FEATURES) {
        if (rowops_colmajor_inplace_ok(call))
            return choice(want, ROWOPS_IMPL_CPU_COLMAJOR_INPLACE,
                          "CPU column-major in place (AVX2): %s rows at unit "
                          "stride, columns %lld apart, out and h over x and "
                          "residual, 16 rows a vector",
                          rowops_dtype_name(dt), (long long)call->x.strides[1]);
        if (colmajor_ok(call))
            return choose_colmajor(call, want);
    }
    /* 2. N range */
    if (n < 1 || n > limit)
        return choice(want, strided,
                      "%s strided: N = %lld outside the %s one-pass range "
                      "[1, %lld]",
                      where, (long long)n, rowops_dtype_name(dt),
                      (long long)limit);
    /* 4-6. layout and alignment of every tensor but rstd (scalar writes);
     * CUDA needs element alignment only: the vector width adapts. */
    const int64_t align =
        cuda ? (int64_t)rowops_dtype_size(dt) : ROWOPS_CPU_VECTOR_BYTES;
    for (int i = 0; i < nt; ++i) {
        char why[160] = "";
        if (ts[i].t == &call->rstd)
            continue;
        if (!layout_ok(&ts[i], n, align, why, sizeof why))
            return choice(want, strided, "%s strided: %s", where, why);
    }
    if (cuda) {
        const int vec = rowops_cuda_vector_elems(call);
        if (vec < 1)
            return choice(want, strided,
                          "CUDA strided: the weight's data pointer is not "
                          "aligned to its element");
        return choice(want, ROWOPS_IMPL_CUDA_FAST,
                      "CUDA fast: %s, unit stride, %d-byte vectors (%d "
                      "element%s), N = %lld <= %lld, sm_%d",
                      rowops_dtype_name(dt), vec * (int)rowops_dtype_size(dt),
                      vec, vec > 1 ? "s" : "", (long long)n, (long long)limit,
                      call->cuda_arch);
    }
    return choose_cpu_fast(call, want, n, limit);
}

rowops_choice rowops_choose(const rowops_call *call)
{
    return choose(call, 1);
}

rowops_impl rowops_choose_impl(const rowops_call *call)
{
    return choose(call, 0).impl;
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
            return choice(1, ROWOPS_IMPL_REFERENCE,
                          "backward: %s has rank %d, beyond the descriptor's "
                          "%d dimensions",
                          names[i], ts[i]->rank, ROWOPS_MAX_RANK);
    switch (call->h.device) {
    case ROWOPS_DEVICE_CPU:
        return choice(1, ROWOPS_IMPL_CPU_STRIDED,
                      "CPU strided backward: %s, any strides",
                      rowops_dtype_name(call->h.dtype));
    case ROWOPS_DEVICE_CUDA:
#ifdef ROWOPS_HAVE_CUDA
        if (call->cuda_arch < ROWOPS_CUDA_MIN_ARCH)
            return choice(1, ROWOPS_IMPL_REFERENCE,
                          "CUDA backward: compute capability %d.%d has no "
                          "rowops kernel (built for sm_80 and sm_90); using "
                          "the reference",
                          call->cuda_arch / 10, call->cuda_arch % 10);
        return choice(1, ROWOPS_IMPL_CUDA_STRIDED,
                      "CUDA strided backward: %s, any strides (tiles of rows "
                      "through shared memory), weight gradient in two "
                      "float%d stages",
                      rowops_dtype_name(call->h.dtype),
                      call->h.dtype == ROWOPS_F64 ? 64 : 32);
#else
        return choice(1, ROWOPS_IMPL_REFERENCE,
                      "CUDA backward: library built without CUDA kernels");
#endif
    default:
        return choice(1, ROWOPS_IMPL_REFERENCE,
                      "device has no rowops backward kernel; using the "
                      "reference");
    }
}
