/* Accuracy over N (docs/operators.md, Contract: "accuracy"): every CPU kernel
 * that reduces a row, held to the contract's bound at long rows, |rstd -
 * rstd_exact| <= ROWOPS_RSTD_BOUND_EPS * eps_acc * rstd_exact, eps_acc the
 * accumulation dtype's machine epsilon (2^-23; 2^-52 for float64), rstd_exact
 * from the same rounded h in long double.
 *   - the strided kernel, both ops, four dtypes, N = 2^20, 2^23 and 2^27
 *     (2^25 for float16 and float64) on constant rows (zero strides in and
 *     out: no memory), which a plain float32 sum gets wrong by up to 41 %
 *     (it stops growing at 2^24), and random rows at 2^20 and 2^23;
 *   - the fast kernels (AVX2, AVX-512, streaming, portable) at their
 *     largest N (32768 float32, 65536 float16/bfloat16);
 *   - the column-major kernel at N = 2^20 .. 2^21 (B * N real elements);
 *   - the strided backward: grad_h at N = 2^20, 2^23 (every dtype and op)
 *     and 2^27 (float32), zero strides, and the weight gradient summed
 *     over 2^20 .. 2^24 rows;
 *   - int64 indexing: one bfloat16 row of 2^31 elements, read from
 *     untouched (zero) pages but for its last element.
 * Under the sanitizers (make sanitize) the largest cases are cut to
 * N <= 2^22 and the 2^31 row is skipped, visibly. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS, MAP_NORESERVE */
#include "c_samples.h"
#include "cpu_features.h"
#include "rowops_elem.h"
#include "rowops_sum.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

static double eps_acc(rowops_dtype dt)
{
    return dt == ROWOPS_F64 ? 0x1p-52 : 0x1p-23;
}

static double bound(rowops_dtype dt)
{
    return ROWOPS_RSTD_BOUND_EPS * eps_acc(dt);
}

/* The rounding of an output of dt (half an ulp at 1, doubled). */
static double out_eps(rowops_dtype dt)
{
    return dt == ROWOPS_F32   ? 0x1p-23
           : dt == ROWOPS_F16 ? 0x1p-10
           : dt == ROWOPS_F64 ? 0x1p-52
                              : 0x1p-7;
}

static void set_tensor(rowops_tensor *t, rowops_dtype dt, void *data, int rank,
                       const int64_t *sizes, const int64_t *strides)
{
    memset(t, 0, sizeof *t);
    t->data = data;
    t->dtype = dt;
    t->device = ROWOPS_DEVICE_CPU;
    t->rank = rank;
    for (int d = 0; d < rank; ++d) {
        t->sizes[d] = sizes[d];
        t->strides[d] = strides[d];
    }
}

/* A value rounded to dt, as a double. */
static double rounded(double v, rowops_dtype dt)
{
    unsigned char b[8];
    rowops_store_d(b, 0, dt, v);
    return rowops_load_d(b, 0, dt);
}

/* rstd of a row whose mean of squares is exactly m (long double). */
static double exact_rstd(long double m, double eps)
{
    return (double)(1.0L / sqrtl(m + (long double)eps));
}

/* Compensated long double sum of squares of n elements at base. */
static long double exact_sumsq(const void *base, int64_t n, rowops_dtype dt)
{
    long double s = 0, c = 0;
    for (int64_t i = 0; i < n; ++i) {
        const long double v = rowops_load_d(base, i, dt);
        const long double y = v * v - c, t = s + y;
        c = (t - s) - y;
        s = t;
    }
    return s;
}

static void expect_rstd(const char *what, double got, double want,
                        rowops_dtype dt, int64_t n)
{
    const double rel = fabs(got - want) / want;
    C_EXPECT(rel <= bound(dt),
             "%s %s N = %lld: rstd %.9g, exact %.9g: relative error %.3g > "
             "%d eps = %.3g",
             what, rowops_dtype_name(dt), (long long)n, got, want, rel,
             ROWOPS_RSTD_BOUND_EPS, bound(dt));
}

/* ---- the strided kernel, constant rows through zero strides ---------- */

