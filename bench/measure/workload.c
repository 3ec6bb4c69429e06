#include "workload.h"
#include "buffer.h"
#include "rowops_bridge.h"
#include "rowops_elem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ALIGN 64

/* Sets filled with their own random values; the others copy one of
 * them (random filling of a 4 x LLC rotation cost ~0.5 s a point). */
#define FILLED_SETS 8

static size_t round_up(size_t v)
{
    return (v + ALIGN - 1) / ALIGN * ALIGN;
}

rowops_tensor opcost_contiguous(void *data, rowops_dtype dtype, int64_t rows,
                                int64_t n)
{
    rowops_tensor t;
    memset(&t, 0, sizeof t);
    t.data = data;
    t.dtype = dtype;
    t.device = ROWOPS_DEVICE_CPU;
    t.rank = 2;
    t.sizes[0] = rows;
    t.sizes[1] = n;
    t.strides[0] = n;
    t.strides[1] = 1;
    return t;
}

/* Elements of storage an input of the layout needs (misaligned: +1). */
static int64_t storage_elems(opcost_layout layout, int64_t B, int64_t N)
{
    switch (layout) {
    case OPCOST_ROW_STRIDED: return (B - 1) * (N + 3) + N;
    case OPCOST_MISALIGNED: return B * N + 1;
    default: return B * N;
    }
}

static rowops_tensor input_view(void *base, rowops_dtype dt,
                                opcost_layout layout, int64_t B, int64_t N)
{
    rowops_tensor t = opcost_contiguous(base, dt, B, N);
    switch (layout) {
    case OPCOST_TRANSPOSED:
        t.strides[0] = 1;
        t.strides[1] = B;
        break;
    case OPCOST_ROW_STRIDED: t.strides[0] = N + 3; break;
    case OPCOST_MISALIGNED:
        t.data = (char *)base + rowops_dtype_size(dt);
        break;
    default: break;
    }
    return t;
}

/* xorshift64*: uniform magnitudes in [0.1, 2) with a random sign, never 0
 * (the tests' generator does the same). */
static double next_value(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    const uint64_t r = *s * 2685821657736338717ull;
    const double u = (double)(r >> 11) * (1.0 / 9007199254740992.0);
    const double mag = 0.1 + 1.9 * u;
    return (r & 1) ? -mag : mag;
}

static void fill(void *base, int64_t count, rowops_dtype dt, uint64_t *s)
{
    for (int64_t i = 0; i < count; ++i)
        rowops_store_d(base, i, dt, next_value(s));
}

/* Sets a point rotates through: when cold, enough that the inputs and
 * outputs of all of them span at least OPCOST_COLD_SPAN_LLC x the
 * last-level cache (what the DRAM ceiling's arrays span each), so a set's
 * data is out of every cache level when its turn comes again (at least 2
 * sets, at most OPCOST_MAX_SETS; one set already that large suffices);
 * warm: one. */
static size_t sets_for(double set_bytes, size_t llc_bytes, int cold)
{
    if (!cold)
        return 1;
    const double span = (double)OPCOST_COLD_SPAN_LLC * (double)llc_bytes;
    if (set_bytes >= span)
        return 1;
    double n = ceil(span / set_bytes);
    n = n < 2 ? 2 : n > OPCOST_MAX_SETS ? OPCOST_MAX_SETS : n;
    return (size_t)n;
}

/* A set's input and output bytes (in double: shape files may hold sizes
 * whose bytes overflow size_t). */
static void set_bytes(const opcost_case *c, double *set_in, double *set_out)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const double es = (double)rowops_dtype_size(c->dtype);
    const double elems = (double)c->B * ((double)c->N + 3) + 64;
    const double in_one = elems * es;
    *set_in =
        in_one * (fused ? 2 : 1) +
        (fused ? (double)c->N * (double)rowops_dtype_size(c->weight_dtype) : 0);
    *set_out = (double)c->B * (double)c->N * es * (fused ? 2 : 1);
}

double opcost_workload_sets(const opcost_case *c, size_t llc_bytes, int cold)
{
    double set_in, set_out;
    set_bytes(c, &set_in, &set_out);
    return (double)sets_for(set_in + set_out, llc_bytes, cold);
}

