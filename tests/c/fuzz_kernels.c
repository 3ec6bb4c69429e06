/* Differential fuzzing of the C kernels against the C double reference.
 *
 * Each case draws op, dtypes, shape, a layout per tensor, values (with NaN,
 * Inf, denormals, float16-overflowing squares, zero rows) and eps from a
 * PRNG seeded by (seed, case index), so any case replays alone with
 * --seed S --case K. Every tensor lives in its own mmap region: either its
 * last byte touches a PROT_NONE page (over-reads fault) or it starts
 * 64-byte aligned (so the fast kernels stay eligible) with canaries behind
 * it. Every byte of the region that is not an element holds a
 * position-dependent canary; after each kernel the canaries of outputs are
 * checked and inputs are compared with a saved copy (stray writes).
 *
 * Kernels run: cpu_strided always, cpu_fast_portable when rowops_choose
 * picks a fast path, cpu_fast_avx2 and its streamed forms (_nt, _nta) when
 * it does and the CPU has AVX2+FMA+F16C (as tests/c/test_kernels.c
 * decides), the cpu_fast_avx512 three where it also has AVX-512 F+BW,
 * the column-major kernels (cpu_colmajor_avx2, _avx512 where the CPU has
 * AVX-512 F+BW, _narrow where admitted) when it picks one of them
 * (rowops_kernel_can_run). One case in ten aims at
 * the column-major kernel, four at the row-major fast path. Each runs on fresh
 * NaN-poisoned outputs, sometimes split into two row ranges as a thread pool
 * would, and is compared with rowops_reference_f64 under c_rtol/c_atol.
 * The in-place form (out = x, residual_out = residual) must give the same
 * bits as the kernel's functional result. */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include "c_samples.h"
#include "cpu_features.h"
#include "reference_f64.h"
#include "rowops_elem.h"

#include <float.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* Bounds the work per case (B * N elements per tensor). */
#define MAX_ELEMS (1 << 20)
#define MAX_REPORTS 5

/* ---- PRNG: splitmix64, one stream per case ---- */

static uint64_t rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n). */
static int64_t rng_below(uint64_t *s, int64_t n)
{
    return n > 0 ? (int64_t)(rng_next(s) % (uint64_t)n) : 0;
}

static double rng_unit(uint64_t *s)
{
    return (double)(rng_next(s) >> 11) / 9007199254740992.0;
}

/* ---- guarded tensors ---- */

typedef enum layout {
    L_CONTIG = 0,
    L_TRANSPOSED, /* [B,N] view of [N,B]: strides (1, B) */
    L_ROW_PAD,    /* row stride > N (gaps hold canaries) */
    L_COL_STRIDE, /* weight/rstd: element stride 2 or 3 */
    L_EXPAND,     /* stride 0: inputs only */
    L_COUNT
} layout;

static const char *layout_names[L_COUNT] = {"contig", "transposed", "row_pad",
                                            "col_stride", "expand"};

typedef struct gtensor {
    rowops_tensor t;
    const char *name;
    layout lay;
    int64_t offset; /* storage offset in elements (breaks alignment) */
    int tight;      /* 1: last byte touches the guard page; 2: if aligned */
    unsigned char *map;
    size_t map_len;
    unsigned char *lo; /* accessible region [lo, lo + len) */
    size_t len;
    unsigned char *saved; /* inputs: copy of the region after filling */
} gtensor;

static size_t page_size;

static unsigned char canary(size_t i)
{
    return (unsigned char)(0x5a ^ (i * 131u) ^ (i >> 9));
}

/* canary(i) for every i of the largest region so far: memcpy/memcmp. */
static unsigned char *pattern;
static size_t pattern_len;

static void grow_pattern(size_t len)
{
    if (len <= pattern_len)
        return;
    pattern = realloc(pattern, len);
    for (size_t i = pattern_len; i < len; ++i)
        pattern[i] = canary(i);
    pattern_len = len;
}

static void fill_canaries(gtensor *g)
{
    memcpy(g->lo, pattern, g->len);
}