static void strided_constant(rowops_op op, rowops_dtype dt, int64_t n)
{
    const int fused = op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    double xs[1], rs[1], ws[1], outs[1], hs[1], rstd[1];
    rowops_store_d(xs, 0, dt, 0.7);
    rowops_store_d(rs, 0, dt, 0.45);
    rowops_store_d(ws, 0, dt, 1.5);
    const int64_t sizes[2] = {1, n}, zero[2] = {0, 0}, one[1] = {1};
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    c.eps = 1e-6;
    set_tensor(&c.x, dt, xs, 2, sizes, zero);
    set_tensor(&c.out, dt, outs, 2, sizes, zero);
    set_tensor(&c.rstd, rowops_acc_dtype(dt), rstd, 1, sizes, one);
    if (fused) {
        set_tensor(&c.residual, dt, rs, 2, sizes, zero);
        set_tensor(&c.residual_out, dt, hs, 2, sizes, zero);
        set_tensor(&c.weight, dt, ws, 1, sizes + 1, zero);
    }
    rowops_cpu_strided(&c, 0, 1);
    const double x = rowops_load_d(xs, 0, dt);
    const double h = fused ? rounded(x + rowops_load_d(rs, 0, dt), dt) : x;
    const double want = exact_rstd((long double)h * h, c.eps);
    char what[96];
    snprintf(what, sizeof what, "strided %s, constant row", rowops_op_name(op));
    expect_rstd(what, rowops_load_d(rstd, 0, rowops_acc_dtype(dt)), want, dt,
                n);
    /* out = h * rstd (* w): rounded once from the accurate rstd */
    const double w = fused ? rowops_load_d(ws, 0, dt) : 1.0;
    const double y = rowops_load_d(outs, 0, dt), ywant = h * want * w;
    const double ytol = fabs(ywant) * (bound(dt) + out_eps(dt));
    C_EXPECT(fabs(y - ywant) <= ytol, "%s %s N = %lld: out %.9g, want %.9g",
             what, rowops_dtype_name(dt), (long long)n, y, ywant);
}

/* ---- random rows with real memory ------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static double draw(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (double)(rng_state >> 11) * 0x1p-53 * 4.0 - 2.0;
}

static void *fill_random(int64_t n, rowops_dtype dt)
{
    const size_t es = rowops_dtype_size(dt);
    void *p = aligned_alloc(64, ((size_t)n * es + 63) / 64 * 64);
    if (!p) {
        fprintf(stderr, "test_accuracy: out of memory\n");
        exit(2);
    }
    for (int64_t i = 0; i < n; ++i)
        rowops_store_d(p, i, dt, draw());
    return p;
}

typedef void (*kernel_fn)(const rowops_call *, int64_t, int64_t);

/* rms_norm_rows over B rows of N contiguous random elements with `kernel`;
 * every row's rstd against the exact one. */
static void random_rows(const char *name, kernel_fn kernel, rowops_dtype dt,
                        int64_t B, int64_t n)
{
    void *x = fill_random(B * n, dt);
    void *out = fill_random(B * n, dt);
    double *rstd = calloc((size_t)B, sizeof(double));
    const int64_t sizes[2] = {B, n}, strides[2] = {n, 1}, one[1] = {1};
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = ROWOPS_OP_RMS_NORM_ROWS;
    c.eps = 1e-6;
    set_tensor(&c.x, dt, x, 2, sizes, strides);
    set_tensor(&c.out, dt, out, 2, sizes, strides);
    set_tensor(&c.rstd, rowops_acc_dtype(dt), rstd, 1, sizes, one);
    kernel(&c, 0, B);
    char what[96];
    snprintf(what, sizeof what, "%s, random rows", name);
    for (int64_t b = 0; b < B; ++b) {
        const long double m =
            exact_sumsq((const char *)x +
                            b * n * (int64_t)rowops_dtype_size(dt),
                        n, dt) /
            (long double)n;
        expect_rstd(what, rowops_load_d(rstd, b, rowops_acc_dtype(dt)),
                    exact_rstd(m, c.eps), dt, n);
    }
    free(x);
    free(out);
    free(rstd);
}

/* The fused op over B rows with `kernel`, contiguous, constant inputs (the
 * systematic rounding of a long sum of equal terms). */