double opcost_workload_bytes(const opcost_case *c, size_t llc_bytes, int cold)
{
    double set_in, set_out;
    set_bytes(c, &set_in, &set_out);
    const double nsets = (double)sets_for(set_in + set_out, llc_bytes, cold);
    const double inputs = set_in * nsets;
    /* the kernel path's contiguous copies, its outputs, and the fresh
     * outputs of up to two PyTorch calls alive at once */
    return 2 * inputs + 3 * set_out * nsets;
}

int64_t opcost_case_bytes(const opcost_case *c)
{
    const int64_t es = (int64_t)rowops_dtype_size(c->dtype);
    const int64_t rs = c->dtype == ROWOPS_F64 ? 8 : 4;
    const int64_t elems = c->B * c->N;
    const rowops_op_info *o = rowops_op_info_of(c->op);
    const int64_t weight =
        o->weighted ? c->N * (int64_t)rowops_dtype_size(c->weight_dtype) : 0;
    return (o->row_inputs + o->row_outputs) * elems * es + weight + c->B * rs;
}

/* Where each set lies: its inputs (x, residual, weight) in one block of
 * set_in bytes, its outputs (out, residual_out, rstd) in one of set_out,
 * all sets' inputs one after another, then (out_offset) all outputs. */
typedef struct set_layout {
    size_t in_one, w_one, set_in, out_one, set_out;
    size_t nsets;
} set_layout;

static void layout_of(const opcost_case *c, size_t nsets, set_layout *L)
{
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const size_t es = rowops_dtype_size(c->dtype);
    L->in_one = round_up((size_t)storage_elems(c->layout, c->B, c->N) * es);
    L->w_one =
        fused ? round_up((size_t)c->N * rowops_dtype_size(c->weight_dtype)) : 0;
    L->set_in = L->in_one * (fused ? 2 : 1) + L->w_one;
    const size_t acc = c->dtype == ROWOPS_F64 ? 8 : 4;
    L->out_one = round_up((size_t)(c->B * c->N) * es);
    L->set_out = L->out_one * (fused ? 2 : 1) + round_up((size_t)c->B * acc);
    L->nsets = nsets;
}

/* The views of every set over w->in_mem and w->out_mem. */
static void build_views(opcost_workload *w, const set_layout *L)
{
    const opcost_case *c = &w->c;
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    const size_t acc = c->dtype == ROWOPS_F64 ? 8 : 4;
    for (size_t i = 0; i < L->nsets; ++i) {
        char *in = (char *)w->in_mem + i * L->set_in;
        char *out = (char *)w->out_mem + i * L->set_out;
        opcost_set *st = &w->sets[i];
        st->x = input_view(in, c->dtype, c->layout, c->B, c->N);
        st->out = opcost_contiguous(out, c->dtype, c->B, c->N);
        char *rstd = out + L->out_one;
        if (fused) {
            st->residual =
                input_view(in + L->in_one, c->dtype, c->layout, c->B, c->N);
            st->weight =
                opcost_contiguous(in + 2 * L->in_one, c->weight_dtype, 1, c->N);
            st->weight.rank = 1;
            st->weight.sizes[0] = c->N;
            st->weight.strides[0] = 1;
            st->residual_out =
                opcost_contiguous(out + L->out_one, c->dtype, c->B, c->N);
            rstd = out + 2 * L->out_one;
        }
        st->rstd = opcost_contiguous(rstd, acc == 8 ? ROWOPS_F64 : ROWOPS_F32,
                                     1, c->B);
        st->rstd.rank = 1;
        st->rstd.sizes[0] = c->B;
        st->rstd.strides[0] = 1;
    }
}

/* Random inputs (FILLED_SETS sets of their own, the others copies) and
 * output pages mapped now, with NaN bytes, not by a timed call. */
