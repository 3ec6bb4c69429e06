/* Timing: all threads leave a barrier, each reads the clock, runs its slice,
 * reads the clock again and waits at a second barrier. A trial lasts from
 * the earliest start to the latest end: a thread descheduled after the
 * barrier can only lengthen it (timing from one thread's clock reads could
 * miss work the others did meanwhile and report up to T times the
 * bandwidth). */
#define _POSIX_C_SOURCE 200809L
#include "ceiling.h"
#include "buffer.h"

#include "cpu_cache.h"
#include "cpu_features.h"
#include "timer.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#define HAVE_NT 1
#else
#define HAVE_NT 0
#endif

#define SCALAR 3.0 /* STREAM's */
#define REL_TOL 1e-13

/* An empty asm with a memory clobber in each block of the ordinary
 * kernels: otherwise gcc turns the copy loop into memcpy, which for large
 * sizes uses non-temporal stores itself. Costs no instructions. */
#define COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")

/* The ordinary-store kernels in plain C, compiled for AVX-512, AVX2 and
 * the baseline and picked at load time (as the kernels they bound are): at
 * cache levels the vector width sets the bandwidth. Blocks of 16 elements
 * each end in a compiler barrier, so gcc vectorizes a block but does not
 * turn the copy into memcpy (whose large copies stream). */
#define CLONES                                                                 \
    __attribute__((target_clones("arch=x86-64-v4", "avx2", "default")))

CLONES static void copy_plain(double *restrict c, const double *restrict a,
                              size_t n)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (size_t k = 0; k < 16; ++k)
            c[i + k] = a[i + k];
        COMPILER_BARRIER();
    }
    for (; i < n; ++i)
        c[i] = a[i];
}

CLONES static void triad_plain(double *restrict a, const double *restrict b,
                               const double *restrict c, size_t n, double s)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (size_t k = 0; k < 16; ++k)
            a[i + k] = b[i + k] + s * c[i + k];
        COMPILER_BARRIER();
    }
    for (; i < n; ++i)
        a[i] = b[i] + s * c[i];
}

/* The fused op's traffic: two inputs read, two outputs written. */
CLONES static void add2_plain(double *restrict c, double *restrict d,
                              const double *restrict a,
                              const double *restrict b, size_t n, double s)
{
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (size_t k = 0; k < 16; ++k) {
            const double h = a[i + k] + b[i + k];
            c[i + k] = h;
            d[i + k] = s * h;
        }
        COMPILER_BARRIER();
    }
    for (; i < n; ++i) {
        c[i] = a[i] + b[i];
        d[i] = s * (a[i] + b[i]);
    }
}

/* An in-place op's traffic: each line of a and b read and written back
 * (x, residual -> out, h in place), no line read for ownership. z is 0
 * at run time (s - s, s finite), so the arrays keep their values and the
 * kernel repeats. */
CLONES static void add2_in_place(double *restrict a, double *restrict b,
                                 size_t n, double s)
{
    const double z = s - s;
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        for (size_t k = 0; k < 16; ++k) {
            const double x = a[i + k], y = b[i + k];
            a[i + k] = x + z * y;
            b[i + k] = y + z * x;
        }
        COMPILER_BARRIER();
    }
    for (; i < n; ++i) {
        const double x = a[i], y = b[i];
        a[i] = x + z * y;
        b[i] = y + z * x;
    }
}

int opcost_ceiling_prefetches(void)
{
    return !(rowops_cpu_features() & ROWOPS_CPU_PREFETCH_NTA);
}

#if HAVE_NT
/* The streaming kernels prefetch their inputs into L2 4 KiB ahead, one
 * line per 64 bytes of each input, as the fast kernels they bound do
 * (kernels/cpu_fast_pipeline.h), so that the probe uses every technique
 * the kernels do. Alone it moved the probe little (copy_nt 45-49 GB/s
 * against the kernels' 50-55 on the host of 2026-12-01); what the probe
 * lacked was the kernels' huge pages (opcost_buffer_alloc). Not where
 * opcost_ceiling_prefetches() says so (ceiling.h). pf: its value, read
 * once per call. */
