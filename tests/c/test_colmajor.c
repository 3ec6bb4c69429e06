/* The column-major kernels (rowops_cpu_colmajor_avx2 and, where its
 * outputs are aligned rows, rowops_cpu_colmajor_copy; where the CPU has
 * AVX-512 F+BW rowops_cpu_colmajor_avx512 and, where it is admitted,
 * rowops_cpu_colmajor_narrow) against the C double
 * reference: float32/float16/bfloat16, both ops, float32 and same-dtype
 * weights, x = t.T (column stride S = B) and padded columns (S = B + 5, with
 * misaligned data and padded, misaligned output rows), column strides at
 * multiples of 1 KiB, narrow to wide N,
 * and row ranges cut into 2-3 uneven pieces run out of order (a thread
 * pool). residual_out must equal x + residual rounded, bit for bit; out and
 * rstd are held to the fuzz test's tolerances. Outputs start as NaN poison;
 * the gaps between output rows, and rows outside the first piece's range
 * after it ran, must still hold it. Exit 77 (ctest skip) without
 * AVX2+FMA+F16C. */
#include "c_samples.h"
#include "cpu_colmajor.h"
#include "cpu_features.h"
#include "reference_f64.h"
#include "rowops_elem.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Built with -fsanitize=address (make sanitize): fewer large calls. */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static uint32_t rng = 0x2545f491u;

static uint32_t next_u32(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

/* Uniform in +-[0.1, 2] * scale, scale 1 or (one value in 16) 30. */
static double draw(void)
{
    const uint32_t v = next_u32();
    const double u = (v >> 8) / 16777216.0;
    const double scale = (v & 30) == 0 ? 30.0 : 1.0;
    return ((v & 1) ? 1 : -1) * (0.1 + 1.9 * u) * scale;
}

/* The poison of an output element: a NaN of the dtype. */
static uint32_t poison_bits(rowops_dtype dt)
{
    return dt == ROWOPS_F32   ? 0x7fc0deadu
           : dt == ROWOPS_F16 ? 0x7e5au
                              : 0x7fdau;
}

typedef struct buf {
    unsigned char *mem;
    int64_t elems; /* allocated elements */
} buf;

static void buf_alloc(buf *b, int64_t elems, size_t es)
{
    /* 64-byte aligned, so the element offsets below set the alignment */
    b->mem = aligned_alloc(64, ((size_t)elems * es + 63) / 64 * 64);
    b->elems = elems;
    if (!b->mem) {
        fprintf(stderr, "test_colmajor: out of memory\n");
        exit(2);
    }
}

static void buf_poison(buf *b, rowops_dtype dt)
{
    const uint32_t p = poison_bits(dt);
    for (int64_t i = 0; i < b->elems; ++i) {
        if (dt == ROWOPS_F32)
            ((uint32_t *)b->mem)[i] = p;
        else
            ((uint16_t *)b->mem)[i] = (uint16_t)p;
    }
}

static int is_poison(const void *base, int64_t i, rowops_dtype dt)
{
    const uint32_t v = dt == ROWOPS_F32 ? ((const uint32_t *)base)[i]
                                        : ((const uint16_t *)base)[i];
    return v == poison_bits(dt);
}

static double dtype_max(rowops_dtype dt)
{
    return dt == ROWOPS_F16    ? 65504.0
           : dt == ROWOPS_BF16 ? 3.3895313892515355e38
                               : FLT_MAX;
}

/* As fuzz_kernels' out_close: c_rtol/c_atol around the reference. */
static int out_close(double got, double want, rowops_dtype dt)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    const double tol = c_atol(dt) + c_rtol(dt) * fabs(want);
    if (isinf(got))
        return isinf(want) ? got == want
                           : (got > 0) == (want > 0) &&
                                 fabs(want) + tol >= dtype_max(dt);
    return !isinf(want) && fabs(got - want) <= tol;
}

/* As fuzz_kernels' rstd_close (float32 accumulation, up to 65537+ terms). */
static int rstd_close(double got, double want)
{
    return fabs(got - want) <= 1e-5 * fabs(want);
}