static int64_t n_elems(const gtensor *g)
{
    int64_t n = 1;
    for (int d = 0; d < g->t.rank; ++d)
        n *= g->t.sizes[d];
    return n;
}

/* Element offset of linear (row-major logical) index k. */
static int64_t elem_off(const gtensor *g, int64_t k)
{
    if (g->t.rank == 1)
        return k * g->t.strides[0];
    if (g->t.rank == 2 && g->t.sizes[1] > 0)
        return k / g->t.sizes[1] * g->t.strides[0] +
               k % g->t.sizes[1] * g->t.strides[1];
    return rowops_index_offset(g->t.sizes, g->t.strides, g->t.rank, k);
}

/* Maps a region for the tensor whose sizes and strides are set. */
static void gt_alloc(gtensor *g)
{
    const size_t es = rowops_dtype_size(g->t.dtype);
    int64_t span = n_elems(g) > 0 ? 1 : 0;
    for (int d = 0; d < g->t.rank && span; ++d)
        span += (g->t.sizes[d] - 1) * g->t.strides[d];
    const size_t bytes = (size_t)(g->offset + span) * es;
    const size_t front = 64; /* canaries before the data */
    g->len = (front + bytes + page_size - 1) / page_size * page_size;
    g->map_len = g->len + page_size;
    g->map = mmap(NULL, g->map_len, PROT_READ | PROT_WRITE,
                  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (g->map == MAP_FAILED) {
        perror("mmap");
        exit(2);
    }
    if (mprotect(g->map + g->len, page_size, PROT_NONE) != 0) {
        perror("mprotect");
        exit(2);
    }
    g->lo = g->map;
    if (g->tight == 2) /* tight only where that keeps data 32-byte aligned */
        g->tight = (bytes % ROWOPS_CPU_VECTOR_BYTES) == 0;
    unsigned char *base = g->tight ? g->lo + g->len - bytes : g->lo + front;
    g->t.data = base + (size_t)g->offset * es;
    g->t.device = ROWOPS_DEVICE_CPU;
    g->saved = NULL;
    grow_pattern(g->len);
    fill_canaries(g);
}

static void gt_free(gtensor *g)
{
    if (g->map)
        munmap(g->map, g->map_len);
    free(g->saved);
    g->map = NULL;
    g->saved = NULL;
}

/* Same geometry (same offsets inside a fresh region) and contents. */
static void gt_clone(gtensor *dst, const gtensor *src, const char *name)
{
    *dst = *src;
    dst->name = name;
    gt_alloc(dst);
    dst->t.data = dst->lo + ((unsigned char *)src->t.data - src->lo);
    memcpy(dst->lo, src->lo, src->len);
}

static void gt_save(gtensor *g)
{
    g->saved = malloc(g->len);
    memcpy(g->saved, g->lo, g->len);
}

/* Fresh output: canaries everywhere, NaN in every element. */
static void gt_poison(gtensor *g)
{
    fill_canaries(g);
    const int64_t n = n_elems(g);
    for (int64_t k = 0; k < n; ++k)
        rowops_store_d(g->t.data, elem_off(g, k), g->t.dtype, NAN);
}

/* Reads every element into got (logical order), then puts canaries back
 * over the elements and checks the whole region. Returns the first
 * corrupted byte's offset from data, or INT64_MIN if intact. */
static int64_t gt_collect(gtensor *g, double *got)
{
    const int64_t n = n_elems(g);
    const size_t es = rowops_dtype_size(g->t.dtype);
    for (int64_t k = 0; k < n; ++k) {
        const int64_t off = elem_off(g, k);
        if (got)
            got[k] = rowops_load_d(g->t.data, off, g->t.dtype);
        const size_t at =
            (size_t)((unsigned char *)g->t.data - g->lo) + (size_t)off * es;
        memcpy(g->lo + at, pattern + at, es);
    }
    if (memcmp(g->lo, pattern, g->len) == 0)
        return INT64_MIN;
    for (size_t i = 0; i < g->len; ++i)
        if (g->lo[i] != canary(i))
            return (int64_t)i - ((unsigned char *)g->t.data - g->lo);
    return INT64_MIN;
}

/* ---- values ---- */

static double special_value(uint64_t *s, rowops_dtype dt)
{
    switch (rng_below(s, 8)) {
    case 0: return NAN;
    case 1: return INFINITY;
    case 2: return -INFINITY;
    case 3: /* a subnormal of the dtype */
        return dt == ROWOPS_F16   ? 3 * 0x1p-24
               : dt == ROWOPS_F64 ? 1e-310
                                  : 1e-39;
    case 4: /* squares overflow float16 (60000 + 60000 overflows h) */
        return dt == ROWOPS_F16 ? (rng_below(s, 2) ? 300.0 : -60000.0) : 1e4;
    case 5: return -0.0;
    default: return 0.0;
    }
}

typedef struct valgen {
    double special_rate;
    double scale;
    int64_t zero_row; /* -1: none */
} valgen;

static double draw_value(uint64_t *s, const valgen *v, rowops_dtype dt,
                         int64_t row)
{
    if (row == v->zero_row)
        return 0.0;
    if (v->special_rate > 0 && rng_unit(s) < v->special_rate)
        return special_value(s, dt);
    return (2 * rng_unit(s) - 1) * 2 * v->scale;
}

static void gt_fill(gtensor *g, uint64_t *s, const valgen *v, int64_t ncol)
{
    const int64_t n = n_elems(g);
    for (int64_t k = 0; k < n; ++k)
        rowops_store_d(g->t.data, elem_off(g, k), g->t.dtype,
                       draw_value(s, v, g->t.dtype, ncol ? k / ncol : 0));
}

/* ---- one case ---- */

typedef struct fcase {
    rowops_op op;
    rowops_dtype dt, wdt;
    int64_t B, N;
    double eps;
    valgen vals;
    gtensor x, res, w, out, rout, rstd;
} fcase;

/* Strides of a [B, N] tensor in the given layout. */
static void set_2d(gtensor *g, const char *name, rowops_dtype dt, layout lay,
                   int64_t B, int64_t N, int fast, uint64_t *s)
{
    memset(g, 0, sizeof *g);
    g->name = name;
    g->lay = lay;
    g->t.dtype = dt;
    g->t.rank = 2;
    g->t.sizes[0] = B;
    g->t.sizes[1] = N;
    g->t.strides[1] = 1;
    const int64_t vec =
        ROWOPS_CPU_VECTOR_BYTES / (int64_t)rowops_dtype_size(dt);
    switch (lay) {
    case L_TRANSPOSED:
        g->t.strides[0] = 1;
        g->t.strides[1] = B;
        break;
    case L_ROW_PAD:
        /* Half the time (always when aiming at the fast path) a vector-multiple
         * stride, so fast paths see gaps. */
        g->t.strides[0] = fast || rng_below(s, 2)
                              ? (N / vec + 1 + rng_below(s, 2)) * vec
                              : N + 1 + rng_below(s, 9);
        break;
    case L_EXPAND: g->t.strides[0] = 0; break;
    default: g->t.strides[0] = N; break;
    }
    g->offset = !fast && rng_below(s, 7) == 0 ? 1 + rng_below(s, 3) : 0;
    g->tight = fast ? 2 : (int)rng_below(s, 2);
}

static void set_1d(gtensor *g, const char *name, rowops_dtype dt, layout lay,
                   int64_t n, int fast, uint64_t *s)
{
    memset(g, 0, sizeof *g);
    g->name = name;
    g->lay = lay;
    g->t.dtype = dt;
    g->t.rank = 1;
    g->t.sizes[0] = n;
    g->t.strides[0] = lay == L_EXPAND       ? 0
                      : lay == L_COL_STRIDE ? 2 + rng_below(s, 2)
                                            : 1;
    g->offset = !fast && rng_below(s, 7) == 0 ? 1 + rng_below(s, 3) : 0;
    g->tight = fast ? 2 : (int)rng_below(s, 2);
}

/* fast: 1 aims at the row-major fast path, 2 at the column-major kernel
 * (inputs transposed, outputs row-major). */
static layout pick_2d_layout(uint64_t *s, int input, int fast)
{
    if (fast == 2)
        return input ? L_TRANSPOSED : rng_below(s, 4) ? L_CONTIG : L_ROW_PAD;
    if (fast)
        return rng_below(s, 4) ? L_CONTIG : L_ROW_PAD;
    const int64_t r = rng_below(s, 10);
    if (r < 5)
        return L_CONTIG; /* mostly fast-path eligible */
    if (r < 7)
        return L_ROW_PAD;
    if (r < 9 || !input)
        return L_TRANSPOSED;
    return L_EXPAND;
}

static int64_t pick_n(uint64_t *s, rowops_dtype dt)
{
    static const int64_t edges[] = {7,  8,  9,  15, 16, 17, 31, 32, 33,
                                    63, 64, 65, 2,  3,  5,  13, 97, 257};
    const int64_t r = rng_below(s, 100);
    if (r < 3)
        return 0;
    if (r < 8)
        return 1;
    if (r < 40)
        return edges[rng_below(s, sizeof edges / sizeof edges[0])];
    if (r < 97)
        return 1 + rng_below(s, 4100);
    /* Around the one-pass limits (32768 float32, 65536 16-bit). */
    const int64_t lim = rng_below(s, 2) ? 32768 : 65536;
    (void)dt;
    return lim - 1 + rng_below(s, 3);
}

static int64_t pick_b(uint64_t *s)
{
    const int64_t r = rng_below(s, 100);
    if (r < 3)
        return 0;
    if (r < 15)
        return 1;
    if (r < 95)
        return 2 + rng_below(s, 63);
    return 65 + rng_below(s, 236);
}

static void make_case(fcase *c, uint64_t *s)
{
    static const rowops_dtype dts[] = {ROWOPS_F32, ROWOPS_F16, ROWOPS_BF16,
                                       ROWOPS_F64};
    static const double epss[] = {0.0, 1e-6, 1e-6, 1e-2};
    memset(c, 0, sizeof *c);
    c->op = (rowops_op)rng_below(s, 2);
    c->dt = dts[rng_below(s, 4)];
    /* Four cases in ten aim at the fast path: 16/32-bit dtype, aligned
     * unit-stride rows whose strides are whole vectors (N a multiple of
     * the vector, or a single row of any N); one at the column-major
     * kernel (16/32-bit, transposed inputs, row-major outputs). */
    const int aim = (int)rng_below(s, 10);
    const int fast = aim < 4 ? 1 : aim < 5 ? 2 : 0;
    if (fast && c->dt == ROWOPS_F64)
        c->dt = ROWOPS_F32;
    c->wdt = rng_below(s, 2) ? ROWOPS_F32 : c->dt;
    c->N = pick_n(s, c->dt);
    c->B = pick_b(s);
    if (fast == 1) {
        const int64_t vec =
            ROWOPS_CPU_VECTOR_BYTES / (int64_t)rowops_dtype_size(c->dt);
        if (rng_below(s, 3) == 0)
            c->B = 1;
        else if (c->N > vec)
            c->N = c->N / vec * vec;
        else if (c->N > 0)
            c->N = vec;
    }
    if (c->N > 0 && c->B * c->N > MAX_ELEMS)
        c->B = MAX_ELEMS / c->N;
    c->eps = epss[rng_below(s, 4)];
    static const double rates[] = {0, 0, 0, 0, 0, 0, 1e-3, 1e-2, 0.1};
    c->vals.special_rate = rates[rng_below(s, 9)];
    static const double scales[] = {1, 1, 1, 1e-2, 30};
    c->vals.scale = scales[rng_below(s, 5)];
    c->vals.zero_row = rng_below(s, 10) == 0 ? rng_below(s, c->B) : -1;

    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    set_2d(&c->x, "x", c->dt, pick_2d_layout(s, 1, fast), c->B, c->N, fast, s);
    set_2d(&c->out, "out", c->dt, pick_2d_layout(s, 0, fast), c->B, c->N, fast,
           s);
    const rowops_dtype acc = rowops_acc_dtype(c->dt);
    set_1d(&c->rstd, "rstd", acc, rng_below(s, 4) ? L_CONTIG : L_COL_STRIDE,
           c->B, 0, s);
    gt_alloc(&c->x);
    gt_alloc(&c->out);
    gt_alloc(&c->rstd);
    gt_fill(&c->x, s, &c->vals, c->N);
    if (fused) {
        set_2d(&c->res, "residual", c->dt, pick_2d_layout(s, 1, fast), c->B,
               c->N, fast, s);
        set_2d(&c->rout, "residual_out", c->dt, pick_2d_layout(s, 0, fast),
               c->B, c->N, fast, s);
        const int64_t r = rng_below(s, 10);
        set_1d(&c->w, "weight", c->wdt,
               fast || r < 7 ? L_CONTIG
               : r < 9       ? L_COL_STRIDE
                             : L_EXPAND,
               c->N, fast, s);
        gt_alloc(&c->res);
        gt_alloc(&c->rout);
        gt_alloc(&c->w);
        gt_fill(&c->res, s, &c->vals, c->N);
        /* Weights: mostly ordinary, rarely special. */
        valgen wv = {c->vals.special_rate / 4, 1, -1};
        gt_fill(&c->w, s, &wv, 0);
        gt_save(&c->res);
        gt_save(&c->w);
    }
    gt_save(&c->x);
}

static void free_case(fcase *c)
{
    gt_free(&c->x);
    gt_free(&c->out);
    gt_free(&c->rstd);
    gt_free(&c->res);
    gt_free(&c->rout);
    gt_free(&c->w);
}

static rowops_call case_call(const fcase *c)
{
    rowops_call call;
    memset(&call, 0, sizeof call);
    call.op = c->op;
    call.x = c->x.t;
    call.out = c->out.t;
    call.rstd = c->rstd.t;
    call.eps = c->eps;
    if (c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        call.residual = c->res.t;
        call.residual_out = c->rout.t;
        call.weight = c->w.t;
    }
    return call;
}

static void describe_tensor(char *buf, size_t len, const gtensor *g)
{
    size_t n = strlen(buf);
    if (!g->map)
        return;
    char st[64];
    if (g->t.rank > 1)
        snprintf(st, sizeof st, "%lld,%lld", (long long)g->t.strides[0],
                 (long long)g->t.strides[1]);
    else
        snprintf(st, sizeof st, "%lld", (long long)g->t.strides[0]);
    snprintf(buf + n, len - n, " %s{%s strides=(%s) off=%lld %s addr%%32=%u}",
             g->name, layout_names[g->lay], st, (long long)g->offset,
             g->tight ? "tight" : "aligned",
             (unsigned)((uintptr_t)g->t.data % 32));
}

/* The current case and kernel, for mismatch reports and the fault handler. */
static char case_text[1024];

static void describe_case(const fcase *c, uint64_t seed, int64_t index,
                          const char *what)
{
    snprintf(case_text, sizeof case_text,
             "[--seed %llu --case %lld] %s: %s %s weight=%s B=%lld N=%lld "
             "eps=%g special=%g scale=%g zero_row=%lld\n ",
             (unsigned long long)seed, (long long)index, what,
             rowops_op_name(c->op), rowops_dtype_name(c->dt),
             rowops_dtype_name(c->wdt), (long long)c->B, (long long)c->N,
             c->eps, c->vals.special_rate, c->vals.scale,
             (long long)c->vals.zero_row);
    describe_tensor(case_text, sizeof case_text, &c->x);
    describe_tensor(case_text, sizeof case_text, &c->res);
    describe_tensor(case_text, sizeof case_text, &c->w);
    describe_tensor(case_text, sizeof case_text, &c->out);
    describe_tensor(case_text, sizeof case_text, &c->rout);
    describe_tensor(case_text, sizeof case_text, &c->rstd);
}

static void on_fault(int sig)
{
    static const char msg[] = "\nfuzz_kernels: fault (guard page hit?) in ";
    (void)!write(2, msg, sizeof msg - 1);
    (void)!write(2, case_text, strlen(case_text));
    (void)!write(2, "\n", 1);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- kernels and comparison ---- */

/* Every CPU kernel of the table (kernels/kernel_table.def). */
static rowops_impl kernels[ROWOPS_IMPL_COUNT];
static int kernel_count;

static void list_kernels(void)
{
    for (int i = 0; i < ROWOPS_IMPL_COUNT; ++i)
        if (rowops_kernel_info_of((rowops_impl)i)->cpu)
            kernels[kernel_count++] = (rowops_impl)i;
}

static const char *kernel_name(int k)
{
    return rowops_impl_name(kernels[k]);
}

static int kernel_allowed(int k, const rowops_call *call)
{
    return rowops_kernel_can_run(kernels[k], call);
}

static double dtype_max(rowops_dtype dt)
{
    switch (dt) {
    case ROWOPS_F16: return 65504.0;
    case ROWOPS_BF16: return 3.3895313892515355e38;
    case ROWOPS_F64: return DBL_MAX;
    default: return FLT_MAX;
    }
}

/* got within c_rtol/c_atol of the reference; NaN matches NaN; an Inf is
 * right where the reference is that Inf or overflows the dtype. */
static int out_close(double got, double want, rowops_dtype dt)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    const double tol = c_atol(dt) + c_rtol(dt) * fabs(want);
    if (isinf(got)) {
        const double m = dtype_max(dt);
        return isinf(want) ? got == want
                           : (got > 0) == (want > 0) && fabs(want) + tol >= m;
    }
    if (isinf(want))
        return 0;
    return fabs(got - want) <= tol;
}

static int rstd_close(double got, double want, rowops_dtype dt)
{
    if (isnan(want) || isnan(got))
        return isnan(want) && isnan(got);
    if (isinf(want) || isinf(got))
        return got == want;
    /* float32 accumulation over up to 65537 terms (test_kernels' bound) */
    const double rtol = dt == ROWOPS_F64 ? 1e-12 : 1e-5;
    return fabs(got - want) <= rtol * fabs(want);
}

static int same_value(double a, double b)
{
    return (isnan(a) && isnan(b)) || a == b;
}

typedef struct results {
    double *out, *h, *rstd;
} results;

static void results_alloc(results *r, int64_t elems, int64_t rows)
{
    r->out = malloc((size_t)(elems + 1) * sizeof(double));
    r->h = malloc((size_t)(elems + 1) * sizeof(double));
    r->rstd = malloc((size_t)(rows + 1) * sizeof(double));
}

static void results_free(results *r)
{
    free(r->out);
    free(r->h);
    free(r->rstd);
}

/* ---- statistics ---- */

static long long runs[ROWOPS_IMPL_COUNT], inplace_runs[ROWOPS_IMPL_COUNT],
    mismatches[ROWOPS_IMPL_COUNT];
static long long guard_failures, reports, skipped_rows;

static void report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void report(const char *fmt, ...)
{
    if (++reports > MAX_REPORTS)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "MISMATCH %s\n  ", case_text);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* Checks the canaries of an output (or, for inputs, the saved copy). */
static int check_guards(gtensor *g, double *got)
{
    if (g->saved) {
        if (memcmp(g->lo, g->saved, g->len) == 0)
            return 0;
        ++guard_failures;
        report("input %s was modified", g->name);
        return 1;
    }
    const int64_t at = gt_collect(g, got);
    if (at == INT64_MIN)
        return 0;
    ++guard_failures;
    report("canary of %s overwritten at byte %lld from its data", g->name,
           (long long)at);
    return 1;
}

/* Compares a kernel's results with the reference; returns bad count. */
static long long compare(const fcase *c, const results *got, const results *ref)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    long long bad = 0;
    for (int64_t r = 0; r < c->B; ++r) {
        /* mean(h^2) + eps below float32's normal range (a row of
         * subnormals, eps 0): the float32 accumulation the contract asks
         * for cannot match the double reference, so the row is skipped. */
        if (c->dt != ROWOPS_F64 && isfinite(ref->rstd[r]) &&
            ref->rstd[r] > 1 / sqrt(FLT_MIN)) {
            ++skipped_rows;
            continue;
        }
        if (!rstd_close(got->rstd[r], ref->rstd[r], c->dt) && bad++ < 3)
            report("row %lld: rstd %.9g want %.9g", (long long)r, got->rstd[r],
                   ref->rstd[r]);
        /* float32 accumulation may put rstd off the double one (checked
         * just above); out is then held to c_rtol around the reference
         * rescaled by the kernel's own rstd. */
        double scale = got->rstd[r] / ref->rstd[r];
        if (!isfinite(scale) || scale == 0)
            scale = 1;
        for (int64_t i = 0; i < c->N; ++i) {
            const int64_t k = r * c->N + i;
            if (!out_close(got->out[k], ref->out[k] * scale, c->dt) &&
                bad++ < 3)
                report("row %lld col %lld: out %.9g want %.9g", (long long)r,
                       (long long)i, got->out[k], ref->out[k]);
            if (fused && !same_value(got->h[k], ref->h[k]) && bad++ < 3)
                report("row %lld col %lld: residual_out %.9g want %.9g",
                       (long long)r, (long long)i, got->h[k], ref->h[k]);
        }
    }
    return bad;
}