#define PREFETCH_AHEAD(p)                                                      \
    do {                                                                       \
        if (pf)                                                                \
            _mm_prefetch((const char *)(p) + 4096, _MM_HINT_T1);               \
    } while (0)

/* Streaming stores need 16-byte alignment: scalar head and tail. */
static void copy_nt(double *c, const double *a, size_t n)
{
    const int pf = opcost_ceiling_prefetches();
    size_t i = 0;
    for (; i < n && ((uintptr_t)(c + i) & 15); ++i)
        c[i] = a[i];
    for (; i + 8 <= n; i += 8) {
        PREFETCH_AHEAD(a + i);
        _mm_stream_pd(c + i, _mm_loadu_pd(a + i));
        _mm_stream_pd(c + i + 2, _mm_loadu_pd(a + i + 2));
        _mm_stream_pd(c + i + 4, _mm_loadu_pd(a + i + 4));
        _mm_stream_pd(c + i + 6, _mm_loadu_pd(a + i + 6));
    }
    for (; i + 2 <= n; i += 2)
        _mm_stream_pd(c + i, _mm_loadu_pd(a + i));
    for (; i < n; ++i)
        c[i] = a[i];
    _mm_sfence(); /* order the weakly-ordered stores before the barrier */
}

static void triad_nt(double *a, const double *b, const double *c, size_t n,
                     double s)
{
    const int pf = opcost_ceiling_prefetches();
    const __m128d vs = _mm_set1_pd(s);
    size_t i = 0;
    for (; i < n && ((uintptr_t)(a + i) & 15); ++i)
        a[i] = b[i] + s * c[i];
    for (; i + 2 <= n; i += 2) {
        if (!(i & 6)) { /* once per 64 bytes, whatever the head left */
            PREFETCH_AHEAD(b + i);
            PREFETCH_AHEAD(c + i);
        }
        _mm_stream_pd(a + i, _mm_add_pd(_mm_loadu_pd(b + i),
                                        _mm_mul_pd(vs, _mm_loadu_pd(c + i))));
    }
    for (; i < n; ++i)
        a[i] = b[i] + s * c[i];
    _mm_sfence();
}

/* c and d share their alignment when the arrays do (the probe's do). */
static void add2_nt(double *c, double *d, const double *a, const double *b,
                    size_t n, double s)
{
    const int pf = opcost_ceiling_prefetches();
    const __m128d vs = _mm_set1_pd(s);
    size_t i = 0;
    for (; i < n && (((uintptr_t)(c + i) | (uintptr_t)(d + i)) & 15); ++i) {
        c[i] = a[i] + b[i];
        d[i] = s * (a[i] + b[i]);
    }
    for (; i + 8 <= n; i += 8) {
        PREFETCH_AHEAD(a + i);
        PREFETCH_AHEAD(b + i);
        for (size_t k = 0; k < 8; k += 2) {
            const __m128d h =
                _mm_add_pd(_mm_loadu_pd(a + i + k), _mm_loadu_pd(b + i + k));
            _mm_stream_pd(c + i + k, h);
            _mm_stream_pd(d + i + k, _mm_mul_pd(vs, h));
        }
    }
    for (; i < n; ++i) {
        c[i] = a[i] + b[i];
        d[i] = s * (a[i] + b[i]);
    }
    _mm_sfence();
}
#endif

#if HAVE_NT && defined(__x86_64__)
/* The same streaming kernels with 512- and 256-bit stores, picked at load
 * time as the fast kernels' widths are: on the Intel host of 2026-12-02
 * (Xeon, AVX-512) the fast kernels' 64-byte streamed stores beat the
 * 16-byte ones of the kernels above by up to 7 % on the same buffers in
 * the same rounds (a paired frac_of_peak of 1.06). A full line per store
 * leaves the write-combining buffers nothing to merge. */
#include <immintrin.h>

