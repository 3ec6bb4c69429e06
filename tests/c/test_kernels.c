/* Every C kernel against the C double reference: both ops, every dtype and
 * weight dtype, every layout, in-place and functional, odd and edge sizes.
 * Every output element is checked; outputs start as NaN poison. */
#include "c_samples.h"
#include "cpu_features.h"
#include "reference_f64.h"
#include "rowops_elem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every CPU kernel of the table (kernels/kernel_table.def) but the
 * column-major ones that read tiles (tests/c/test_colmajor.c), each over
 * the whole range and over two disjoint ranges in reverse order, as a
 * thread pool would split them; the in-place column-major kernel here, on
 * the transposed samples in place (rowops_kernel_can_run). */
static int row_kernel(rowops_impl impl)
{
    const rowops_kernel_info *k = rowops_kernel_info_of(impl);
    return k->cpu && (k->layout != ROWOPS_LAYOUT_COLUMNS ||
                      impl == ROWOPS_IMPL_CPU_COLMAJOR_INPLACE);
}

static int fast_runs = 0, inplace_colmajor_runs = 0;

static int close_enough(double got, double want, rowops_dtype dt)
{
    if (isnan(want))
        return isnan(got);
    if (isinf(want))
        return got == want;
    return fabs(got - want) <= c_atol(dt) + c_rtol(dt) * fabs(want);
}

static double element(const rowops_tensor *t, int64_t row, int64_t i)
{
    const int64_t off =
        rowops_tensor_row_offset(t, row) + i * t->strides[t->rank - 1];
    return rowops_load_d(t->data, off, t->dtype);
}

static void check_one(rowops_impl impl, int split, rowops_op op,
                      rowops_dtype dt, rowops_dtype wdt, c_layout layout,
                      int64_t B, int64_t N, int inplace)
{
    c_sample s;
    c_sample_make(&s, op, dt, wdt, layout, B, N, inplace,
                  (unsigned)(B * 131 + N * 7 + layout));
    const rowops_call *c = &s.call;
    char kname[64];
    snprintf(kname, sizeof kname, "%s%s", rowops_impl_name(impl),
             split ? "/split" : "");
    /* a fast kernel runs only on calls the eligibility function sends to
     * the fast path, and only where the CPU has its features */
    if (!rowops_kernel_can_run(impl, c)) {
        c_sample_free(&s);
        return;
    }
    if (rowops_kernel_info_of(impl)->layout != ROWOPS_LAYOUT_ANY)
        ++fast_runs;
    inplace_colmajor_runs += impl == ROWOPS_IMPL_CPU_COLMAJOR_INPLACE;
    char err[256];
    C_EXPECT(rowops_check_call(c, err, sizeof err) == 0, "invalid sample: %s",
             err);
    const int64_t rows = rowops_tensor_rows(&c->x);
    double *ref_out = calloc((size_t)(rows * N + 1), sizeof(double));
    double *ref_h = calloc((size_t)(rows * N + 1), sizeof(double));
    double *ref_rstd = calloc((size_t)(rows + 1), sizeof(double));
    rowops_reference_f64(c, ref_out, ref_h, ref_rstd);
    c_run_kernel(impl, c, split);
    int bad = 0;
    for (int64_t r = 0; r < rows; ++r) {
        const double rs =
            rowops_load_d(c->rstd.data,
                          rowops_index_offset(c->rstd.sizes, c->rstd.strides,
                                              c->rstd.rank, r),
                          c->rstd.dtype);
        /* float32 accumulation over up to 65536 terms: 1e-5 relative */
        const double rtol = dt == ROWOPS_F64 ? 1e-12 : 1e-5;
        if (!(fabs(rs - ref_rstd[r]) <= rtol * fabs(ref_rstd[r]))) {
            fprintf(stderr, "  row %lld: rstd %.9g want %.9g\n", (long long)r,
                    rs, ref_rstd[r]);
            ++bad;
        }
        for (int64_t i = 0; i < N; ++i) {
            if (!close_enough(element(&c->out, r, i), ref_out[r * N + i], dt)) {
                if (!bad)
                    fprintf(stderr, "  row %lld col %lld: out %.9g want %.9g\n",
                            (long long)r, (long long)i, element(&c->out, r, i),
                            ref_out[r * N + i]);
                ++bad;
            }
            if (op == ROWOPS_OP_FUSED_ADD_RMS_NORM &&
                element(&c->residual_out, r, i) != ref_h[r * N + i])
                ++bad;
        }
    }
    C_EXPECT(bad == 0,
             "%s %s %s weight=%s %s B=%lld N=%lld inplace=%d: %d bad elements",
             kname, rowops_op_name(op), rowops_dtype_name(dt),
             rowops_dtype_name(wdt), c_layout_name(layout), (long long)B,
             (long long)N, inplace, bad);
    free(ref_out);
    free(ref_h);
    free(ref_rstd);
    c_sample_free(&s);
}