static void fill_sets(opcost_workload *w, const set_layout *L, uint64_t seed)
{
    const opcost_case *c = &w->c;
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    memset(w->out_mem, 0xFF, L->nsets * L->set_out);
    uint64_t s = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
    if (!s)
        s = 1;
    const int64_t se = storage_elems(c->layout, c->B, c->N);
    for (size_t i = 0; i < L->nsets; ++i) {
        char *in = (char *)w->in_mem + i * L->set_in;
        if (i >= FILLED_SETS) { /* the values matter only for verification */
            memcpy(in, (char *)w->in_mem + (i % FILLED_SETS) * L->set_in,
                   L->set_in);
            continue;
        }
        fill(in, se, c->dtype, &s);
        if (fused) {
            fill(in + L->in_one, se, c->dtype, &s);
            fill(in + 2 * L->in_one, c->N, c->weight_dtype, &s);
        }
    }
}

/* The parts every workload shares: the case, its sets' layout, whether it
 * is cold, the set descriptors. 0, or -1 with err. */
static int begin(opcost_workload *w, const opcost_case *c, size_t nsets,
                 size_t llc_bytes, int cold, set_layout *L, char *err,
                 size_t errlen)
{
    memset(w, 0, sizeof *w);
    w->c = *c;
    w->expected.set = -1;
    if (c->B < 1 || c->N < 1) {
        snprintf(err, errlen, "B and N must be >= 1 (got B = %lld, N = %lld)",
                 (long long)c->B, (long long)c->N);
        return -1;
    }
    layout_of(c, nsets, L);
    if (!nsets)
        L->nsets = nsets =
            sets_for((double)(L->set_in + L->set_out), llc_bytes, cold);
    w->nsets = (int)nsets;
    w->input_bytes = nsets * L->set_in;
    /* cold only when the rotation reached its span (OPCOST_MAX_SETS of a
     * tiny shape may not) */
    w->cache = cold && (double)(nsets * (L->set_in + L->set_out)) >=
                           (double)OPCOST_COLD_SPAN_LLC * (double)llc_bytes
                   ? OPCOST_CACHE_COLD
                   : OPCOST_CACHE_WARM;
    w->set_in_bytes = L->set_in;
    w->set_out_bytes = L->set_out;
    w->llc_bytes = llc_bytes;
    w->sets = calloc(nsets, sizeof *w->sets);
    if (!w->sets) {
        snprintf(err, errlen, "out of memory (%zu sets)", nsets);
        return -1;
    }
    return 0;
}

int opcost_workload_make(opcost_workload *w, const opcost_case *c,
                         size_t llc_bytes, int cold, uint64_t seed, char *err,
                         size_t errlen)
{
    const double need = opcost_workload_bytes(c, llc_bytes, cold);
    if (!(need < 0.5 * (double)SIZE_MAX)) {
        memset(w, 0, sizeof *w);
        snprintf(err, errlen,
                 "B = %lld, N = %lld: %.3g bytes of buffers "
                 "cannot be addressed",
                 (long long)c->B, (long long)c->N, need);
        return -1;
    }
    set_layout L;
    if (begin(w, c, 0, llc_bytes, cold, &L, err, errlen)) {
        opcost_workload_free(w);
        return -1;
    }
    w->in_mem = opcost_buffer_alloc(L.nsets * L.set_in);
    /* Each set's outputs of its own: cold, they are out of every cache
     * when the set's turn comes, as its inputs are (docs/measurement.md,
     * "Cold that is cold"). */
    w->out_mem = opcost_buffer_alloc(L.nsets * L.set_out);
    if (!w->in_mem || !w->out_mem) {
        snprintf(err, errlen,
                 "cannot allocate %zu input sets of %zu + %zu bytes "
                 "(B = %lld, N = %lld)",
                 L.nsets, L.set_in, L.set_out, (long long)c->B,
                 (long long)c->N);
        opcost_workload_free(w);
        return -1;
    }
    w->owns_memory = 1;
    fill_sets(w, &L, seed);
    build_views(w, &L);
    return 0;
}

/* The shared block's room for a path's per-set scratch: the contiguous
 * copies of a set's row inputs (the kernel path's, for a layout it does
 * not take as it is). */
static size_t scratch_per_set(const opcost_case *c)
{
    const size_t es = rowops_dtype_size(c->dtype);
    const int fused = c->op == ROWOPS_OP_FUSED_ADD_RMS_NORM;
    return c->layout == OPCOST_CONTIGUOUS
               ? 0
               : round_up((size_t)(c->B * c->N) * es) * (fused ? 2 : 1);
}