#define WIDE_KERNELS(W, VEC, LOAD, STREAM, ADD, MUL, SET1, ISA)                \
    __attribute__((target(ISA))) static void copy_nt_##W(                      \
        double *c, const double *a, size_t n)                                  \
    {                                                                          \
        const int pf = opcost_ceiling_prefetches();                            \
        const size_t lanes = sizeof(VEC) / sizeof(double);                     \
        size_t i = 0;                                                          \
        for (; i < n && ((uintptr_t)(c + i) & (sizeof(VEC) - 1)); ++i)         \
            c[i] = a[i];                                                       \
        for (; i + 8 <= n; i += 8) {                                           \
            PREFETCH_AHEAD(a + i);                                             \
            for (size_t k = 0; k < 8; k += lanes)                              \
                STREAM(c + i + k, LOAD(a + i + k));                            \
        }                                                                      \
        for (; i < n; ++i)                                                     \
            c[i] = a[i];                                                       \
        _mm_sfence();                                                          \
    }                                                                          \
    __attribute__((target(ISA))) static void add2_nt_##W(                      \
        double *c, double *d, const double *a, const double *b, size_t n,      \
        double s)                                                              \
    {                                                                          \
        const int pf = opcost_ceiling_prefetches();                            \
        const size_t lanes = sizeof(VEC) / sizeof(double);                     \
        const VEC vs = SET1(s);                                                \
        size_t i = 0;                                                          \
        for (; i < n && (((uintptr_t)(c + i) | (uintptr_t)(d + i)) &           \
                         (sizeof(VEC) - 1));                                   \
             ++i) {                                                            \
            c[i] = a[i] + b[i];                                                \
            d[i] = s * (a[i] + b[i]);                                          \
        }                                                                      \
        for (; i + 8 <= n; i += 8) {                                           \
            PREFETCH_AHEAD(a + i);                                             \
            PREFETCH_AHEAD(b + i);                                             \
            for (size_t k = 0; k < 8; k += lanes) {                            \
                const VEC h = ADD(LOAD(a + i + k), LOAD(b + i + k));           \
                STREAM(c + i + k, h);                                          \
                STREAM(d + i + k, MUL(vs, h));                                 \
            }                                                                  \
        }                                                                      \
        for (; i < n; ++i) {                                                   \
            c[i] = a[i] + b[i];                                                \
            d[i] = s * (a[i] + b[i]);                                          \
        }                                                                      \
        _mm_sfence();                                                          \
    }

WIDE_KERNELS(512, __m512d, _mm512_loadu_pd, _mm512_stream_pd, _mm512_add_pd,
             _mm512_mul_pd, _mm512_set1_pd, "avx512f")
WIDE_KERNELS(256, __m256d, _mm256_loadu_pd, _mm256_stream_pd, _mm256_add_pd,
             _mm256_mul_pd, _mm256_set1_pd, "avx2")

/* 512, 256 or 128 (SSE2): the widest this CPU runs, or less where a
 * test forced it (opcost_ceiling_force_width). */
static int forced_width;

static int stream_width(void)
{
    static int width;
    if (!width)
        width = __builtin_cpu_supports("avx512f") ? 512
                : __builtin_cpu_supports("avx2")  ? 256
                                                  : 128;
    return forced_width && forced_width < width ? forced_width : width;
}
#define WIDE_NT 1
#else
#define WIDE_NT 0
#endif

int opcost_ceiling_force_width(int bits)
{
#if WIDE_NT
    forced_width = bits;
    return stream_width();
#else
    (void)bits;
    return 128;
#endif
}