/* NaN, Inf and float16 values whose squares overflow float16. */
static void check_special_values(void)
{
    c_sample s;
    const int64_t N = 16;
    c_sample_make(&s, ROWOPS_OP_RMS_NORM_ROWS, ROWOPS_F16, ROWOPS_F16,
                  C_CONTIGUOUS, 3, N, 0, 9);
    uint16_t *x = s.call.x.data;
    for (int64_t i = 0; i < N; ++i)
        x[2 * N + i] = rowops_f32_to_f16(i % 2 ? 60000.f : -30000.f);
    x[0 * N + 3] = 0x7e00u;                     /* NaN in row 0 */
    x[1 * N + 5] = rowops_f32_to_f16(INFINITY); /* Inf in row 1 */
    rowops_cpu_strided(&s.call, 0, 3);
    const uint16_t *y = s.call.out.data;
    const float *rstd = s.call.rstd.data;
    C_EXPECT(isnan(rstd[0]), "NaN row: rstd %g", rstd[0]);
    int all_nan = 1;
    for (int64_t i = 0; i < N; ++i)
        all_nan &= isnan(rowops_f16_to_f32(y[i]));
    C_EXPECT(all_nan, "NaN row: every output NaN");
    C_EXPECT(rstd[1] == 0.f, "Inf row: rstd %g (want 0)", rstd[1]);
    C_EXPECT(isnan(rowops_f16_to_f32(y[N + 5])), "Inf row: Inf*0 is NaN");
    C_EXPECT(rowops_f16_to_f32(y[N + 4]) == 0.f, "Inf row: finite -> 0");
    /* sum of squares 8*(3.6e9 + 9e8) = 3.6e10: fine in float32 */
    const double want = 1.0 / sqrt((3.6e9 + 9e8) / 2 + 1e-6);
    C_EXPECT(fabs(rstd[2] - want) <= 1e-6 * want, "large f16: rstd %g vs %g",
             rstd[2], want);
    C_EXPECT(fabs(rowops_f16_to_f32(y[2 * N + 1]) - 60000 * want) < 2e-3,
             "large f16: finite, normalized output %g",
             rowops_f16_to_f32(y[2 * N + 1]));
    c_sample_free(&s);

    /* N = 0: rstd = 1/sqrt(eps), nothing else written. */
    c_sample_make(&s, ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F32, ROWOPS_F32,
                  C_CONTIGUOUS, 2, 0, 0, 3);
    rowops_cpu_strided(&s.call, 0, 2);
    rstd = s.call.rstd.data;
    C_EXPECT(fabsf(rstd[0] - 1000.f) < 1e-2f && fabsf(rstd[1] - 1000.f) < 1e-2f,
             "N=0: rstd %g %g (want 1/sqrt(1e-6))", rstd[0], rstd[1]);
    c_sample_free(&s);
}

/* The AVX kernels round bfloat16 without NaN handling: with a scratch row
 * (N = 48) they hand rows with a non-finite sum to the strided kernel,
 * without one (N = 8208, beyond the scratch row: two passes, h stored in
 * pass 1 rounded keeping NaN) such a row's pass 2 runs in scalar code, and
 * a non-finite weight sends every row to the strided kernel. Their outputs
 * must be the strided kernel's, bit for bit, in place too. */
