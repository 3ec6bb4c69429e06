#include "variants.h"
#include "cpu_features.h"
#include "record_function_tracer.h"
#include "rowops_bridge.h"

#include <stdio.h>
#include <string.h>

const opcost_variant opcost_variant_auto = {
    "auto",
    ROWOPS_IMPL_COUNT,
    NULL,
    0,
    "what the eligibility function picks",
    0,
    NULL};

static const opcost_variant variants[] = {
    {"cpu_fast_avx512", ROWOPS_IMPL_CPU_FAST_AVX512, rowops_cpu_fast_avx512, 1,
     "AVX-512 rows, pipelined passes, ordinary stores", 0, NULL},
    {"cpu_fast_avx512_nt", ROWOPS_IMPL_CPU_FAST_AVX512_NT,
     rowops_cpu_fast_avx512_nt, 1,
     "the same with non-temporal stores (outputs beyond the LLC)", 0, NULL},
    {"cpu_fast_avx2", ROWOPS_IMPL_CPU_FAST_AVX2, rowops_cpu_fast_avx2, 1,
     "AVX2 rows, pipelined passes, ordinary stores", 0, NULL},
    {"cpu_fast_avx2_nt", ROWOPS_IMPL_CPU_FAST_AVX2_NT, rowops_cpu_fast_avx2_nt,
     1, "the same with non-temporal stores (outputs beyond the LLC)", 0, NULL},
    {"cpu_colmajor_avx2", ROWOPS_IMPL_CPU_COLMAJOR_AVX2,
     rowops_cpu_colmajor_avx2, 2,
     "AVX2 tiles of column-major (transposed) rows, row-major outputs", 0,
     NULL},
    {"cpu_fast_portable", ROWOPS_IMPL_CPU_FAST_PORTABLE,
     rowops_cpu_fast_portable, 1, "plain C rows the compiler vectorizes", 0,
     NULL},
    {"cpu_strided", ROWOPS_IMPL_CPU_STRIDED, rowops_cpu_strided, 0,
     "any strides, scalar", 0, NULL},
    {"cuda_fast", ROWOPS_IMPL_CUDA_FAST, NULL, 3,
     "CUDA: 16-byte vectors, the row on chip (--device cuda)", 1, NULL},
    {"cuda_strided", ROWOPS_IMPL_CUDA_STRIDED, NULL, 0,
     "CUDA: any strides (--device cuda)", 1, NULL},
    {"triton", ROWOPS_IMPL_COUNT, NULL, 4,
     "Triton: rowops.triton's kernel, the fused op (--device cuda)", 1,
     "triton"},
};

size_t opcost_variant_count(void)
{
    return sizeof variants / sizeof variants[0];
}

const opcost_variant *opcost_variant_at(size_t i)
{
    return i < opcost_variant_count() ? &variants[i] : NULL;
}

const opcost_variant *opcost_variant_find(const char *name)
{
    if (strcmp(name, "auto") == 0)
        return &opcost_variant_auto;
    for (size_t i = 0; i < opcost_variant_count(); ++i)
        if (strcmp(variants[i].name, name) == 0)
            return &variants[i];
    return NULL;
}

opcost_cpu_kernel opcost_cpu_kernel_of(rowops_impl impl)
{
    for (size_t i = 0; i < opcost_variant_count(); ++i)
        if (variants[i].impl == impl)
            return variants[i].kernel;
    return NULL;
}

typedef struct rows_task {
    opcost_cpu_kernel kernel;
    const rowops_call *call;
} rows_task;

static void run_rows(void *ctx, int64_t begin, int64_t end)
{
    const rows_task *t = ctx;
    t->kernel(t->call, begin, end);
}

void opcost_run_cpu_kernel(opcost_cpu_kernel kernel, const rowops_call *call)
{
    rows_task t = {kernel, call};
    const int64_t rows = rowops_tensor_rows(&call->x);
    const int64_t n = call->x.sizes[call->x.rank - 1];
    const int64_t t0 = opcost_own_scope_begin();
    rowops_bridge_parallel_for(rows, rowops_cpu_grain_rows(n), run_rows, &t);
    opcost_own_scope_end(OPCOST_EVENT_KERNEL_OURS, "rowops kernel (C caller)",
                         t0);
}

static int is_avx512(rowops_impl impl)
{
    return impl == ROWOPS_IMPL_CPU_FAST_AVX512 ||
           impl == ROWOPS_IMPL_CPU_FAST_AVX512_NT;
}

static int is_avx2(rowops_impl impl)
{
    return impl == ROWOPS_IMPL_CPU_FAST_AVX2 ||
           impl == ROWOPS_IMPL_CPU_FAST_AVX2_NT ||
           impl == ROWOPS_IMPL_CPU_COLMAJOR_AVX2 || is_avx512(impl);
}

int opcost_variant_admits(const opcost_variant *v, const rowops_call *call,
                          char *why, size_t len)
{
    if (v == &opcost_variant_auto)
        return 1;
    const int on_gpu = call->x.device == ROWOPS_DEVICE_CUDA;
    if (v->cuda != on_gpu) {
        snprintf(why, len, "%s is a %s kernel; this run is on the %s", v->name,
                 v->cuda ? "CUDA" : "CPU", on_gpu ? "GPU" : "CPU");
        return 0;
    }
    if (!v->fast)
        return 1;
    const rowops_choice c = rowops_choose(call);
    if (v->fast == 4) { /* the kernel path hands it contiguous copies */
        if (call->op == ROWOPS_OP_FUSED_ADD_RMS_NORM)
            return 1;
        snprintf(why, len, "%s: the fused op only", v->name);
        return 0;
    }
    if (v->fast == 3) {
        if (c.impl == ROWOPS_IMPL_CUDA_FAST)
            return 1;
        snprintf(why, len, "%s not eligible: %s", v->name, c.reason);
        return 0;
    }
    const int row_major = c.impl == ROWOPS_IMPL_CPU_FAST_AVX2 ||
                          c.impl == ROWOPS_IMPL_CPU_FAST_AVX2_NT ||
                          is_avx512(c.impl) ||
                          c.impl == ROWOPS_IMPL_CPU_FAST_PORTABLE;
    const int col_major = c.impl == ROWOPS_IMPL_CPU_COLMAJOR_AVX2;
    if (v->fast == 1 ? !row_major : !col_major) {
        snprintf(why, len, "%s not eligible: %s", v->name, c.reason);
        return 0;
    }
    if (is_avx2(v->impl) && !is_avx2(c.impl)) {
        snprintf(why, len, "%s needs AVX2+FMA+F16C: %s", v->name, c.reason);
        return 0;
    }
    if (is_avx512(v->impl) && !is_avx512(c.impl)) {
        snprintf(why, len, "%s needs AVX-512 F+BW: %s", v->name, c.reason);
        return 0;
    }
    return 1;
}
