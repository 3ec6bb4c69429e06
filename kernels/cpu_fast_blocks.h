/* The fast kernels' block functions, written once over the width layer
 * (cpu_vec16.h) for every vector width: pass 1 and pass 2 of one
 * 32-element block per dtype, and the FAST_* names the row pipeline
 * (cpu_fast_pipeline.h) is instantiated with, and its drivers for every
 * dtype. Include once, after defining ROWOPS_VEC16_BITS; then
 * DEFINE_FAST_ROWS makes the entry points.
 *
 * p1: reads x (and r), forms h, keeps the block's h at sd (if sd: its
 * place in the scratch row) and accumulates its squares; without sd (the
 * two-pass driver) it stores h itself, bfloat16 rounded keeping NaN. With a
 * scratch row bfloat16 pass 1 writes nothing: its rounding skips NaN
 * handling, so h waits in the scratch row and a row whose sum is not finite
 * is redone by the strided kernel from intact inputs (cpu_fast_pipeline.h). p2:
 * given the block's h, stores h (if h) and out, each output's 64 bytes in
 * consecutive stores: streamed halves of a line interleaved with the other
 * output's left write-combining buffers half full (fused bfloat16 at 256 MiB, 2
 * threads, AVX2: 13.8 GB/s against 27.5 with whole lines, paired runs).
 * src_mem: the block's h for pass 2 without a scratch row. */
#ifndef ROWOPS_CPU_FAST_BLOCKS_H
#define ROWOPS_CPU_FAST_BLOCKS_H

#include "cpu_fast_pipeline.h"
#include "cpu_vec16.h"

/* ---- bfloat16 ------------------------------------------------------------ */

/* The weight of a 32-element block in the bfloat16 order. */
static inline void load32_w_bf16_order(const row_ctx *k, int64_t i, vec16 *lo,
                                       vec16 *hi)
{
    if (k->w_f32)
        v16_load32_f32_bf16_order((const float *)k->w + i, lo, hi);
    else
        v16_load32_bf16((const uint16_t *)k->w + i, lo, hi);
}

/* h of a block, rounded to bfloat16, in the bfloat16 order. */
static inline void h32_bf16(const void *x, const void *r, int64_t i, vec16 *lo,
                            vec16 *hi)
{
    v16_load32_bf16((const uint16_t *)x + i, lo, hi);
    if (r) {
        vec16 rlo, rhi;
        v16_load32_bf16((const uint16_t *)r + i, &rlo, &rhi);
        *lo = v16_round_bf16(v16_add(*lo, rlo));
        *hi = v16_round_bf16(v16_add(*hi, rhi));
    }
}

#define PREFETCH_BLOCK_bf16(P, x, r, i) P(x, r, (i)*2) /* one line */
static inline void p1_bf16(const row_ctx *k, const void *x, const void *r,
                           void *h, float *sd, int64_t i, vec16 *a0, vec16 *a1)
{
    vec16 lo, hi;
    if (r && !sd) { /* h stored now: rounded keeping NaN */
        vec16 rlo, rhi;
        v16_load32_bf16((const uint16_t *)x + i, &lo, &hi);
        v16_load32_bf16((const uint16_t *)r + i, &rlo, &rhi);
        lo = v16_round_bf16_nan(v16_add(lo, rlo));
        hi = v16_round_bf16_nan(v16_add(hi, rhi));
        v16_store32_bf16((uint16_t *)h + i, lo, hi, k->stream);
    } else {
        h32_bf16(x, r, i, &lo, &hi);
    }
    if (sd) {
        v16_store(sd, lo);
        v16_store(sd + 16, hi);
    }
    *a0 = v16_fmadd(lo, lo, *a0);
    *a1 = v16_fmadd(hi, hi, *a1);
}

static inline void p2_bf16(const row_ctx *k, vec16 lo, vec16 hi, void *h,
                           void *out, int64_t i, vec16 rv)
{
    if (h)
        v16_store32_bf16((uint16_t *)h + i, lo, hi, k->stream);
    lo = v16_mul(lo, rv);
    hi = v16_mul(hi, rv);
    if (k->w) {
        vec16 wlo, whi;
        load32_w_bf16_order(k, i, &wlo, &whi);
        lo = v16_mul(lo, wlo);
        hi = v16_mul(hi, whi);
    }
    v16_store32_bf16_round((uint16_t *)out + i, lo, hi, k->stream);
}

/* Without a scratch row pass 1 stored h: read it (or x) back. */
static inline void src_mem_bf16(const void *x, const void *r, const void *h,
                                int64_t i, vec16 *lo, vec16 *hi)
{
    v16_load32_bf16((const uint16_t *)(r ? h : x) + i, lo, hi);
}

/* ---- float16 (F16C), natural order --------------------------------------- */

static inline vec16 load16_w_f16(const row_ctx *k, int64_t i)
{
    return k->w_f32 ? v16_loadu((const float *)k->w + i)
                    : v16_load_f16((const uint16_t *)k->w + i);
}

