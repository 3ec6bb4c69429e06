/* The CUDA kernels' device code run on the CPU (tests/c/simt_emu.h), with
 * the parameters and launches their entry points build, against the C
 * double reference: the fast kernel on every call the eligibility function
 * sends to it (registers and staged, every vector width, rows per block,
 * more rows than the grid), the strided kernel on every layout (transposed
 * tiles, N past the one-pass limit, in place), the backward kernels
 * against the float64 formula, bitwise repeatability. Indexing,
 * reductions and barriers are what this checks; speed and the GPU's
 * memory model need the GPU (scripts/gpu-check.sh). */
#include "simt_emu.h"

#include "cuda/backward_kernel.cuh"
#include "cuda/fast_kernel.cuh"
#include "cuda/strided_kernel.cuh"
#include "probe_copy_kernel.cuh"

extern "C" {
#include "c_samples.h"
#include "reference_f64.h"
#include "rowops_elem.h"
}

#include <cmath>
#include <vector>

using namespace rowops_cuda;

namespace
{

/* Two SMs: grids stay small, so the kernels' row loops run. */
const rowops_cuda_device DEV = rowops_cuda_device_sm90(2);
const rowops_cuda_kernel_attr ATTR = {64, 1024};

template <typename T, typename W, bool F>
bool fast_by_vec(const fast_params &p, const rowops_cuda_launch &l, int vec)
{
    const auto run = [&](auto body) {
        return simt::launch(l.grid, l.threads, l.smem, body);
    };
    switch (vec) {
    case 1: return run([&] { fast_rows<T, W, F, 1>(p); });
    case 2: return run([&] { fast_rows<T, W, F, 2>(p); });
    case 4: return run([&] { fast_rows<T, W, F, 4>(p); });
    case 8:
        if constexpr (sizeof(T) == 2)
            return run([&] { fast_rows<T, W, F, 8>(p); });
        return false;
    default: return false;
    }
}

/* Runs the fast kernel as rowops_cuda_fast would. */
bool run_fast(const rowops_call *c)
{
    const int lead = c->x.rank - 1;
    const int vec = rowops_cuda_vector_elems(c);
    const rowops_cuda_launch l =
        rowops_cuda_fast_launch(&DEV, ATTR, c->x.dtype, c->x.sizes[lead], vec,
                                rowops_tensor_rows(&c->x));
    const fast_params p = fast_params_of(c, l);
    const bool fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const rowops_dtype w = c->weight.dtype;
    switch (c->x.dtype) {
    case ROWOPS_F32:
        return fused ? fast_by_vec<float, float, true>(p, l, vec)
                     : fast_by_vec<float, float, false>(p, l, vec);
    case ROWOPS_F16:
        if (!fused)
            return fast_by_vec<__half, __half, false>(p, l, vec);
        return w == ROWOPS_F32 ? fast_by_vec<__half, float, true>(p, l, vec)
                               : fast_by_vec<__half, __half, true>(p, l, vec);
    case ROWOPS_BF16:
        if (!fused)
            return fast_by_vec<__nv_bfloat16, __nv_bfloat16, false>(p, l, vec);
        return w == ROWOPS_F32
                   ? fast_by_vec<__nv_bfloat16, float, true>(p, l, vec)
                   : fast_by_vec<__nv_bfloat16, __nv_bfloat16, true>(p, l, vec);
    default: return false;
    }
}

template <typename T, typename W, typename Acc>
bool strided_t(const strided_params &p, const rowops_cuda_launch &l, bool fused)
{
    return simt::launch(l.grid, l.threads, 0, [&] {
        if (fused)
            strided_rows<T, W, Acc, true>(p);
        else
            strided_rows<T, T, Acc, false>(p);
    });
}

/* Runs the strided kernel as rowops_cuda_strided would. */
bool run_strided(const rowops_call *c)
{
    strided_params p = strided_params_of(c);
    const rowops_cuda_launch l =
        rowops_cuda_tile_launch(&DEV, ATTR, ROWOPS_CUDA_STRIDED_KERNEL, p.n,
                                p.rows, strided_rows_fast(p));
    p.ltr = ilog2_host(l.group);
    const bool fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const bool w32 = fused && c->weight.dtype == ROWOPS_F32;
    switch (c->x.dtype) {
    case ROWOPS_F32: return strided_t<float, float, float>(p, l, fused);
    case ROWOPS_F16:
        return w32 ? strided_t<__half, float, float>(p, l, fused)
                   : strided_t<__half, __half, float>(p, l, fused);
    case ROWOPS_BF16:
        return w32 ? strided_t<__nv_bfloat16, float, float>(p, l, fused)
                   : strided_t<__nv_bfloat16, __nv_bfloat16, float>(p, l,
                                                                    fused);
    case ROWOPS_F64:
        return w32 ? strided_t<double, float, double>(p, l, fused)
                   : strided_t<double, double, double>(p, l, fused);
    default: return false;
    }
}

int close_enough(double got, double want, rowops_dtype dt)
{
    if (std::isnan(want))
        return std::isnan(got);
    if (std::isinf(want))
        return got == want;
    return std::fabs(got - want) <= c_atol(dt) + c_rtol(dt) * std::fabs(want);
}

double element(const rowops_tensor *t, int64_t row, int64_t i)
{
    const int64_t off =
        rowops_tensor_row_offset(t, row) + i * t->strides[t->rank - 1];
    return rowops_load_d(t->data, off, t->dtype);
}

int64_t row_scalar(const rowops_tensor *t, int64_t row)
{
    return rowops_index_offset(t->sizes, t->strides, t->rank, row);
}

void to_cuda(rowops_call *c)
{
    rowops_tensor *ts[6] = {&c->x,   &c->residual,     &c->weight,
                            &c->out, &c->residual_out, &c->rstd};
    for (rowops_tensor *t : ts)
        t->device = ROWOPS_DEVICE_CUDA;
    c->cuda_arch = 90;
}

/* The kernels' rstd bound: each thread adds at most 16 float32 squares
 * (relative error <= 16 u, u = 2^-24), everything after that is float64
 * until rstd is rounded once (u): |rstd / exact - 1| <= (16 / 2 + 1) u,
 * whatever N (docs/operators.md, Contract). */
double rstd_rtol(rowops_dtype dt)
{
    return dt == ROWOPS_F64 ? 1e-13 : 9.0 / 16777216.0;
}

int fast_runs, strided_runs;
double max_rstd_err[2]; /* relative, float32 rstd: fast, strided */

void check(rowops_op op, rowops_dtype dt, rowops_dtype wdt, c_layout layout,
           int64_t B, int64_t N, int inplace, int force_strided)
{
    c_sample s;
    c_sample_make(&s, op, dt, wdt, layout, B, N, inplace,
                  (unsigned)(B * 131 + N * 7 + layout + 3 * inplace));
    rowops_call *c = &s.call;
    to_cuda(c);
    const rowops_impl impl = rowops_choose_impl(c);
    const bool fast = impl == ROWOPS_IMPL_CUDA_FAST && !force_strided;
    const int64_t rows = rowops_tensor_rows(&c->x);
    std::vector<double> ref_out(rows * N + 1), ref_h(rows * N + 1),
        ref_rstd(rows + 1);
    rowops_reference_f64(c, ref_out.data(), ref_h.data(), ref_rstd.data());
    const bool ran = fast ? run_fast(c) : run_strided(c);
    (fast ? fast_runs : strided_runs)++;
    int bad = 0;
    for (int64_t r = 0; r < rows && ran; ++r) {
        const double rs =
            rowops_load_d(c->rstd.data, row_scalar(&c->rstd, r), c->rstd.dtype);
        if (dt != ROWOPS_F64 && std::isfinite(ref_rstd[r]) && ref_rstd[r] > 0)
            max_rstd_err[fast ? 0 : 1] = std::fmax(
                max_rstd_err[fast ? 0 : 1], std::fabs(rs / ref_rstd[r] - 1.0));
        if (!(std::fabs(rs - ref_rstd[r]) <=
              rstd_rtol(dt) * std::fabs(ref_rstd[r]))) {
            if (!bad)
                fprintf(stderr, "  row %lld: rstd %.9g want %.9g\n",
                        (long long)r, rs, ref_rstd[r]);
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
                element(&c->residual_out, r, i) != ref_h[r * N + i]) {
                if (!bad)
                    fprintf(stderr, "  row %lld col %lld: h %.9g want %.9g\n",
                            (long long)r, (long long)i,
                            element(&c->residual_out, r, i), ref_h[r * N + i]);
                ++bad;
            }
        }
    }
    C_EXPECT(ran && bad == 0,
             "%s %s %s weight=%s %s B=%lld N=%lld inplace=%d (%s): %d bad "
             "elements%s",
             fast ? "cuda_fast" : "cuda_strided", rowops_op_name(op),
             rowops_dtype_name(dt), rowops_dtype_name(wdt),
             c_layout_name(layout), (long long)B, (long long)N, inplace,
             rowops_impl_name(impl), bad, ran ? "" : " (did not run)");
    c_sample_free(&s);
}