static void check_bf16_nonfinite(void)
{
    if ((rowops_cpu_features() & ROWOPS_CPU_FAST_FEATURES) !=
        ROWOPS_CPU_FAST_FEATURES) {
        printf("SKIP bf16 non-finite rows: no AVX2+FMA+F16C\n");
        return;
    }
    static void (*const kernels_nt[])(const rowops_call *, int64_t, int64_t) = {
        rowops_cpu_fast_avx2,      rowops_cpu_fast_avx2_nt,
        rowops_cpu_fast_avx2_nta,  rowops_cpu_fast_avx512,
        rowops_cpu_fast_avx512_nt, rowops_cpu_fast_avx512_nta};
    static const char *const names_nt[] = {
        "cpu_fast_avx2",   "cpu_fast_avx2_nt",   "cpu_fast_avx2_nta",
        "cpu_fast_avx512", "cpu_fast_avx512_nt", "cpu_fast_avx512_nta"};
    const int has512 = (rowops_cpu_features() & ROWOPS_CPU_FAST512_FEATURES) ==
                       ROWOPS_CPU_FAST512_FEATURES;
    if (!has512)
        printf("SKIP bf16 non-finite rows at 512 bits: no AVX-512 F+BW\n");
    const int64_t B = 4;
    for (int64_t N = 48; N <= 8208; N += 8208 - 48)
        for (int weight_case = 0; weight_case < 3; ++weight_case)
            for (size_t k = 0; k < (has512 ? 6u : 3u); ++k)
                for (int inplace = 0; inplace < 2; ++inplace) {
                    c_sample a, b;
                    for (int t = 0; t < 2; ++t) {
                        c_sample *s = t ? &b : &a;
                        /* float32 weights: a NaN payload with all low bits
                         * set would round up into -0.0 without the check */
                        c_sample_make(s, ROWOPS_OP_FUSED_ADD_RMS_NORM,
                                      ROWOPS_BF16,
                                      weight_case ? ROWOPS_F32 : ROWOPS_BF16,
                                      C_CONTIGUOUS, B, N, inplace, 77);
                        uint16_t *x = s->call.x.data,
                                 *r = s->call.residual.data;
                        x[0 * N + 5] = 0x7fc1u;  /* NaN with a payload */
                        x[1 * N + 20] = 0x7f80u; /* +Inf */
                        r[1 * N + 20] = 0xff80u; /* -Inf: Inf - Inf = NaN */
                        x[2 * N + 47] = 0x7f7fu; /* max: x + r overflows */
                        r[2 * N + 47] = 0x7f7fu;
                        x[3 * N + N - 1] = 0xffc3u; /* -NaN in the tail */
                        uint32_t *w = s->call.weight.data;
                        if (weight_case == 1)
                            w[9] = 0x7f800000u; /* Inf weight */
                        if (weight_case == 2)
                            w[40] = 0x7fffffffu; /* NaN, every payload bit */
                    }
                    rowops_cpu_strided(&a.call, 0, B);
                    kernels_nt[k](&b.call, B / 2, B);
                    kernels_nt[k](&b.call, 0, B / 2);
                    C_EXPECT(memcmp(a.call.out.data, b.call.out.data,
                                    (size_t)(B * N) * 2) == 0 &&
                                 memcmp(a.call.residual_out.data,
                                        b.call.residual_out.data,
                                        (size_t)(B * N) * 2) == 0 &&
                                 memcmp(a.call.rstd.data, b.call.rstd.data,
                                        (size_t)B * 4) == 0,
                             "bf16 non-finite rows: %s N %lld weight case %d "
                             "inplace %d differs from cpu_strided",
                             names_nt[k], (long long)N, weight_case, inplace);
                    c_sample_free(&a);
                    c_sample_free(&b);
                }
}