int opcost_ceiling_kernel_run(opcost_ceiling_kernel_id kernel, double *a,
                              double *b, double *c, double *d, size_t n,
                              double scalar)
{
#if WIDE_NT
    if (kernel == OPCOST_CEILING_COPY_NT || kernel == OPCOST_CEILING_ADD2_NT) {
        const int w = stream_width();
        const int copy = kernel == OPCOST_CEILING_COPY_NT;
        if (w == 512) {
            if (copy)
                copy_nt_512(c, a, n);
            else
                add2_nt_512(c, d, a, b, n, scalar);
            return 0;
        }
        if (w == 256) {
            if (copy)
                copy_nt_256(c, a, n);
            else
                add2_nt_256(c, d, a, b, n, scalar);
            return 0;
        }
    }
#endif
    switch (kernel) {
    case OPCOST_CEILING_COPY: copy_plain(c, a, n); return 0;
    case OPCOST_CEILING_TRIAD: triad_plain(a, b, c, n, scalar); return 0;
    case OPCOST_CEILING_ADD2: add2_plain(c, d, a, b, n, scalar); return 0;
    case OPCOST_CEILING_ADD2_IN_PLACE: add2_in_place(a, b, n, scalar); return 0;
#if HAVE_NT
    case OPCOST_CEILING_COPY_NT: copy_nt(c, a, n); return 0;
    case OPCOST_CEILING_TRIAD_NT: triad_nt(a, b, c, n, scalar); return 0;
    case OPCOST_CEILING_ADD2_NT: add2_nt(c, d, a, b, n, scalar); return 0;
#endif
    default: return -1;
    }
}

/* ---- Last-level cache size: the kernels' detection (one source). */
size_t opcost_llc_bytes(char *source, size_t len)
{
    return rowops_cpu_llc_bytes(source, len);
}

/* ---- The threaded probe. */
typedef struct probe {
    double *a, *b, *c, *d;
    int threads;
    int repeat; /* kernel calls per trial (small working sets) */
    pthread_barrier_t barrier;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int go; /* 0 wait, 1 run, -1 abort (a thread failed to start) */
    double seconds[OPCOST_CEILING_TRIALS][OPCOST_CEILING_KERNELS];
    int available[OPCOST_CEILING_KERNELS];
    double expect_a, expect_b, expect_c, expect_d;
} probe;

typedef struct worker {
    probe *p;
    size_t lo, hi;
    double max_rel_err;
    int64_t start_ns[OPCOST_CEILING_TRIALS][OPCOST_CEILING_KERNELS];
    int64_t end_ns[OPCOST_CEILING_TRIALS][OPCOST_CEILING_KERNELS];
    pthread_t tid;
} worker;

static double rel_err(double got, double want)
{
    return fabs(got - want) / fabs(want);
}

static void *work(void *arg)
{
    worker *w = arg;
    probe *p = w->p;
    pthread_mutex_lock(&p->mu);
    while (p->go == 0)
        pthread_cond_wait(&p->cv, &p->mu);
    const int go = p->go;
    pthread_mutex_unlock(&p->mu);
    if (go < 0)
        return NULL;
    const size_t n = w->hi - w->lo;
    double *a = p->a + w->lo, *b = p->b + w->lo, *c = p->c + w->lo;
    double *d = p->d + w->lo;
    /* First touch by the owner: its pages land on its NUMA node. */
    for (size_t i = 0; i < n; ++i) {
        a[i] = 1.0;
        b[i] = 2.0;
        c[i] = 0.0;
        d[i] = 0.0;
    }
    for (int t = 0; t < OPCOST_CEILING_TRIALS; ++t) {
        for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k) {
            if (!p->available[k])
                continue;
            pthread_barrier_wait(&p->barrier);
            w->start_ns[t][k] = opcost_now_ns();
            /* every kernel is idempotent: repeating it keeps the
             * recurrence */
            for (int r = 0; r < p->repeat; ++r)
                opcost_ceiling_kernel_run((opcost_ceiling_kernel_id)k, a, b, c,
                                          d, n, SCALAR);
            w->end_ns[t][k] = opcost_now_ns();
            pthread_barrier_wait(&p->barrier);
        }
    }
    /* STREAM's check: every element against the scalar recurrence. */
    double e = 0.0;
    for (size_t i = 0; i < n; ++i) {
        const double ea = rel_err(a[i], p->expect_a);
        const double eb = rel_err(b[i], p->expect_b);
        const double ec = rel_err(c[i], p->expect_c);
        const double ed = p->expect_d ? rel_err(d[i], p->expect_d) : 0.0;
        double m = ea > eb ? (ea > ec ? ea : ec) : (eb > ec ? eb : ec);
        m = ed > m || isnan(ed) ? ed : m;
        /* !(m <= e) also catches NaN. */
        if (!(m <= e))
            e = isnan(m) ? INFINITY : m;
    }
    w->max_rel_err = e;
    return NULL;
}