void forward_tests()
{
    const rowops_dtype dts[4] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16,
                                 ROWOPS_F64};
    /* every layout, small shapes: both kernels (fast where eligible) */
    static const int64_t shapes[][2] = {{5, 64}, {3, 33}, {2, 130}, {4, 1}};
    for (int op = 0; op < ROWOPS_OP_COUNT; ++op)
        for (rowops_dtype dt : dts)
            for (int w = 0; w < 2; ++w) {
                const rowops_dtype wdt =
                    w ? (dt == ROWOPS_F64 ? ROWOPS_F32 : ROWOPS_F32) : dt;
                if (w && (op == ROWOPS_OP_RMS_NORM_ROWS || dt == ROWOPS_F32))
                    continue;
                for (int layout = 0; layout < C_LAYOUT_COUNT; ++layout)
                    for (const auto &sh : shapes)
                        for (int inplace = 0; inplace < 2; ++inplace) {
                            if (inplace && op == ROWOPS_OP_RMS_NORM_ROWS)
                                continue;
                            for (int force = 0; force < 2; ++force)
                                check((rowops_op)op, dt, wdt, (c_layout)layout,
                                      sh[0], sh[1], inplace, force);
                        }
            }
    /* the fast kernel's regimes: rows per block, the staged row, the
     * one-pass limits; the strided kernel past them and transposed */
    static const struct {
        rowops_dtype dt;
        int64_t B, N;
    } big[] = {
        {ROWOPS_BF16, 300, 128}, /* 64 rows per block, 5 blocks > grid */
        {ROWOPS_BF16, 3, 4096},  /* two rows per block */
        {ROWOPS_BF16, 2, 8192},  /* one slab of 512 threads */
        {ROWOPS_BF16, 2, 8200},  /* staged, 8-byte vectors */
        {ROWOPS_F16, 1, 65536},  /* the float16 limit: 8 slabs */
        {ROWOPS_F32, 1, 32768},  /* the float32 limit */
        {ROWOPS_F32, 3, 4100},   /* staged float32 */
        {ROWOPS_BF16, 2, 65537}, /* strided: past the limit */
        {ROWOPS_F32, 40, 4097},  /* strided transposed, odd N */
        {ROWOPS_BF16, 2, 4097},  /* fast, one element per vector */
        {ROWOPS_BF16, 24, 4096}, /* 12 blocks' rows on a grid of 4 */
        {ROWOPS_F16, 9, 16384},  /* staged rows on a grid of 2 */
    };
    for (const auto &b : big)
        for (int op = 0; op < ROWOPS_OP_COUNT; ++op) {
            check((rowops_op)op, b.dt, b.dt, C_CONTIGUOUS, b.B, b.N, 0, 0);
            if (b.N == 4097 && b.dt == ROWOPS_F32)
                check((rowops_op)op, b.dt, b.dt, C_TRANSPOSED, b.B, b.N, 0, 0);
        }
    check(ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_BF16, ROWOPS_F32, C_CONTIGUOUS,
          2, 8200, 1, 0);
    check(ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F32, ROWOPS_F32, C_TRANSPOSED,
          33, 200, 1, 0);
    check(ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F64, ROWOPS_F64, C_CONTIGUOUS, 3,
          3000, 0, 0);
    /* the strided kernel's one-row tiles, more rows than the grid */
    for (int op = 0; op < ROWOPS_OP_COUNT; ++op)
        check((rowops_op)op, ROWOPS_F32, ROWOPS_F32, C_CONTIGUOUS, 11, 2000, 0,
              1);
}