static void fast_constant(const char *name, kernel_fn kernel, rowops_dtype dt,
                          int64_t B, int64_t n)
{
    const size_t es = rowops_dtype_size(dt);
    const size_t bytes = ((size_t)(B * n) * es + 63) / 64 * 64;
    void *x = aligned_alloc(64, bytes), *r = aligned_alloc(64, bytes);
    void *out = aligned_alloc(64, bytes), *h = aligned_alloc(64, bytes);
    void *w = aligned_alloc(64, ((size_t)n * 4 + 63) / 64 * 64);
    float rstd[64];
    for (int64_t i = 0; i < B * n; ++i) {
        rowops_store_d(x, i, dt, 0.7);
        rowops_store_d(r, i, dt, 0.45);
    }
    for (int64_t i = 0; i < n; ++i)
        ((float *)w)[i] = 1.5f;
    const int64_t sizes[2] = {B, n}, strides[2] = {n, 1}, one[1] = {1};
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = ROWOPS_OP_FUSED_ADD_RMS_NORM;
    c.eps = 1e-6;
    set_tensor(&c.x, dt, x, 2, sizes, strides);
    set_tensor(&c.residual, dt, r, 2, sizes, strides);
    set_tensor(&c.out, dt, out, 2, sizes, strides);
    set_tensor(&c.residual_out, dt, h, 2, sizes, strides);
    set_tensor(&c.weight, ROWOPS_F32, w, 1, sizes + 1, one);
    set_tensor(&c.rstd, ROWOPS_F32, rstd, 1, sizes, one);
    kernel(&c, 0, B);
    const double hv =
        rounded(rowops_load_d(x, 0, dt) + rowops_load_d(r, 0, dt), dt);
    char what[96];
    snprintf(what, sizeof what, "%s, constant rows", name);
    for (int64_t b = 0; b < B; ++b)
        expect_rstd(what, rstd[b], exact_rstd((long double)hv * hv, c.eps), dt,
                    n);
    free(x);
    free(r);
    free(out);
    free(h);
    free(w);
}

/* Every row-major fast kernel of the table (kernels/kernel_table.def). */
static void fast_kernels(void)
{
    const unsigned f = rowops_cpu_features();
    const rowops_dtype dts[] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16};
    for (int i = 0; i < ROWOPS_IMPL_COUNT; ++i) {
        const rowops_kernel_info *k = rowops_kernel_info_of((rowops_impl)i);
        if (!k->cpu || k->layout != ROWOPS_LAYOUT_ROWS)
            continue;
        if ((f & k->features) != k->features) {
            printf("SKIP %s: the CPU lacks its features\n", k->name);
            continue;
        }
        for (size_t d = 0; d < 3; ++d) {
            const int64_t n = rowops_one_pass_limit(dts[d]);
            fast_constant(k->name, k->cpu, dts[d], 3, n);
            random_rows(k->name, k->cpu, dts[d], 3, n);
        }
    }
}

/* ---- the column-major kernel ------------------------------------------- */

static void colmajor(rowops_dtype dt, int64_t n, int random)
{
    const int64_t B = dt == ROWOPS_F32 ? 8 : 16; /* one vector unit */
    const size_t es = rowops_dtype_size(dt);
    const size_t bytes = (size_t)(B * n) * es;
    void *x = random ? fill_random(B * n, dt) : aligned_alloc(64, bytes);
    void *out = aligned_alloc(64, bytes);
    float rstd[16];
    if (!random)
        for (int64_t i = 0; i < B * n; ++i)
            rowops_store_d(x, i, dt, 0.7);
    const int64_t sizes[2] = {B, n}, xs[2] = {1, B}, os[2] = {n, 1};
    const int64_t one[1] = {1};
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = ROWOPS_OP_RMS_NORM_ROWS;
    c.eps = 1e-6;
    set_tensor(&c.x, dt, x, 2, sizes, xs);
    set_tensor(&c.out, dt, out, 2, sizes, os);
    set_tensor(&c.rstd, ROWOPS_F32, rstd, 1, sizes, one);
    rowops_cpu_colmajor_avx2(&c, 0, B);
    /* row b is x[b + j * B]: gather it once for the exact sum */
    void *row = aligned_alloc(64, (size_t)n * es + 64);
    for (int64_t b = 0; b < B; ++b) {
        for (int64_t j = 0; j < n; ++j)
            memcpy((char *)row + j * (int64_t)es,
                   (const char *)x + (b + j * B) * (int64_t)es, es);
        const long double m = exact_sumsq(row, n, dt) / (long double)n;
        expect_rstd(random ? "cpu_colmajor_avx2, random rows"
                           : "cpu_colmajor_avx2, constant rows",
                    rstd[b], exact_rstd(m, c.eps), dt, n);
    }
    free(row);
    free(x);
    free(out);
}

/* ---- the strided backward ---------------------------------------------- */