/* One shape and layout: inputs drawn once, every op/weight variant run. */
typedef struct shape {
    rowops_dtype dt;
    int64_t B, N, S;
    int padded; /* S = B + 5: misaligned x, padded misaligned out rows */
} shape;

static void set_2d(rowops_tensor *t, rowops_dtype dt, void *data, int64_t B,
                   int64_t N, int64_t s0, int64_t s1)
{
    memset(t, 0, sizeof *t);
    t->data = data;
    t->dtype = dt;
    t->device = ROWOPS_DEVICE_CPU;
    t->rank = 2;
    t->sizes[0] = B;
    t->sizes[1] = N;
    t->strides[0] = s0;
    t->strides[1] = s1;
}

static void set_1d(rowops_tensor *t, rowops_dtype dt, void *data, int64_t n,
                   int64_t stride)
{
    memset(t, 0, sizeof *t);
    t->data = data;
    t->dtype = dt;
    t->device = ROWOPS_DEVICE_CPU;
    t->rank = 1;
    t->sizes[0] = n;
    t->strides[0] = stride;
}

/* Row range pieces: up to 3, [cut[k], cut[k + 1]), run in `order`. */
typedef struct split {
    int64_t cut[4];
    int pieces;
    int order[3];
} split;

static split make_split(int64_t B, int mode)
{
    split s;
    if (mode == 0) { /* two pieces, the later one first */
        int64_t a = B * 2 / 5 + 1;
        if (a > B)
            a = B;
        s.pieces = 2;
        s.cut[0] = 0;
        s.cut[1] = a;
        s.cut[2] = B;
        s.order[0] = 1;
        s.order[1] = 0;
    } else { /* three uneven pieces, the middle one first */
        int64_t a = B / 7 + 1, b = B / 2 + 3;
        if (a > B)
            a = B;
        if (b > B)
            b = B;
        s.pieces = 3;
        s.cut[0] = 0;
        s.cut[1] = a;
        s.cut[2] = b;
        s.cut[3] = B;
        s.order[0] = 1;
        s.order[1] = 2;
        s.order[2] = 0;
    }
    return s;
}

static long long cases_run, narrow_calls, wide512_calls, copy_calls;