/* N = 0: rstd = 1/sqrt(eps) (strided kernel; the fast one needs N >= 1). */
void empty_row_test()
{
    c_sample s;
    c_sample_make(&s, ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F32, ROWOPS_F32,
                  C_CONTIGUOUS, 3, 0, 0, 5);
    to_cuda(&s.call);
    C_CHECK(run_strided(&s.call));
    const float *r = (const float *)s.call.rstd.data;
    C_EXPECT(std::fabs(r[0] - 1000.f) < 1e-2f &&
                 std::fabs(r[2] - 1000.f) < 1e-2f,
             "N = 0: rstd %g %g", r[0], r[2]);
    c_sample_free(&s);
}

/* The same call twice: the same bits (fixed reduction order). */
void repeat_test()
{
    c_sample s;
    c_sample_make(&s, ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_BF16, ROWOPS_BF16,
                  C_CONTIGUOUS, 4, 16384, 0, 9);
    to_cuda(&s.call);
    const size_t bytes = (size_t)4 * 16384 * 2;
    C_CHECK(run_fast(&s.call));
    std::vector<unsigned char> first((unsigned char *)s.call.out.data,
                                     (unsigned char *)s.call.out.data + bytes);
    std::vector<float> rstd((float *)s.call.rstd.data,
                            (float *)s.call.rstd.data + 4);
    memset(s.call.out.data, 0xff, bytes);
    C_CHECK(run_fast(&s.call));
    C_EXPECT(memcmp(first.data(), s.call.out.data, bytes) == 0 &&
                 memcmp(rstd.data(), s.call.rstd.data, 4 * sizeof(float)) == 0,
             "two runs of the fast kernel differ");
    c_sample_free(&s);
}