static void start(probe *p, int go)
{
    pthread_mutex_lock(&p->mu);
    p->go = go;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static const char *const kernel_names[OPCOST_CEILING_KERNELS] = {
    "copy", "triad", "copy_nt", "triad_nt", "add2", "add2_nt", "add2_in_place"};

static int is_nt(int k)
{
    return k == OPCOST_CEILING_COPY_NT || k == OPCOST_CEILING_TRIAD_NT ||
           k == OPCOST_CEILING_ADD2_NT;
}

static void fill_kernel_info(opcost_ceiling *out)
{
    for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k) {
        opcost_ceiling_kernel *ki = &out->k[k];
        const int triad =
            k == OPCOST_CEILING_TRIAD || k == OPCOST_CEILING_TRIAD_NT;
        const int in_place = k == OPCOST_CEILING_ADD2_IN_PLACE;
        const int add2 =
            k == OPCOST_CEILING_ADD2 || k == OPCOST_CEILING_ADD2_NT || in_place;
        const int nt = is_nt(k);
        ki->name = kernel_names[k];
        ki->available = !nt || HAVE_NT;
        ki->bytes_per_element = add2 ? 32 : triad ? 24 : 16;
        /* each output line is read first: one extra read per output (in
         * place: the lines were just read) */
        ki->wa_bytes_per_element =
            nt         ? 0
            : in_place ? ki->bytes_per_element
                       : ki->bytes_per_element + (add2 ? 16 : 8);
        ki->best_s = ki->avg_s = ki->gbps = ki->wa_gbps = NAN;
    }
}

static int run_probe(probe *p, worker *w, int threads, size_t n,
                     opcost_ceiling *out, char *err, size_t errlen)
{
    int created = 0, rc = 0;
    /* Slices are whole cache lines (8 doubles); the last takes the rest. */
    const size_t per = n / (size_t)threads / 8 * 8;
    for (int t = 0; t < threads; ++t) {
        w[t].p = p;
        w[t].lo = (size_t)t * per;
        w[t].hi = t == threads - 1 ? n : (size_t)(t + 1) * per;
        w[t].max_rel_err = 0.0;
        const int e = pthread_create(&w[t].tid, NULL, work, &w[t]);
        if (e) {
            snprintf(err, errlen, "threads: cannot start thread %d of %d: %s",
                     t + 1, threads, strerror(e));
            rc = -1;
            break;
        }
        ++created;
    }
    start(p, rc ? -1 : 1);
    for (int t = 0; t < created; ++t)
        pthread_join(w[t].tid, NULL);
    if (rc)
        return -1;
    for (int t = 0; t < OPCOST_CEILING_TRIALS; ++t) {
        for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k) {
            int64_t first = w[0].start_ns[t][k], last = w[0].end_ns[t][k];
            for (int i = 1; i < threads; ++i) {
                first =
                    w[i].start_ns[t][k] < first ? w[i].start_ns[t][k] : first;
                last = w[i].end_ns[t][k] > last ? w[i].end_ns[t][k] : last;
            }
            p->seconds[t][k] = (double)(last - first) * 1e-9;
        }
    }
    out->max_rel_err = 0.0;
    for (int t = 0; t < threads; ++t)
        if (!(w[t].max_rel_err <= out->max_rel_err))
            out->max_rel_err = w[t].max_rel_err;
    if (!(out->max_rel_err <= REL_TOL)) {
        snprintf(err, errlen,
                 "validation failed: final arrays differ from "
                 "the STREAM recurrence by %g (relative; limit %g)",
                 out->max_rel_err, REL_TOL);
        return -1;
    }
    return 0;
}