static void run_variant(rowops_impl impl, const shape *sh, rowops_op op,
                        rowops_dtype wdt, const buf *x, const buf *r, buf *w,
                        buf *out, buf *rout, buf *rstd, int64_t xoff,
                        int64_t ooff, int64_t ors, int64_t rss, int mode)
{
    const rowops_dtype dt = sh->dt;
    const int64_t B = sh->B, N = sh->N;
    const size_t es = rowops_dtype_size(dt);
    const int fused = op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    char what[160];
    snprintf(what, sizeof what, "%s: %s %s weight=%s B=%lld N=%lld S=%lld%s",
             rowops_impl_name(impl), rowops_op_name(op), rowops_dtype_name(dt),
             rowops_dtype_name(wdt), (long long)B, (long long)N,
             (long long)sh->S, sh->padded ? " padded" : "");

    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.eps = 1e-6;
    set_2d(&c.x, dt, x->mem + (size_t)xoff * es, B, N, 1, sh->S);
    set_2d(&c.out, dt, out->mem + (size_t)ooff * es, B, N, ors, 1);
    set_1d(&c.rstd, ROWOPS_F32, rstd->mem, B, rss);
    if (fused) {
        set_2d(&c.residual, dt, r->mem + (size_t)xoff * es, B, N, 1, sh->S);
        set_2d(&c.residual_out, dt, rout->mem + (size_t)ooff * es, B, N, ors,
               1);
        set_1d(&c.weight, wdt, w->mem, N, 1);
        for (int64_t i = 0; i < N; ++i)
            rowops_store_d(w->mem, i, wdt, 0.5 + 0.25 * (double)(i % 7));
        /* A float32 NaN whose low bits would carry into the sign if
         * rounded to bfloat16 like a number. */
        if (wdt == ROWOPS_F32 && (B & 1) && N > 3) {
            const uint32_t nan_bits = 0x7fffffffu;
            memcpy((float *)w->mem + 3, &nan_bits, 4);
        }
    }
    char err[256];
    C_EXPECT(rowops_check_call(&c, err, sizeof err) == 0, "%s: invalid: %s",
             what, err);
    /* the short-column kernel where it is admitted (B >= 2, S <= 16) and
     * the CPU has AVX-512 F+BW; the wide-tile kernels on every call, where
     * the CPU has their features */
    const rowops_kernel_info *info = rowops_kernel_info_of(impl);
    const int wide = impl == ROWOPS_IMPL_CPU_COLMAJOR_AVX2 ||
                     impl == ROWOPS_IMPL_CPU_COLMAJOR_AVX512;
    if (wide ? (rowops_cpu_features() & info->features) != info->features
             : !rowops_kernel_can_run(impl, &c))
        return;
    const rowops_cpu_kernel_fn kernel = info->cpu;

    buf_poison(out, dt);
    buf_poison(rstd, ROWOPS_F32);
    if (fused)
        buf_poison(rout, dt);

    /* First piece alone: rows outside it must stay poisoned. */
    const split sp = make_split(B, mode);
    const int first = sp.order[0];
    kernel(&c, sp.cut[first], sp.cut[first + 1]);
    long long stray = 0;
    for (int64_t b = 0; b < B && stray == 0; ++b) {
        if (b >= sp.cut[first] && b < sp.cut[first + 1])
            continue;
        for (int64_t j = 0; j < N; ++j) {
            const int64_t e = b * ors + j;
            stray += !is_poison(c.out.data, e, dt);
            if (fused)
                stray += !is_poison(c.residual_out.data, e, dt);
        }
        stray += !is_poison(rstd->mem, b * rss, ROWOPS_F32);
    }
    C_EXPECT(stray == 0, "%s: rows [%lld, %lld) alone wrote outside them", what,
             (long long)sp.cut[first], (long long)sp.cut[first + 1]);
    for (int k = 1; k < sp.pieces; ++k) {
        const int p = sp.order[k];
        kernel(&c, sp.cut[p], sp.cut[p + 1]);
    }
    ++cases_run;
    narrow_calls += impl == ROWOPS_IMPL_CPU_COLMAJOR_NARROW;
    wide512_calls += impl == ROWOPS_IMPL_CPU_COLMAJOR_AVX512;
    copy_calls += impl == ROWOPS_IMPL_CPU_COLMAJOR_COPY;

    /* Gaps and the poison around the data stay untouched. */
    long long gaps = 0;
    for (int64_t e = 0; e < out->elems; ++e) {
        const int64_t rel = e - ooff;
        if (rel >= 0 && rel / ors < B && rel % ors < N)
            continue;
        gaps += !is_poison(out->mem, e, dt);
        if (fused)
            gaps += !is_poison(rout->mem, e, dt);
    }
    for (int64_t e = 0; e < rstd->elems; ++e)
        if (e % rss != 0 || e / rss >= B)
            gaps += !is_poison(rstd->mem, e, ROWOPS_F32);
    C_EXPECT(gaps == 0, "%s: %lld elements outside the outputs written", what,
             gaps);

    double *ref_out = malloc((size_t)(B * N) * sizeof(double));
    double *ref_h = malloc((size_t)(B * N) * sizeof(double));
    double *ref_rstd = malloc((size_t)B * sizeof(double));
    rowops_reference_f64(&c, ref_out, fused ? ref_h : NULL, ref_rstd);

    long long bad_rstd = 0, bad_out = 0, bad_h = 0;
    for (int64_t b = 0; b < B; ++b) {
        const double got_rstd = rowops_load_d(rstd->mem, b * rss, ROWOPS_F32);
        if (!rstd_close(got_rstd, ref_rstd[b]) && bad_rstd++ < 3)
            fprintf(stderr, "%s: row %lld rstd %.9g want %.9g\n", what,
                    (long long)b, got_rstd, ref_rstd[b]);
        double scale = got_rstd / ref_rstd[b];
        if (!isfinite(scale) || scale == 0)
            scale = 1;
        for (int64_t j = 0; j < N; ++j) {
            const int64_t e = b * ors + j;
            const double got = rowops_load_d(c.out.data, e, dt);
            const double want = ref_out[b * N + j] * scale;
            if (!out_close(got, want, dt) && bad_out++ < 3)
                fprintf(stderr, "%s: row %lld col %lld out %.9g want %.9g\n",
                        what, (long long)b, (long long)j, got, want);
            if (!fused)
                continue;
            /* x + residual rounded to the dtype, compared as bits. */
            const int64_t xe = b + j * sh->S;
            const float sum = rowops_load_f(c.x.data, xe, dt) +
                              rowops_load_f(c.residual.data, xe, dt);
            uint32_t want_bits, got_bits;
            if (dt == ROWOPS_F32) {
                want_bits = rowops_f32_bits(sum);
                memcpy(&got_bits, (const float *)c.residual_out.data + e, 4);
            } else {
                want_bits = dt == ROWOPS_F16 ? rowops_f32_to_f16(sum)
                                             : rowops_f32_to_bf16(sum);
                got_bits = ((const uint16_t *)c.residual_out.data)[e];
            }
            if (got_bits != want_bits && bad_h++ < 3)
                fprintf(stderr,
                        "%s: row %lld col %lld residual_out bits %#x want "
                        "%#x\n",
                        what, (long long)b, (long long)j, (unsigned)got_bits,
                        (unsigned)want_bits);
        }
    }
    C_EXPECT(bad_rstd == 0, "%s: %lld rstd mismatches", what, bad_rstd);
    C_EXPECT(bad_out == 0, "%s: %lld out mismatches", what, bad_out);
    C_EXPECT(bad_h == 0, "%s: %lld residual_out mismatches", what, bad_h);
    free(ref_out);
    free(ref_h);
    free(ref_rstd);
}