/* ---- backward ---- */

template <typename T, typename W, typename Acc>
bool backward_t(backward_params &p, const rowops_cuda_launch &l, bool fused,
                Acc *partial, int64_t n, void *gw)
{
    p.partial = partial;
    bool ok = simt::launch(l.grid, l.threads, 0, [&] {
        if (fused)
            backward_rows<T, W, Acc, true>(p);
        else
            backward_rows<T, T, Acc, false>(p);
    });
    if (ok && fused) {
        const rowops_cuda_launch d = rowops_cuda_dweight_launch(n);
        ok = simt::launch(d.grid, d.threads, 0, [&] {
            dweight_columns<Acc, W>(partial, (int)l.grid, n, (W *)gw, 1);
        });
    }
    return ok;
}

bool run_backward(const rowops_backward_call *c, void *gw)
{
    backward_params p = backward_params_of(c);
    const rowops_cuda_launch l =
        rowops_cuda_tile_launch(&DEV, ATTR, ROWOPS_CUDA_BACKWARD_KERNEL, p.n,
                                p.rows, backward_rows_fast(p));
    p.ltr = ilog2_host(l.group);
    const bool fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const bool w32 = fused && c->weight.dtype == ROWOPS_F32;
    const int64_t n = p.n;
    std::vector<float> pf((size_t)l.grid * n + 1, NAN);
    std::vector<double> pd((size_t)l.grid * n + 1, NAN);
    switch (c->h.dtype) {
    case ROWOPS_F32:
        return backward_t<float, float, float>(p, l, fused, pf.data(), n, gw);
    case ROWOPS_F16:
        return w32 ? backward_t<__half, float, float>(p, l, fused, pf.data(), n,
                                                      gw)
                   : backward_t<__half, __half, float>(p, l, fused, pf.data(),
                                                       n, gw);
    case ROWOPS_BF16:
        return w32 ? backward_t<__nv_bfloat16, float, float>(p, l, fused,
                                                             pf.data(), n, gw)
                   : backward_t<__nv_bfloat16, __nv_bfloat16, float>(
                         p, l, fused, pf.data(), n, gw);
    case ROWOPS_F64:
        return w32 ? backward_t<double, float, double>(p, l, fused, pd.data(),
                                                       n, gw)
                   : backward_t<double, double, double>(p, l, fused, pd.data(),
                                                        n, gw);
    default: return false;
    }
}

/* h = the sample's x, grad_out = its residual, grad_residual_out = its
 * out refilled (fused, optional), rstd from the reference, grad_rstd
 * random (optional); grad_h into residual_out. Against float64 of the same
 * formula on the same rounded inputs. */