#define PREFETCH_BLOCK_f16(P, x, r, i) P(x, r, (i)*2)
static inline void p1_f16(const row_ctx *k, const void *x, const void *r,
                          void *h, float *sd, int64_t i, vec16 *a0, vec16 *a1)
{
    const uint16_t *xp = (const uint16_t *)x + i;
    vec16 a = v16_load_f16(xp), b = v16_load_f16(xp + 16);
    if (r) {
        const uint16_t *rp = (const uint16_t *)r + i;
        const half16 ha = v16_to_f16(v16_add(a, v16_load_f16(rp)));
        const half16 hb = v16_to_f16(v16_add(b, v16_load_f16(rp + 16)));
        if (!sd)
            v16_store32_f16((uint16_t *)h + i, ha, hb, k->stream);
        a = v16_from_f16(ha);
        b = v16_from_f16(hb);
    }
    if (sd) {
        v16_store(sd, a);
        v16_store(sd + 16, b);
    }
    *a0 = v16_fmadd(a, a, *a0);
    *a1 = v16_fmadd(b, b, *a1);
}

static inline void p2_f16(const row_ctx *k, vec16 a, vec16 b, void *h,
                          void *out, int64_t i, vec16 rv)
{
    if (h) /* h is float16-exact: the conversion back is too */
        v16_store32_f16((uint16_t *)h + i, v16_to_f16(a), v16_to_f16(b),
                        k->stream);
    a = v16_mul(a, rv);
    b = v16_mul(b, rv);
    if (k->w) {
        a = v16_mul(a, load16_w_f16(k, i));
        b = v16_mul(b, load16_w_f16(k, i + 16));
    }
    v16_store32_f16((uint16_t *)out + i, v16_to_f16(a), v16_to_f16(b),
                    k->stream);
}

/* In place, r is h after pass 1: read h (or x) back. */
static inline void src_mem_f16(const void *x, const void *r, const void *h,
                               int64_t i, vec16 *a, vec16 *b)
{
    const uint16_t *p = (const uint16_t *)(r ? h : x) + i;
    *a = v16_load_f16(p);
    *b = v16_load_f16(p + 16);
}

/* ---- float32 ------------------------------------------------------------- */

#define PREFETCH_BLOCK_f32(P, x, r, i)                                         \
    do { /* two lines */                                                       \
        P(x, r, (i)*4);                                                        \
        P(x, r, (i)*4 + 64);                                                   \
    } while (0)
static inline void p1_f32(const row_ctx *k, const void *x, const void *r,
                          void *h, float *sd, int64_t i, vec16 *a0, vec16 *a1)
{
    const float *xp = (const float *)x + i;
    vec16 a = v16_loadu(xp), b = v16_loadu(xp + 16);
    if (r) {
        const float *rp = (const float *)r + i;
        a = v16_add(a, v16_loadu(rp));
        b = v16_add(b, v16_loadu(rp + 16));
        if (!sd) {
            v16_store_f32((float *)h + i, a, k->stream);
            v16_store_f32((float *)h + i + 16, b, k->stream);
        }
    }
    if (sd) {
        v16_store(sd, a);
        v16_store(sd + 16, b);
    }
    *a0 = v16_fmadd(a, a, *a0);
    *a1 = v16_fmadd(b, b, *a1);
}

static inline void p2_f32(const row_ctx *k, vec16 a, vec16 b, void *h,
                          void *out, int64_t i, vec16 rv)
{
    if (h) {
        v16_store_f32((float *)h + i, a, k->stream);
        v16_store_f32((float *)h + i + 16, b, k->stream);
    }
    a = v16_mul(a, rv);
    b = v16_mul(b, rv);
    if (k->w) {
        const float *w = (const float *)k->w + i;
        a = v16_mul(a, v16_loadu(w));
        b = v16_mul(b, v16_loadu(w + 16));
    }
    v16_store_f32((float *)out + i, a, k->stream);
    v16_store_f32((float *)out + i + 16, b, k->stream);
}

static inline void src_mem_f32(const void *x, const void *r, const void *h,
                               int64_t i, vec16 *a, vec16 *b)
{
    const float *p = (const float *)(r ? h : x) + i;
    *a = v16_loadu(p);
    *b = v16_loadu(p + 16);
}

/* ---- what the row pipeline is instantiated with -------------------------- */

#define FAST_VEC vec16
#define FAST_BLOCK 32
#define FAST_ZERO() v16_zero()
#define FAST_SET1(f) v16_set1(f)
#define FAST_LOAD(p) v16_load(p)
#define FAST_HSUM2(a, b) v16_hsum2(a, b)

DEFINE_DRIVERS(bf16, ROWOPS_BF16, , prefetch_t1)
DEFINE_DRIVERS(f16, ROWOPS_F16, , prefetch_t1)
DEFINE_DRIVERS(f32, ROWOPS_F32, , prefetch_t1)
DEFINE_DRIVERS(bf16, ROWOPS_BF16, _nta, prefetch_nta)
DEFINE_DRIVERS(f16, ROWOPS_F16, _nta, prefetch_nta)
DEFINE_DRIVERS(f32, ROWOPS_F32, _nta, prefetch_nta)
DEFINE_TWO_PASS(f32, ROWOPS_F32, _np, prefetch_none) /* the hot-row form */

#endif