static void run_shape(const shape *sh, int *mode)
{
    const rowops_dtype dt = sh->dt;
    const int64_t B = sh->B, N = sh->N, S = sh->S;
    const size_t es = rowops_dtype_size(dt);
    /* padded: data one element in (misaligned), out rows N + 3 apart,
     * rstd with stride 2. Not padded: out rows N apart, 64-byte aligned
     * for even B, 16 bytes past a line for odd B (a partial first column
     * block). */
    const int64_t xoff = sh->padded ? 1 : 0;
    const int64_t ooff = sh->padded ? 1 : (B & 1) ? 16 / (int64_t)es : 0;
    const int64_t ors = sh->padded ? N + 3 : N, rss = sh->padded ? 2 : 1;
    buf x, r, w, out, rout, rstd;
    buf_alloc(&x, xoff + (B - 1) + (N - 1) * S + 1, es);
    buf_alloc(&r, x.elems, es);
    buf_alloc(&w, N, 4);
    buf_alloc(&out, ooff + (B - 1) * ors + N + 2, es);
    buf_alloc(&rout, out.elems, es);
    buf_alloc(&rstd, B * rss + 1, 4);
    for (int64_t i = 0; i < x.elems; ++i) {
        rowops_store_d(x.mem, i, dt, draw());
        rowops_store_d(r.mem, i, dt, draw());
    }
    static const rowops_impl impls[] = {
        ROWOPS_IMPL_CPU_COLMAJOR_AVX2, ROWOPS_IMPL_CPU_COLMAJOR_NARROW,
        ROWOPS_IMPL_CPU_COLMAJOR_AVX512, ROWOPS_IMPL_CPU_COLMAJOR_COPY};
    for (size_t k = 0; k < sizeof impls / sizeof impls[0]; ++k) {
        run_variant(impls[k], sh, ROWOPS_OP_RMS_NORM_ROWS, ROWOPS_F32, &x, &r,
                    &w, &out, &rout, &rstd, xoff, ooff, ors, rss,
                    (*mode)++ & 1);
        run_variant(impls[k], sh, ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F32, &x,
                    &r, &w, &out, &rout, &rstd, xoff, ooff, ors, rss,
                    (*mode)++ & 1);
        if (dt != ROWOPS_F32)
            run_variant(impls[k], sh, ROWOPS_OP_FUSED_ADD_RMS_NORM, dt, &x, &r,
                        &w, &out, &rout, &rstd, xoff, ooff, ors, rss,
                        (*mode)++ & 1);
    }
    free(x.mem);
    free(r.mem);
    free(w.mem);
    free(out.mem);
    free(rout.mem);
    free(rstd.mem);
}