void check_backward(rowops_op op, rowops_dtype dt, rowops_dtype wdt,
                    c_layout layout, int64_t B, int64_t N, int with_optional)
{
    c_sample s;
    c_sample_make(&s, ROWOPS_OP_FUSED_ADD_RMS_NORM, dt, wdt, layout, B, N, 0,
                  (unsigned)(B * 17 + N * 3 + layout));
    rowops_call *c = &s.call;
    const int64_t rows = rowops_tensor_rows(&c->x);
    const int fused = op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const rowops_dtype acc = rowops_acc_dtype(dt);
    /* rstd as the forward gives it */
    {
        rowops_call f = *c;
        f.op = ROWOPS_OP_RMS_NORM_ROWS;
        std::vector<double> o(rows * N + 1), r(rows + 1);
        rowops_reference_f64(&f, o.data(), nullptr, r.data());
        for (int64_t i = 0; i < rows; ++i)
            rowops_store_d(c->rstd.data, row_scalar(&c->rstd, i), acc, r[i]);
    }
    std::vector<double> grstd(rows + 1);
    std::vector<unsigned char> grstd_buf((size_t)(rows + 1) * 8);
    unsigned seed = 77;
    for (int64_t i = 0; i < rows; ++i) {
        seed = seed * 1103515245u + 12345u;
        grstd[i] = ((seed >> 8) % 2000) / 1000.0 - 1.0;
        rowops_store_d(grstd_buf.data(), i, acc, grstd[i]);
        grstd[i] = rowops_load_d(grstd_buf.data(), i, acc);
    }
    rowops_backward_call bc;
    memset(&bc, 0, sizeof bc);
    bc.op = op;
    bc.h = c->x;
    bc.grad_out = c->residual;
    bc.rstd = c->rstd;
    bc.grad_h = c->residual_out;
    if (fused)
        bc.weight = c->weight;
    if (with_optional) {
        bc.grad_rstd = c->rstd;
        bc.grad_rstd.data = grstd_buf.data();
        if (fused) {
            bc.grad_residual_out = c->out;
            for (int64_t r = 0; r < rows; ++r)
                for (int64_t i = 0; i < N; ++i)
                    rowops_store_d(c->out.data,
                                   rowops_tensor_row_offset(&c->out, r) +
                                       i * c->out.strides[c->out.rank - 1],
                                   dt, std::sin((double)(r * N + i)));
        }
    }
    std::vector<unsigned char> gw((size_t)N * 8 + 8, 0xff);
    const bool ran = run_backward(&bc, gw.data());
    /* float64 formula */
    std::vector<double> want_w(N + 1, 0.0);
    int bad = 0;
    double max_err = 0, max_abs = 0;
    for (int64_t r = 0; r < rows && ran; ++r) {
        const double rs =
            rowops_load_d(bc.rstd.data, row_scalar(&bc.rstd, r), acc);
        const double gr = with_optional ? grstd[r] : 0.0;
        double dot = 0;
        for (int64_t i = 0; i < N; ++i) {
            const double g =
                element(&bc.grad_out, r, i) *
                (fused ? rowops_load_d(bc.weight.data, i * bc.weight.strides[0],
                                       wdt)
                       : 1.0);
            dot += g * element(&bc.h, r, i) * rs;
        }
        const double k = (rs * dot + gr * rs * rs) / (double)N;
        for (int64_t i = 0; i < N; ++i) {
            const double go = element(&bc.grad_out, r, i);
            const double g =
                go * (fused ? rowops_load_d(bc.weight.data,
                                            i * bc.weight.strides[0], wdt)
                            : 1.0);
            const double nv = element(&bc.h, r, i) * rs;
            double v = rs * g - nv * k;
            if (with_optional && fused)
                v += element(&bc.grad_residual_out, r, i);
            want_w[i] += go * nv;
            const double got = element(&bc.grad_h, r, i);
            max_err = std::fmax(max_err, std::fabs(got - v));
            max_abs = std::fmax(max_abs, std::fabs(v));
        }
    }
    /* |err| <= rtol-scaled max, as tests/python/test_autograd.py */
    const double tol = dt == ROWOPS_F64   ? 1e-12
                       : dt == ROWOPS_F32 ? 2e-6
                       : dt == ROWOPS_F16 ? 2e-3
                                          : 1.6e-2;
    if (!(max_err <= tol * (max_abs > 0 ? max_abs : 1)))
        ++bad;
    double w_err = 0, w_abs = 0;
    for (int64_t i = 0; fused && ran && i < N; ++i) {
        const double got = rowops_load_d(gw.data(), i, wdt);
        w_err = std::fmax(w_err, std::fabs(got - want_w[i]));
        w_abs = std::fmax(w_abs, std::fabs(want_w[i]));
    }
    const double wtol = wdt == ROWOPS_F64   ? 1e-12
                        : wdt == ROWOPS_F32 ? (dt == ROWOPS_F32 ? 4e-6 : 4e-6)
                        : wdt == ROWOPS_F16 ? 2e-3
                                            : 1.6e-2;
    if (fused && !(w_err <= wtol * (w_abs > 0 ? w_abs : 1)))
        ++bad;
    C_EXPECT(ran && bad == 0,
             "backward %s %s weight=%s %s B=%lld N=%lld optional=%d: grad_h "
             "err %.3g of %.3g, grad_weight err %.3g of %.3g%s",
             rowops_op_name(op), rowops_dtype_name(dt), rowops_dtype_name(wdt),
             c_layout_name(layout), (long long)B, (long long)N, with_optional,
             max_err, max_abs, w_err, w_abs, ran ? "" : " (did not run)");
    c_sample_free(&s);
}

