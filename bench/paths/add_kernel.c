/* `add-kernel`: calibration, not the op. h = x + residual as a bare C loop
 * (compiled for AVX-512 (x86-64-v4), AVX2 and the baseline, the best picked
 * at load time, as PyTorch's own CPU kernels are), split over PyTorch's
 * threads with torch's elementwise grain, into the
 * set's residual_out: the add's arithmetic alone, as `kernel` is the op's.
 * `torch-add-cpp` / `torch-add-python` minus this is what PyTorch's own
 * smallest op pays per call beyond its arithmetic, the yardstick of
 * `eager-cpp` / `eager-python` minus `kernel`. Contiguous float32 and
 * bfloat16 inputs of the fused op only. */
#include "path.h"
#include "record_function_tracer.h"
#include "rowops_bridge.h"
#include "rowops_half.h"

#include <stdio.h>
#include <string.h>

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
add_f32(const float *restrict x, const float *restrict r, float *restrict h,
        int64_t n)
{
    for (int64_t i = 0; i < n; ++i)
        h[i] = x[i] + r[i];
}

/* rowops_f32_to_bf16 written branch-free, so the loop vectorizes. */
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) static void
add_bf16(const uint16_t *restrict x, const uint16_t *restrict r,
         uint16_t *restrict h, int64_t n)
{
    for (int64_t i = 0; i < n; ++i) {
        const uint32_t u = rowops_f32_bits(rowops_bf16_to_f32(x[i]) +
                                           rowops_bf16_to_f32(r[i]));
        const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
        const uint32_t quiet = (u >> 16) | 0x40u;
        h[i] = (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? quiet : rounded);
    }
}

static int add_prepare(opcost_path_run *r, char *why, size_t len)
{
    const opcost_case *c = &r->w->c;
    if (c->op != ROWOPS_OP_FUSED_ADD_RMS_NORM) {
        snprintf(why, len, "add calibration: fused_add_rms_norm only");
        return 1;
    }
    if (c->layout != OPCOST_CONTIGUOUS ||
        (c->dtype != ROWOPS_F32 && c->dtype != ROWOPS_BF16)) {
        snprintf(why, len,
                 "add calibration: contiguous float32 or bfloat16 only");
        return 1;
    }
    snprintf(r->dispatch_path, sizeof r->dispatch_path, "C loop");
    return 0;
}

typedef struct add_task {
    const opcost_set *set;
    int f32;
} add_task;

static void add_range(void *ctx, int64_t begin, int64_t end)
{
    const add_task *t = ctx;
    const opcost_set *s = t->set;
    if (t->f32)
        add_f32((const float *)s->x.data + begin,
                (const float *)s->residual.data + begin,
                (float *)s->residual_out.data + begin, end - begin);
    else
        add_bf16((const uint16_t *)s->x.data + begin,
                 (const uint16_t *)s->residual.data + begin,
                 (uint16_t *)s->residual_out.data + begin, end - begin);
}

/* PyTorch's own grain for elementwise kernels (at::internal::GRAIN_SIZE):
 * the add splits across threads where torch.add does. */
#define TORCH_GRAIN 32768

static int add_run(opcost_path_run *r, int set, char *err, size_t len)
{
    (void)err, (void)len;
    add_task t = {&r->w->sets[set], r->w->c.dtype == ROWOPS_F32};
    const int64_t t0 = opcost_own_scope_begin();
    rowops_bridge_parallel_for(r->w->c.B * r->w->c.N, TORCH_GRAIN, add_range,
                               &t);
    opcost_own_scope_end(OPCOST_EVENT_KERNEL_OTHER, "add loop (C)", t0);
    return 0;
}

static int add_verify(opcost_path_run *r, int set, char *why, size_t len)
{
    opcost_outputs o;
    memset(&o, 0, sizeof o);
    o.residual_out = r->w->sets[set].residual_out; /* h only */
    return opcost_verify_outputs(r->w, set, &o, why, len);
}

static void add_release(opcost_path_run *r)
{
    (void)r;
}

const opcost_path opcost_path_add_kernel = {
    .name = "add-kernel",
    .devices = OPCOST_ON_CPU,
    .description = "calibration: h = x + residual as a bare C loop into a "
                   "buffer (the add's arithmetic alone); fused op, "
                   "contiguous float32/bfloat16 only",
    .takes_variants = 0,
    .needs_torch = 1, /* PyTorch's thread pool, as torch.add uses it */
    .calibration = 1,
    .named_only = 1,
    .prepare = add_prepare,
    .run = add_run,
    .verify = add_verify,
    .convert = NULL,
    .release = add_release,
};