size_t opcost_workload_shared_bytes(const opcost_case *c, size_t llc_bytes,
                                    int cold, size_t *nsets)
{
    set_layout L;
    layout_of(c, 0, &L);
    *nsets = sets_for((double)(L.set_in + L.set_out), llc_bytes, cold);
    return round_up(*nsets * L.set_in) + round_up(*nsets * L.set_out) +
           *nsets * scratch_per_set(c);
}

int opcost_workload_attach(opcost_workload *w, const opcost_case *c,
                           size_t nsets, size_t llc_bytes, int cold, void *mem,
                           int fill, uint64_t seed, char *err, size_t errlen)
{
    set_layout L;
    if (begin(w, c, nsets, llc_bytes, cold, &L, err, errlen)) {
        opcost_workload_free(w);
        return -1;
    }
    w->in_mem = mem;
    w->out_mem = (char *)mem + round_up(nsets * L.set_in);
    w->shared_scratch = (char *)w->out_mem + round_up(nsets * L.set_out);
    w->shared_scratch_per_set = scratch_per_set(c);
    if (fill)
        fill_sets(w, &L, seed);
    build_views(w, &L);
    return 0;
}

/* t's data moved from the host block at host to the device block at dev. */
static void rebase(rowops_tensor *t, const void *host, void *dev)
{
    if (!t->data)
        return;
    t->data = (char *)dev + ((const char *)t->data - (const char *)host);
    t->device = ROWOPS_DEVICE_CUDA;
}

int opcost_workload_to_device(opcost_workload *w, int cuda_arch, char *err,
                              size_t errlen)
{
    const size_t in = w->set_in_bytes * (size_t)w->nsets;
    w->host_sets = malloc((size_t)w->nsets * sizeof *w->host_sets);
    if (!w->host_sets) {
        snprintf(err, errlen, "out of memory (host sets)");
        return -1;
    }
    char e[512];
    w->dev_in = rowops_bridge_cuda_alloc(in, e, sizeof e);
    w->dev_out = w->dev_in
                     ? rowops_bridge_cuda_alloc(
                           w->set_out_bytes * (size_t)w->nsets, e, sizeof e)
                     : NULL;
    if (!w->dev_in || !w->dev_out ||
        rowops_bridge_cuda_copy(w->dev_in, w->in_mem, in,
                                ROWOPS_BRIDGE_TO_DEVICE, e, sizeof e)) {
        snprintf(err, errlen, "cannot place %zu + %zu bytes on the GPU: %s", in,
                 w->set_out_bytes, e);
        return -1;
    }
    memcpy(w->host_sets, w->sets, (size_t)w->nsets * sizeof *w->sets);
    for (int i = 0; i < w->nsets; ++i) {
        opcost_set *s = &w->sets[i];
        rebase(&s->x, w->in_mem, w->dev_in);
        rebase(&s->residual, w->in_mem, w->dev_in);
        rebase(&s->weight, w->in_mem, w->dev_in);
        rebase(&s->out, w->out_mem, w->dev_out);
        rebase(&s->residual_out, w->out_mem, w->dev_out);
        rebase(&s->rstd, w->out_mem, w->dev_out);
    }
    w->cuda = 1;
    w->cuda_arch = cuda_arch;
    return 0;
}

void opcost_workload_free(opcost_workload *w)
{
    free(w->expected.out);
    free(w->expected.h);
    free(w->expected.rstd);
    rowops_bridge_cuda_free(w->dev_in);
    rowops_bridge_cuda_free(w->dev_out);
    free(w->host_sets);
    free(w->sets);
    for (int i = 0; i < w->nscratch; ++i)
        if (w->scratch[i].owned)
            free(w->scratch[i].mem);
    if (w->owns_memory) {
        free(w->in_mem);
        free(w->out_mem);
    }
    memset(w, 0, sizeof *w);
}

static rowops_call call_of(const opcost_workload *w, const opcost_set *s)
{
    rowops_call call;
    memset(&call, 0, sizeof call);
    call.op = w->c.op;
    call.x = s->x;
    call.out = s->out;
    call.rstd = s->rstd;
    call.eps = w->c.eps;
    if (w->c.op == ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        call.residual = s->residual;
        call.weight = s->weight;
        call.residual_out = s->residual_out;
    }
    call.cuda_arch = w->cuda ? w->cuda_arch : 0;
    return call;
}