/* Constant rows through zero strides: h = 0.7, grad_out = 0.3, weight
 * 1.25 and rstd = 0.5 / h (any rstd is an input; n = h * rstd = 0.5 keeps
 * grad_h well conditioned). The call points into v. */
typedef struct const_rows {
    double h[1], g[1], w[1], gh[1], r[1];
} const_rows;

static rowops_backward_call const_backward(const_rows *v, rowops_op op,
                                           rowops_dtype dt, int64_t B,
                                           int64_t n)
{
    const rowops_dtype acc = rowops_acc_dtype(dt);
    rowops_store_d(v->h, 0, dt, 0.7);
    rowops_store_d(v->g, 0, dt, 0.3);
    rowops_store_d(v->w, 0, dt, 1.25);
    rowops_store_d(v->r, 0, acc, 0.5 / rowops_load_d(v->h, 0, dt));
    const int64_t sizes[2] = {B, n}, zero[2] = {0, 0};
    rowops_backward_call c;
    memset(&c, 0, sizeof c);
    c.op = op;
    set_tensor(&c.grad_out, dt, v->g, 2, sizes, zero);
    set_tensor(&c.h, dt, v->h, 2, sizes, zero);
    set_tensor(&c.rstd, acc, v->r, 1, sizes, zero);
    set_tensor(&c.grad_h, dt, v->gh, 2, sizes, zero);
    if (op == ROWOPS_OP_FUSED_ADD_RMS_NORM)
        set_tensor(&c.weight, dt, v->w, 1, sizes + 1, zero);
    return c;
}

/* One row of N: grad_h = r * gw * (1 - n^2) exactly. */
static void backward_constant(rowops_op op, rowops_dtype dt, int64_t n)
{
    const int fused = op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const rowops_dtype acc = rowops_acc_dtype(dt);
    const_rows v;
    const rowops_backward_call c = const_backward(&v, op, dt, 1, n);
    rowops_cpu_backward_strided(&c, 0, 1, NULL, NULL);
    const double h = rowops_load_d(v.h, 0, dt), r = rowops_load_d(v.r, 0, acc);
    const double gw =
        rowops_load_d(v.g, 0, dt) * (fused ? rowops_load_d(v.w, 0, dt) : 1.0);
    const double nv = h * r;
    const double want = r * gw * (1.0 - nv * nv);
    const double got = rowops_load_d(v.gh, 0, dt);
    /* the bound on mean(gw * n), carried through k = r * mean, plus the
     * rounding of the elementwise formula and of the output */
    const double tol = bound(dt) * (fabs(r * gw) + fabs(nv * r * gw * nv)) +
                       out_eps(dt) * fabs(want);
    C_EXPECT(fabs(got - want) <= tol,
             "backward %s %s N = %lld: grad_h %.9g, exact %.9g (error %.3g > "
             "%.3g)",
             rowops_op_name(op), rowops_dtype_name(dt), (long long)n, got, want,
             fabs(got - want), tol);
}

/* The weight gradient over B rows of 4: B * grad_out * n. */
static void weight_grad_rows(rowops_dtype dt, int64_t B)
{
    const rowops_dtype acc = rowops_acc_dtype(dt);
    const_rows v;
    const rowops_backward_call c =
        const_backward(&v, ROWOPS_OP_FUSED_ADD_RMS_NORM, dt, B, 4);
    double wg[4];
    void *scratch = malloc(rowops_backward_scratch_bytes(&c));
    rowops_cpu_backward_strided(&c, 0, B, wg, scratch);
    free(scratch);
    /* grad_out * n of one row, as the accumulation dtype rounds it */
    const double g = rowops_load_d(v.g, 0, dt);
    const double nv = rowops_load_d(v.h, 0, dt) * rowops_load_d(v.r, 0, acc);
    const double per_row =
        acc == ROWOPS_F64 ? g * nv : (double)((float)g * (float)nv);
    const double want = per_row * (double)B;
    for (int i = 0; i < 4; ++i)
        C_EXPECT(fabs(wg[i] - want) <= bound(dt) * fabs(want),
                 "weight gradient %s over B = %lld rows: %.9g, exact %.9g "
                 "(relative error %.3g)",
                 rowops_dtype_name(dt), (long long)B, wg[i], want,
                 fabs(wg[i] - want) / fabs(want));
}

/* ---- int64 indexing: a bfloat16 row of 2^31 elements ------------------- */