/* Streamed rows whose inputs and outputs share their page offsets (page-
 * aligned buffers, 4 KiB or 8 KiB rows): pass 2 then starts mid-row and
 * wraps around (stream_rotation), and so does each row's place in the
 * scratch row. The streamed kernels must write exactly what their
 * ordinary-store forms write, in place too, and with bfloat16 rows that
 * are not finite among them. */
static void check_streamed_same_page_offsets(void)
{
    const unsigned have = rowops_cpu_features();
    const int has2 =
        (have & ROWOPS_CPU_FAST_FEATURES) == ROWOPS_CPU_FAST_FEATURES;
    const int has512 = has2 && (have & ROWOPS_CPU_FAST512_FEATURES) ==
                                   ROWOPS_CPU_FAST512_FEATURES;
    if (!has2) {
        printf("SKIP streamed rows at equal page offsets: no AVX2+FMA+F16C\n");
        return;
    }
    if (!has512)
        printf("SKIP streamed rows at equal page offsets, 512 bits: no "
               "AVX-512 F+BW\n");
    static void (*const plain[])(const rowops_call *, int64_t, int64_t) = {
        rowops_cpu_fast_avx2, rowops_cpu_fast_avx512};
    /* each width's streamed kernels: L2 and non-temporal prefetch */
    static void (*const streamed[][2])(const rowops_call *, int64_t,
                                       int64_t) = {
        {rowops_cpu_fast_avx2_nt, rowops_cpu_fast_avx2_nta},
        {rowops_cpu_fast_avx512_nt, rowops_cpu_fast_avx512_nta}};
    const rowops_dtype dts[] = {ROWOPS_BF16, ROWOPS_F16, ROWOPS_F32};
    const int64_t B = 6, N = 2048 + 96; /* rows not a multiple of a block */
    int compared = 0;
    for (int isa = 0; isa < (has512 ? 2 : 1); ++isa)
        for (int pf = 0; pf < 2; ++pf)
            for (int d = 0; d < 3; ++d)
                for (int op = 0; op < ROWOPS_OP_COUNT; ++op)
                    for (int inplace = 0; inplace < 2; ++inplace)
                        /* rows of N, one page (float32: two scratch
                         * rows, ONE_SCRATCH_MIN) and two pages */
                        for (int n4k = 0; n4k < 3; ++n4k) {
                            const int64_t n =
                                n4k ? 4096 /
                                          (int64_t)rowops_dtype_size(dts[d]) *
                                          n4k
                                    : N;
                            c_sample a, b;
                            c_sample_make(&a, (rowops_op)op, dts[d], dts[d],
                                          C_CONTIGUOUS, B, n, inplace, 91);
                            c_sample_make(&b, (rowops_op)op, dts[d], dts[d],
                                          C_CONTIGUOUS, B, n, inplace, 91);
                            /* bfloat16: rows 2 and 4 not finite, redone by
                             * the strided kernel mid-pipeline, after rows
                             * whose scratch row had wrapped */
                            if (dts[d] == ROWOPS_BF16) {
                                uint16_t *xa = a.call.x.data,
                                         *xb = b.call.x.data;
                                xa[2 * n + 5] = xb[2 * n + 5] = 0x7fc1u;
                                xa[4 * n + n - 1] = xb[4 * n + n - 1] = 0x7f80u;
                            }
                            /* b's tensors moved to page-aligned copies */
                            const size_t bytes =
                                (size_t)(B * n) * rowops_dtype_size(dts[d]);
                            rowops_tensor *ts[] = {&b.call.x, &b.call.residual,
                                                   &b.call.out,
                                                   &b.call.residual_out};
                            void *pages[4] = {NULL, NULL, NULL, NULL};
                            const int fused =
                                op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
                            const int count = fused ? 4 : 2;
                            for (int t = 0; t < count; ++t) {
                                rowops_tensor *tt =
                                    fused || t == 0 ? ts[t] : ts[2];
                                if (inplace && (tt == &b.call.out ||
                                                tt == &b.call.residual_out))
                                    continue; /* aliases its input */
                                pages[t] = aligned_alloc(4096, (bytes + 4095) /
                                                                   4096 * 4096);
                                memcpy(pages[t], tt->data, bytes);
                                tt->data = pages[t];
                            }
                            if (inplace) {
                                b.call.out.data = b.call.x.data;
                                if (fused)
                                    b.call.residual_out.data =
                                        b.call.residual.data;
                            }
                            plain[isa](&a.call, 0, B);
                            streamed[isa][pf](&b.call, B / 2, B);
                            streamed[isa][pf](&b.call, 0, B / 2);
                            int same =
                                memcmp(a.call.out.data, b.call.out.data,
                                       bytes) == 0 &&
                                memcmp(a.call.rstd.data, b.call.rstd.data,
                                       (size_t)B * 4) == 0;
                            if (fused)
                                same = same && memcmp(a.call.residual_out.data,
                                                      b.call.residual_out.data,
                                                      bytes) == 0;
                            C_EXPECT(
                                same,
                                "streamed %s%s %s %s N=%lld inplace=%d at "
                                "equal "
                                "page offsets differs from ordinary stores",
                                isa ? "avx512" : "avx2", pf ? " (nta)" : "",
                                rowops_op_name((rowops_op)op),
                                rowops_dtype_name(dts[d]), (long long)n,
                                inplace);
                            ++compared;
                            for (int t = 0; t < 4; ++t)
                                free(pages[t]);
                            c_sample_free(&a);
                            c_sample_free(&b);
                        }
    printf("streamed rows at equal page offsets: %d calls compared\n",
           compared);
}