void backward_tests()
{
    const rowops_dtype dts[4] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16,
                                 ROWOPS_F64};
    for (int op = 0; op < ROWOPS_OP_COUNT; ++op)
        for (rowops_dtype dt : dts)
            for (int layout = 0; layout < C_LAYOUT_COUNT; ++layout)
                for (int opt = 0; opt < 2; ++opt)
                    check_backward((rowops_op)op, dt, dt, (c_layout)layout, 5,
                                   65, opt);
    check_backward(ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_BF16, ROWOPS_F32,
                   C_CONTIGUOUS, 70, 40, 1); /* more row groups than blocks */
    check_backward(ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F32, ROWOPS_F32,
                   C_TRANSPOSED, 40, 300, 1);
    check_backward(ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F64, ROWOPS_F32,
                   C_CONTIGUOUS, 3, 2500, 1);
    check_backward(ROWOPS_OP_RMS_NORM_ROWS, ROWOPS_BF16, ROWOPS_BF16,
                   C_CONTIGUOUS, 2, 70000, 1);
    check_backward(ROWOPS_OP_FUSED_ADD_RMS_NORM, ROWOPS_F16, ROWOPS_F16,
                   C_CONTIGUOUS, 11, 2000, 1); /* one-row tiles, looping */
}

} // namespace

/* The bench's paired probe (bench/bridge/probe_copy_kernel.cuh): one or
 * two pairs copied whole, the 8-byte tail included, nothing written past
 * them, with more words than threads and fewer. */
void probe_copy_tests()
{
    for (const long long bytes : {8LL, 16LL, 24LL, 4096LL, 8200LL})
        for (int pairs = 1; pairs <= 2; ++pairs)
            for (const unsigned grid : {1u, 3u}) {
                const size_t words = (size_t)(bytes + 16) / 16 + 1;
                std::vector<uint4> src[2], dst[2];
                for (int k = 0; k < 2; ++k) {
                    src[k].assign(words, uint4{});
                    dst[k].assign(words, uint4{0xdeadbeefu, 0xdeadbeefu,
                                               0xdeadbeefu, 0xdeadbeefu});
                    unsigned char *b = (unsigned char *)src[k].data();
                    for (size_t i = 0; i < words * 16; ++i)
                        b[i] = (unsigned char)(i * 7 + 13 * k + 1);
                }
                opcost_probe::copy_pairs p{};
                for (int k = 0; k < 2; ++k) {
                    p.src[k] = src[k].data();
                    p.dst[k] = dst[k].data();
                }
                p.words = bytes / 16;
                p.tail8 = bytes % 16 != 0;
                p.pairs = pairs;
                C_CHECK(simt::launch(
                    grid, 64, 0, [&] { opcost_probe::copy_pairs_body(p); }));
                for (int k = 0; k < 2; ++k) {
                    const unsigned char *a =
                        (const unsigned char *)src[k].data();
                    const unsigned char *d =
                        (const unsigned char *)dst[k].data();
                    const long long copied = k < pairs ? bytes : 0;
                    /* 0xdeadbeef's bytes in memory (little endian) */
                    static const unsigned char canary[4] = {0xef, 0xbe, 0xad,
                                                            0xde};
                    bool ok = memcmp(a, d, (size_t)copied) == 0;
                    for (size_t i = (size_t)copied; i < words * 16; ++i)
                        ok = ok && d[i] == canary[i % 4];
                    C_EXPECT(ok,
                             "probe copy: %lld bytes, %d pairs, grid %u, "
                             "pair %d",
                             bytes, pairs, grid, k);
                }
            }
}

int main()
{
    forward_tests();
    empty_row_test();
    repeat_test();
    backward_tests();
    probe_copy_tests();
    printf("emulated runs: %d fast, %d strided forward; %ld fiber switches\n",
           fast_runs, strided_runs, simt::emu().switches);
    printf("largest relative rstd error (float32 rstd): fast %.3g, strided "
           "%.3g (float32 epsilon 1.19e-7)\n",
           max_rstd_err[0], max_rstd_err[1]);
    return c_report("test_cuda_emulated");
}