static void row_2_31(void)
{
    if (SANITIZED) {
        printf("SKIP the 2^31-element row under the sanitizers (time)\n");
        return;
    }
    const int64_t n = (int64_t)1 << 31;
    const size_t bytes = (size_t)n * 2;
    uint16_t *x = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (x == MAP_FAILED) {
        printf("SKIP the 2^31-element row: cannot map 4 GiB of address "
               "space\n");
        return;
    }
    /* every page but the last stays the shared zero page (no memory) */
    x[n - 1] = rowops_f32_to_bf16(1024.0f);
    uint16_t out[1];
    float rstd[1];
    const int64_t sizes[2] = {1, n}, xs[2] = {n, 1}, zero[2] = {0, 0};
    const int64_t one[1] = {1};
    rowops_call c;
    memset(&c, 0, sizeof c);
    c.op = ROWOPS_OP_RMS_NORM_ROWS;
    c.eps = 1e-6;
    set_tensor(&c.x, ROWOPS_BF16, x, 2, sizes, xs);
    set_tensor(&c.out, ROWOPS_BF16, out, 2, sizes, zero);
    set_tensor(&c.rstd, ROWOPS_F32, rstd, 1, sizes, one);
    rowops_cpu_strided(&c, 0, 1);
    /* out's last write is element n - 1's */
    const double want = exact_rstd(1024.0L * 1024.0L / (long double)n, c.eps);
    expect_rstd("strided rms_norm_rows, one element at index 2^31 - 1", rstd[0],
                want, ROWOPS_BF16, n);
    const double y = rowops_bf16_to_f32(out[0]);
    C_EXPECT(fabs(y - 1024.0 * want) <= 0x1p-7 * 1024.0 * want,
             "out[2^31 - 1] = %.6g, want %.6g", y, 1024.0 * want);
    munmap(x, bytes);
}

/* log2 N of a case: the largest ones cut to 2^22 under the sanitizers. */
static int64_t pow2(int lg)
{
    return (int64_t)1 << (SANITIZED && lg > 22 ? 22 : lg);
}

int main(void)
{
    const rowops_dtype dts[] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16,
                                ROWOPS_F64};
    for (size_t d = 0; d < 4; ++d)
        for (int op = 0; op < ROWOPS_OP_COUNT; ++op) {
            const rowops_dtype dt = dts[d];
            /* the float32 sum of squares stops at 2^24; the slower
             * conversions (float16) and float64 stop at 2^25 */
            const int top = dt == ROWOPS_F32 || dt == ROWOPS_BF16 ? 27 : 25;
            const int lgs[] = {20, 23, top};
            for (size_t i = 0; i < 3; ++i)
                strided_constant((rowops_op)op, dt, pow2(lgs[i]));
            for (int lg = 20; lg <= 23; lg += 3)
                backward_constant((rowops_op)op, dt, pow2(lg));
        }
    backward_constant(ROWOPS_OP_RMS_NORM_ROWS, ROWOPS_F32, pow2(27));
    random_rows("cpu_strided", rowops_cpu_strided, ROWOPS_F32, 1, pow2(20));
    random_rows("cpu_strided", rowops_cpu_strided, ROWOPS_F32, 1, pow2(23));
    random_rows("cpu_strided", rowops_cpu_strided, ROWOPS_BF16, 1, pow2(23));
    random_rows("cpu_strided", rowops_cpu_strided, ROWOPS_F64, 1, pow2(20));
    fast_kernels();
    if ((rowops_cpu_features() & ROWOPS_CPU_FAST_FEATURES) ==
        ROWOPS_CPU_FAST_FEATURES) {
        for (int lg = 20; lg <= 21; ++lg) {
            colmajor(ROWOPS_F32, pow2(SANITIZED ? 20 : lg), 0);
            colmajor(ROWOPS_BF16, pow2(SANITIZED ? 20 : lg), 0);
        }
        colmajor(ROWOPS_F32, pow2(20), 1);
    } else {
        printf("SKIP cpu_colmajor_avx2: the CPU lacks AVX2+FMA+F16C\n");
    }
    weight_grad_rows(ROWOPS_F32, pow2(SANITIZED ? 20 : 24));
    weight_grad_rows(ROWOPS_BF16, pow2(SANITIZED ? 20 : 22));
    weight_grad_rows(ROWOPS_F64, pow2(20));
    row_2_31();
    return c_report("test_accuracy");
}