/* One kernel, functional then (sometimes) in place. Returns failures. */
static int run_one(fcase *c, int k, uint64_t *s, uint64_t seed, int64_t index,
                   const results *ref, results *got)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    rowops_call call = case_call(c);
    if (!kernel_allowed(k, &call))
        return 0;
    const int split = (int)rng_below(s, 2);
    char what[64];
    snprintf(what, sizeof what, "%s%s", kernel_name(k), split ? "/split" : "");
    describe_case(c, seed, index, what);
    gt_poison(&c->out);
    gt_poison(&c->rstd);
    if (fused)
        gt_poison(&c->rout);
    c_run_kernel(kernels[k], &call, split);
    ++runs[k];
    int fail = 0;
    fail |= check_guards(&c->out, got->out);
    fail |= check_guards(&c->rstd, got->rstd);
    fail |= check_guards(&c->x, NULL);
    if (fused) {
        fail |= check_guards(&c->rout, got->h);
        fail |= check_guards(&c->res, NULL);
        fail |= check_guards(&c->w, NULL);
    }
    if (!fail && compare(c, got, ref))
        fail = 1;

    /* In place: out = x (and residual_out = residual), when no input row
     * is shared (stride 0 would make rows alias each other). */
    if (fail || rng_below(s, 3) != 0 || c->x.lay == L_EXPAND ||
        (fused && c->res.lay == L_EXPAND))
        goto done;
    gtensor x2, r2;
    memset(&r2, 0, sizeof r2);
    gt_clone(&x2, &c->x, "x=out");
    call.x = call.out = x2.t;
    if (fused) {
        gt_clone(&r2, &c->res, "residual=residual_out");
        call.residual = call.residual_out = r2.t;
    }
    if (kernel_allowed(k, &call)) {
        snprintf(what, sizeof what, "%s%s/inplace", kernel_name(k),
                 split ? "/split" : "");
        describe_case(c, seed, index, what);
        gt_poison(&c->rstd);
        c_run_kernel(kernels[k], &call, split);
        ++inplace_runs[k];
        results ip;
        results_alloc(&ip, c->B * c->N, c->B);
        int gfail = check_guards(&x2, ip.out);
        gfail |= check_guards(&c->rstd, ip.rstd);
        if (fused)
            gfail |= check_guards(&r2, ip.h);
        if (gfail) {
            fail = 1;
        } else {
            long long bad = 0;
            for (int64_t r = 0; r < c->B; ++r) {
                if (!same_value(ip.rstd[r], got->rstd[r]) && bad++ < 3)
                    report("in place row %lld: rstd %.9g, functional %.9g",
                           (long long)r, ip.rstd[r], got->rstd[r]);
                for (int64_t i = 0; i < c->N; ++i) {
                    const int64_t e = r * c->N + i;
                    if (!same_value(ip.out[e], got->out[e]) && bad++ < 3)
                        report("in place row %lld col %lld: out %.9g, "
                               "functional %.9g",
                               (long long)r, (long long)i, ip.out[e],
                               got->out[e]);
                    if (fused && !same_value(ip.h[e], got->h[e]) && bad++ < 3)
                        report("in place row %lld col %lld: residual_out "
                               "%.9g, functional %.9g",
                               (long long)r, (long long)i, ip.h[e], got->h[e]);
                }
            }
            fail |= bad != 0;
        }
        results_free(&ip);
    }
    gt_free(&x2);
    gt_free(&r2);