/* The scalar recurrence of the kernels in the order the probe runs them. */
static void expected_values(probe *p)
{
    double a = 1.0, b = 2.0, c = 0.0, d = 0.0;
    for (int t = 0; t < OPCOST_CEILING_TRIALS; ++t) {
        for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k) {
            if (!p->available[k])
                continue;
            if (k == OPCOST_CEILING_ADD2_IN_PLACE) {
                continue; /* a and b keep their values */
            } else if (k == OPCOST_CEILING_COPY ||
                       k == OPCOST_CEILING_COPY_NT) {
                c = a;
            } else if (k == OPCOST_CEILING_ADD2 ||
                       k == OPCOST_CEILING_ADD2_NT) {
                c = a + b;
                d = SCALAR * (a + b);
            } else {
                a = b + SCALAR * c;
            }
        }
    }
    p->expect_a = a;
    p->expect_b = b;
    p->expect_c = c;
    p->expect_d = d;
}

static void summarize(const probe *p, opcost_ceiling *out)
{
    out->best_gbps = 0.0;
    out->best_kernel = NULL;
    for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k) {
        opcost_ceiling_kernel *ki = &out->k[k];
        if (!ki->available)
            continue;
        double best = INFINITY, sum = 0.0;
        for (int t = 1; t < OPCOST_CEILING_TRIALS; ++t) {
            const double s = p->seconds[t][k];
            best = s < best ? s : best;
            sum += s;
        }
        ki->best_s = best;
        ki->avg_s = sum / (OPCOST_CEILING_TRIALS - 1);
        const double n = (double)out->elements * p->repeat;
        ki->gbps = ki->bytes_per_element * n / best * 1e-9;
        ki->wa_gbps = ki->wa_bytes_per_element
                          ? ki->wa_bytes_per_element * n / best * 1e-9
                          : NAN;
        if (ki->gbps > out->best_gbps || !out->best_kernel) {
            out->best_gbps = ki->gbps;
            out->best_kernel = ki->name;
        }
    }
}

/* One probe over the first n elements of the arrays: every available
 * kernel (only the ordinary-store ones when plain_only), each trial
 * `repeat` calls. Fills out's kernels and best. 0, or -1 with err. */
static int probe_at(double *const arrays[4], int threads, size_t n, int repeat,
                    int plain_only, opcost_ceiling *out, char *err,
                    size_t errlen)
{
    probe *p = calloc(1, sizeof *p);
    worker *w = calloc((size_t)threads, sizeof *w);
    if (!p || !w) {
        free(p);
        free(w);
        snprintf(err, errlen, "out of memory (%d threads)", threads);
        return -1;
    }
    p->a = arrays[0];
    p->b = arrays[1];
    p->c = arrays[2];
    p->d = arrays[3];
    p->threads = threads;
    p->repeat = repeat;
    out->elements = n;
    for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k)
        p->available[k] = out->k[k].available && !(plain_only && is_nt(k));
    expected_values(p);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    int rc = 0;
    const int e = pthread_barrier_init(&p->barrier, NULL, (unsigned)threads);
    if (e) {
        snprintf(err, errlen, "threads: cannot create a barrier for %d: %s",
                 threads, strerror(e));
        rc = -1;
    } else {
        rc = run_probe(p, w, threads, n, out, err, errlen);
        pthread_barrier_destroy(&p->barrier);
    }
    pthread_cond_destroy(&p->cv);
    pthread_mutex_destroy(&p->mu);
    if (rc == 0) {
        for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k)
            out->k[k].available = p->available[k];
        summarize(p, out);
    }
    free(p);
    free(w);
    return rc;
}

/* A mix's ceiling from a probe's kernels: copy for rows, add2 for fused,
 * add2 in place (ordinary stores only) for the fused op in place. */
static opcost_mix_ceiling mix_of(const opcost_ceiling *c, opcost_mix mix,
                                 size_t working_set)
{
    const int plain = mix == OPCOST_MIX_ROWS    ? OPCOST_CEILING_COPY
                      : mix == OPCOST_MIX_FUSED ? OPCOST_CEILING_ADD2
                                                : OPCOST_CEILING_ADD2_IN_PLACE;
    const int nt = mix == OPCOST_MIX_ROWS    ? OPCOST_CEILING_COPY_NT
                   : mix == OPCOST_MIX_FUSED ? OPCOST_CEILING_ADD2_NT
                                             : -1;
    opcost_mix_ceiling m;
    m.plain_gbps = c->k[plain].available ? c->k[plain].gbps : NAN;
    m.nt_gbps = nt >= 0 && c->k[nt].available ? c->k[nt].gbps : NAN;
    m.gbps = !(m.nt_gbps > m.plain_gbps) ? m.plain_gbps : m.nt_gbps;
    m.working_set = working_set;
    return m;
}