rowops_call opcost_workload_call(const opcost_workload *w, int set)
{
    return call_of(w, &w->sets[set]);
}

rowops_call opcost_workload_host_call(const opcost_workload *w, int set)
{
    return call_of(w, w->host_sets ? &w->host_sets[set] : &w->sets[set]);
}

void opcost_workload_poison_outputs(opcost_workload *w)
{
    if (w->cuda) { /* every output lies in dev_out */
        char e[256];
        rowops_bridge_cuda_memset(
            w->dev_out, 0xFF, w->set_out_bytes * (size_t)w->nsets, e, sizeof e);
        return;
    }
    for (int i = 0; i < (w->nsets ? 1 : 0); ++i) { /* one shared set */
        const opcost_set *s = &w->sets[i];
        const size_t es = rowops_dtype_size(w->c.dtype);
        const size_t n = (size_t)(w->c.B * w->c.N) * es;
        memset(s->out.data, 0xFF, n);
        if (s->residual_out.data)
            memset(s->residual_out.data, 0xFF, n);
        memset(s->rstd.data, 0xFF,
               (size_t)w->c.B * rowops_dtype_size(s->rstd.dtype));
    }
}

void *opcost_workload_scratch(opcost_workload *w, size_t bytes_per_set)
{
    const size_t per = round_up(bytes_per_set);
    const int k = w->nscratch;
    if (k >= (int)(sizeof w->scratch / sizeof w->scratch[0]))
        return NULL;
    /* an attached workload's block has room for one path's (opcost ab:
     * both sides then copy into the same pages) */
    const int shared = w->shared_scratch && per <= w->shared_scratch_per_set;
    void *p = shared ? w->shared_scratch
                     : opcost_buffer_alloc(per * (size_t)w->nsets);
    if (!p)
        return NULL;
    w->scratch[k].mem = p;
    w->scratch[k].per_set = shared ? w->shared_scratch_per_set : per;
    w->scratch[k].owned = !shared;
    w->nscratch = k + 1;
    if (shared)
        w->shared_scratch = NULL; /* taken */
    return p;
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("clflushopt"))) static void flush_opt(const char *p,
                                                            size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        _mm_clflushopt((void *)(p + i));
}

static void flush_lines(const void *p, size_t n)
{
    static int opt = -1;
    if (opt < 0)
        opt = __builtin_cpu_supports("clflushopt");
    const char *c = (const char *)((uintptr_t)p & ~(uintptr_t)63);
    n += (size_t)((const char *)p - c);
    if (opt) {
        flush_opt(c, n);
        return;
    }
    for (size_t i = 0; i < n; i += 64)
        _mm_clflush(c + i);
}

static void flush_fence(void)
{
    _mm_mfence();
}
#else
static void flush_lines(const void *p, size_t n)
{
    (void)p, (void)n;
}

static void flush_fence(void) {}
#endif

void opcost_workload_flush_any(const opcost_workload *w, int first, int count)
{
    if (w->cuda || w->cache != OPCOST_CACHE_COLD || w->nsets < 1)
        return;
    if (count > w->nsets)
        count = w->nsets;
    for (int k = 0; k < count; ++k) {
        const size_t i = (size_t)((first + k) % w->nsets);
        flush_lines((const char *)w->in_mem + i * w->set_in_bytes,
                    w->set_in_bytes);
        flush_lines((const char *)w->out_mem + i * w->set_out_bytes,
                    w->set_out_bytes);
        for (int j = 0; j < w->nscratch; ++j)
            flush_lines((const char *)w->scratch[j].mem +
                            i * w->scratch[j].per_set,
                        w->scratch[j].per_set);
    }
    flush_fence();
}

void opcost_workload_flush(const opcost_workload *w, int first, int count)
{
    /* a set of a sixteenth of the cache or more: the sets a member is
     * behind another's are mostly out of it already, and flushing them
     * would cost more than the calls */
    if ((double)(w->set_in_bytes + w->set_out_bytes) * 16 >=
        (double)w->llc_bytes)
        return;
    opcost_workload_flush_any(w, first, count);
}