done:
    if (fail)
        ++mismatches[k];
    return fail;
}

static uint64_t case_seed(uint64_t seed, int64_t index)
{
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + (uint64_t)index;
    return rng_next(&s);
}

static int run_case(uint64_t seed, int64_t index)
{
    uint64_t s = case_seed(seed, index);
    fcase c;
    make_case(&c, &s);
    describe_case(&c, seed, index, "setup");
    rowops_call call = case_call(&c);
    char err[256];
    if (rowops_check_call(&call, err, sizeof err) != 0) {
        fprintf(stderr, "invalid generated call: %s\n%s\n", err, case_text);
        exit(2);
    }
    const int64_t elems = c.B * c.N;
    results ref, got;
    results_alloc(&ref, elems, c.B);
    results_alloc(&got, elems, c.B);
    rowops_reference_f64(&call, ref.out, ref.h, ref.rstd);
    int fail = 0;
    for (int k = 0; k < kernel_count; ++k)
        fail |= run_one(&c, k, &s, seed, index, &ref, &got);
    results_free(&ref);
    results_free(&got);
    free_case(&c);
    return fail;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void usage(void)
{
    fprintf(stderr, "usage: fuzz_kernels [--cases N] [--seed S] "
                    "[--seconds T] [--case K]\n");
    exit(2);
}

int main(int argc, char **argv)
{
    long long cases = 10000, only = -1;
    unsigned long long seed = 1;
    double seconds = 0;
    int cases_given = 0;
    for (int i = 1; i < argc; ++i) {
        if (i + 1 >= argc)
            usage();
        if (!strcmp(argv[i], "--cases")) {
            cases = atoll(argv[++i]);
            cases_given = 1;
        } else if (!strcmp(argv[i], "--seed")) {
            seed = strtoull(argv[++i], NULL, 0);
        } else if (!strcmp(argv[i], "--seconds")) {
            seconds = atof(argv[++i]);
        } else if (!strcmp(argv[i], "--case")) {
            only = atoll(argv[++i]);
        } else {
            usage();
        }
    }
    /* --seconds alone runs until the time is up; with --cases, whichever
     * comes first. */
    if (seconds > 0 && !cases_given)
        cases = -1;
    page_size = (size_t)sysconf(_SC_PAGESIZE);
    list_kernels();
    signal(SIGSEGV, on_fault);
    signal(SIGBUS, on_fault);

    const double t0 = now_s();
    long long done = 0, failed = 0;
    if (only >= 0) {
        failed = run_case(seed, only);
        done = 1;
    } else {
        for (long long i = 0; cases < 0 || i < cases; ++i) {
            if (seconds > 0 && now_s() - t0 >= seconds)
                break;
            failed += run_case(seed, i);
            ++done;
        }
    }
    const double dt = now_s() - t0;
    long long total = 0;
    printf("fuzz_kernels: seed %llu, %lld cases in %.1f s\n", seed, done, dt);
    for (int k = 0; k < kernel_count; ++k) {
        total += runs[k] + inplace_runs[k];
        printf("  %-18s %8lld runs, %7lld in place, %lld failing\n",
               kernel_name(k), runs[k], inplace_runs[k], mismatches[k]);
    }
    printf("  kernel runs per case: %.2f\n",
           done ? (double)total / (double)done : 0.0);
    printf("  rows skipped (float32 range): %lld\n", skipped_rows);
    printf("  failing cases: %lld, guard/canary failures: %lld\n", failed,
           guard_failures);
    free(pattern);
    return failed || guard_failures ? 1 : 0;
}