int main(void)
{
    if ((rowops_cpu_features() & ROWOPS_CPU_FAST_FEATURES) !=
        ROWOPS_CPU_FAST_FEATURES) {
        printf("SKIP test_colmajor: the CPU lacks AVX2+FMA+F16C\n");
        return 77;
    }
    static const rowops_dtype dts[] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16};
    static const int64_t Bs[] = {1, 3, 7, 8, 9, 15, 31, 33, 100, 257};
    static const int64_t Ns[] = {1, 3, 8, 17, 64, 4096, 70000};
    int mode = 0;
    for (size_t d = 0; d < sizeof dts / sizeof dts[0]; ++d)
        for (size_t bi = 0; bi < sizeof Bs / sizeof Bs[0]; ++bi)
            for (size_t ni = 0; ni < sizeof Ns / sizeof Ns[0]; ++ni) {
                /* Wide rows with B <= 33 only (B <= 9 sanitized): the
                 * time limit. */
                if (Ns[ni] > 4096 && Bs[bi] > (SANITIZED ? 9 : 33))
                    continue;
                for (int padded = 0; padded < 2; ++padded) {
                    const shape sh = {dts[d], Bs[bi], Ns[ni],
                                      Bs[bi] + (padded ? 5 : 0), padded};
                    run_shape(&sh, &mode);
                }
            }
    /* Column strides at multiples of 1 KiB (the AVX-512 tiles' near
     * prefetch, cpu_colmajor_avx512.c): S = B and padded past B, fewer
     * units than the prefetch distance (B = 16 float32), more rows than a
     * tile (B = 2048), misaligned data (B = 500 padded to S = 512). */
    static const shape aliasing[] = {
        {ROWOPS_F32, 256, 64, 256, 0},    {ROWOPS_F32, 16, 40, 256, 0},
        {ROWOPS_F32, 1000, 33, 1024, 0},  {ROWOPS_BF16, 512, 100, 512, 0},
        {ROWOPS_BF16, 500, 70, 512, 1},   {ROWOPS_F16, 2048, 33, 2048, 0},
        {ROWOPS_BF16, 2048, 65, 2048, 0}, {ROWOPS_F16, 40, 3, 4096, 0}};
    for (size_t i = 0; i < sizeof aliasing / sizeof aliasing[0]; ++i)
        run_shape(&aliasing[i], &mode);
    /* Calls of at least 8 MiB per tensor: streaming stores (h and out);
     * residual_out's rows 64-byte aligned (even B) or not (odd B: a
     * partial first column block), or padded (no streamed h). */
    static const struct {
        rowops_dtype dt;
        int64_t B;
        int padded;
    } big[] = {{ROWOPS_F32, 520, 0},   {ROWOPS_F32, 521, 0},
               {ROWOPS_F32, 520, 1},   {ROWOPS_BF16, 1040, 0},
               {ROWOPS_BF16, 1041, 0}, {ROWOPS_BF16, 1040, 1},
               {ROWOPS_F16, 1041, 0}};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; ++i) {
        if (SANITIZED && i % 3 != 1)
            continue; /* unoptimized and instrumented: a few only */
        const shape sh = {big[i].dt, big[i].B, 4096,
                          big[i].B + (big[i].padded ? 5 : 0), big[i].padded};
        run_shape(&sh, &mode);
    }
    printf("test_colmajor: %lld kernel calls checked, %lld of them "
           "cpu_colmajor_narrow, %lld cpu_colmajor_avx512, %lld "
           "cpu_colmajor_copy\n",
           cases_run, narrow_calls, wide512_calls, copy_calls);
    C_EXPECT(copy_calls > 0, "cpu_colmajor_copy never ran");
    if ((rowops_cpu_features() & ROWOPS_CPU_FAST512_FEATURES) ==
        ROWOPS_CPU_FAST512_FEATURES) {
        C_EXPECT(narrow_calls > 0, "cpu_colmajor_narrow never ran");
        C_EXPECT(wide512_calls > 0, "cpu_colmajor_avx512 never ran");
    } else {
        printf("SKIP cpu_colmajor_narrow, cpu_colmajor_avx512: the CPU lacks "
               "AVX-512 F+BW\n");
    }
    return c_report("test_colmajor");
}