const char *opcost_level_name(opcost_level level)
{
    static const char *const names[] = {"l2", "l3", "dram"};
    return (unsigned)level < OPCOST_LEVELS ? names[level] : "?";
}

const char *opcost_mix_name(opcost_mix mix)
{
    static const char *const names[] = {"rows", "fused", "fused_in_place"};
    return (unsigned)mix < OPCOST_MIXES ? names[mix] : "?";
}

const opcost_mix_ceiling *opcost_ceiling_for(const opcost_ceiling *c,
                                             opcost_mix mix, int cold,
                                             double working_set_bytes,
                                             opcost_level *level)
{
    if ((unsigned)mix >= OPCOST_MIXES)
        return NULL;
    for (int l = cold ? OPCOST_LEVEL_DRAM : OPCOST_LEVEL_L2; l < OPCOST_LEVELS;
         ++l) {
        const int fits = l == OPCOST_LEVEL_DRAM ||
                         (c->level_bytes[l] &&
                          working_set_bytes <= (double)c->level_bytes[l]);
        if (fits && isfinite(c->mix[l][mix].gbps)) {
            *level = (opcost_level)l;
            return &c->mix[l][mix];
        }
    }
    return NULL;
}

int opcost_ceiling_measure(int threads, size_t llc_bytes_or_0,
                           opcost_ceiling *out, char *err, size_t errlen)
{
    const int64_t t_start = opcost_now_ns();
    if (threads < 1 || threads > OPCOST_CEILING_MAX_THREADS) {
        snprintf(err, errlen, "threads: must be in [1, %d] (got %d)",
                 OPCOST_CEILING_MAX_THREADS, threads);
        return -1;
    }
    if (!out) {
        snprintf(err, errlen, "out: must not be NULL");
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->threads = threads;
    out->trials = OPCOST_CEILING_TRIALS;
    if (llc_bytes_or_0) {
        out->llc_bytes = llc_bytes_or_0;
        snprintf(out->llc_source, sizeof out->llc_source, "caller");
    } else {
        out->llc_bytes =
            opcost_llc_bytes(out->llc_source, sizeof out->llc_source);
    }
    /* Four arrays of 4 x LLC each must fit in size_t. */
    if (out->llc_bytes > SIZE_MAX / 32) {
        snprintf(err, errlen, "llc_bytes: %zu is too large", out->llc_bytes);
        return -1;
    }
    /* Elements: 4 x LLC rounded up to whole cache lines, and at least a
     * line per thread. */
    size_t n = (4 * out->llc_bytes + 7) / 8;
    n = (n + 7) / 8 * 8;
    if (n < (size_t)threads * 8)
        n = (size_t)threads * 8;
    out->elements = n;
    out->array_bytes = n * sizeof(double);
    /* the cache levels: the run's cores' L2s (private per core), the LLC;
     * a level at least as large as the next one above it is skipped */
    const size_t l2 = llc_bytes_or_0 ? 0 : rowops_cpu_cache_level_bytes(2);
    out->level_bytes[OPCOST_LEVEL_L2] =
        l2 && l2 * (size_t)threads < out->llc_bytes ? l2 * (size_t)threads : 0;
    out->level_bytes[OPCOST_LEVEL_L3] = out->llc_bytes;
    out->level_bytes[OPCOST_LEVEL_DRAM] = 0;
    fill_kernel_info(out);
    for (int l = 0; l < OPCOST_LEVELS; ++l)
        for (int m = 0; m < OPCOST_MIXES; ++m)
            out->mix[l][m] = (opcost_mix_ceiling){NAN, NAN, NAN, 0};

    double *arrays[4] = {NULL, NULL, NULL, NULL};
    for (int i = 0; i < 4; ++i)
        arrays[i] = opcost_buffer_alloc(out->array_bytes);
    int rc = 0;
    if (!arrays[0] || !arrays[1] || !arrays[2] || !arrays[3]) {
        snprintf(err, errlen,
                 "cannot allocate 4 arrays of %zu bytes "
                 "(4 x LLC of %zu bytes)",
                 out->array_bytes, out->llc_bytes);
        rc = -1;
    }
    /* DRAM: every kernel once per trial over the whole arrays */
    if (rc == 0)
        rc = probe_at(arrays, threads, n, 1, 0, out, err, errlen);
    if (rc == 0)
        for (int m = 0; m < OPCOST_MIXES; ++m)
            out->mix[OPCOST_LEVEL_DRAM][m] =
                mix_of(out, (opcost_mix)m, 4 * out->array_bytes);
    /* each cache level: ordinary stores on half of it (four arrays),
     * repeated to about 64 MiB of traffic per trial */
    for (int l = OPCOST_LEVEL_L2; rc == 0 && l < OPCOST_LEVEL_DRAM; ++l) {
        if (!out->level_bytes[l])
            continue;
        size_t ln = out->level_bytes[l] / 2 / (4 * sizeof(double));
        ln = ln / 8 * 8;
        if (ln < (size_t)threads * 8)
            continue;
        opcost_ceiling lv = *out;
        const size_t per_trial = ln * 4 * sizeof(double);
        const int repeat = (int)(((size_t)64 << 20) / per_trial + 1);
        rc = probe_at(arrays, threads, ln, repeat, 1, &lv, err, errlen);
        for (int m = 0; rc == 0 && m < OPCOST_MIXES; ++m) {
            out->mix[l][m] = mix_of(&lv, (opcost_mix)m, per_trial);
            out->mix[l][m].nt_gbps = NAN;
        }
        if (rc == 0 && lv.max_rel_err > out->max_rel_err)
            out->max_rel_err = lv.max_rel_err;
    }
    for (int i = 0; i < 4; ++i)
        free(arrays[i]);
    out->seconds = opcost_seconds_since(t_start);
    return rc;
}

static double better(double a, double b)
{
    return !(b > a) ? a : b; /* NAN loses */
}

int opcost_probe_due(size_t done, size_t npoints)
{
    size_t every = npoints / 4;
    every = every < 1                        ? 1
            : every > OPCOST_PROBE_EVERY_MAX ? OPCOST_PROBE_EVERY_MAX
                                             : every;
    return done > 0 && done < npoints && done % every == 0;
}

void opcost_ceiling_merge(opcost_ceiling *c, const opcost_ceiling *other)
{
    for (int k = 0; k < OPCOST_CEILING_KERNELS; ++k) {
        c->k[k].gbps = better(c->k[k].gbps, other->k[k].gbps);
        c->k[k].wa_gbps = better(c->k[k].wa_gbps, other->k[k].wa_gbps);
    }
    for (int l = 0; l < OPCOST_LEVELS; ++l)
        for (int m = 0; m < OPCOST_MIXES; ++m) {
            opcost_mix_ceiling *x = &c->mix[l][m];
            const opcost_mix_ceiling *y = &other->mix[l][m];
            x->plain_gbps = better(x->plain_gbps, y->plain_gbps);
            x->nt_gbps = better(x->nt_gbps, y->nt_gbps);
            x->gbps = better(x->plain_gbps, x->nt_gbps);
        }
    if (other->best_gbps > c->best_gbps) {
        c->best_gbps = other->best_gbps;
        c->best_kernel = other->best_kernel;
    }
}

void opcost_ceiling_merge_mix(opcost_ceiling *c, opcost_level level,
                              opcost_mix mix, int streaming, double gbps)
{
    if ((unsigned)level >= OPCOST_LEVELS || (unsigned)mix >= OPCOST_MIXES)
        return;
    opcost_mix_ceiling *x = &c->mix[level][mix];
    if (streaming)
        x->nt_gbps = better(x->nt_gbps, gbps);
    else
        x->plain_gbps = better(x->plain_gbps, gbps);
    x->gbps = better(x->plain_gbps, x->nt_gbps);
}