int main(void)
{
    /* {33, 130}: two 16-row vector blocks of the in-place column-major
     * kernel and a row it runs in scalar code (split: a block each) */
    static const int64_t shapes[][2] = {{1, 1},   {3, 7},   {5, 64}, {4, 4097},
                                        {2, 0},   {0, 5},   {7, 33}, {1, 65536},
                                        {6, 255}, {33, 130}};
    const rowops_dtype dtypes[] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16,
                                   ROWOPS_F64};
    for (int impl = 0; impl < ROWOPS_IMPL_COUNT; ++impl)
        for (int split = 0; split < 2 && row_kernel((rowops_impl)impl); ++split)
            for (int op = 0; op < ROWOPS_OP_COUNT; ++op)
                for (size_t d = 0; d < 4; ++d)
                    for (int wf32 = 0; wf32 < 2; ++wf32) {
                        if (op == ROWOPS_OP_RMS_NORM_ROWS && wf32)
                            continue;
                        const rowops_dtype wdt = wf32 ? ROWOPS_F32 : dtypes[d];
                        for (int l = 0; l < C_LAYOUT_COUNT; ++l)
                            for (size_t sh = 0;
                                 sh < sizeof shapes / sizeof shapes[0]; ++sh)
                                for (int inplace = 0;
                                     inplace <=
                                     (op == ROWOPS_OP_FUSED_ADD_RMS_NORM);
                                     ++inplace)
                                    check_one((rowops_impl)impl, split,
                                              (rowops_op)op, dtypes[d], wdt,
                                              (c_layout)l, shapes[sh][0],
                                              shapes[sh][1], inplace);
                    }
    check_special_values();
    check_bf16_nonfinite();
    check_streamed_same_page_offsets();
    printf("fast-kernel runs on eligible samples: %d (in place on "
           "column-major rows: %d)\n",
           fast_runs, inplace_colmajor_runs);
    C_EXPECT(inplace_colmajor_runs >= 4 ||
                 (rowops_cpu_features() & ROWOPS_CPU_FAST_FEATURES) !=
                     ROWOPS_CPU_FAST_FEATURES,
             "the in-place column-major kernel ran on %d samples",
             inplace_colmajor_runs);
    C_EXPECT(fast_runs > 100, "the fast kernels ran on too few samples (%d)",
             fast_runs);
    return c_report("test_kernels");
}
