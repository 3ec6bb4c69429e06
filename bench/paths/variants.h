/* The kernel variants the `kernel` path can time (--variants): every
 * kernel of kernels/kernel_table.def but the reference, and the Python
 * kernels listed in variants.c. */
#ifndef OPCOST_VARIANTS_H
#define OPCOST_VARIANTS_H

#include "rowops.h"

#include <stddef.h>

typedef void (*opcost_cpu_kernel)(const rowops_call *call, int64_t row_begin,
                                  int64_t row_end);

/* A Python kernel that takes the fused op in any layout (contiguous copies
 * from the kernel path). */
#define OPCOST_VARIANT_FUSED_ANY 4

typedef struct opcost_variant {
    const char *name; /* rowops_impl_name(impl), or "auto" */
    rowops_impl impl;
    opcost_cpu_kernel kernel; /* NULL for "auto" */
    /* Which calls it can run: a rowops_kernel_layout (the eligibility
     * function must pick a kernel of the same layout for the call), or
     * OPCOST_VARIANT_FUSED_ANY: the fused op in any layout. */
    int fast;
    const char *what; /* one line for `opcost list` */
    int cuda;         /* a CUDA kernel (launched through the bridge) */
    /* a kernel called from Python (the opcost_bench.Runner of that name,
     * e.g. "triton": rowops.triton), NULL for the C kernels */
    const char *runner;
} opcost_variant;

/* "auto": whatever rowops_choose picks for the path's call. */
extern const opcost_variant opcost_variant_auto;

size_t opcost_variant_count(void);
const opcost_variant *opcost_variant_at(size_t i);
const opcost_variant *opcost_variant_find(const char *name);

/* The CPU kernel of an implementation; NULL if it has none here. */
opcost_cpu_kernel opcost_cpu_kernel_of(rowops_impl impl);

/* Runs a CPU kernel over every row of call on PyTorch's thread pool, with
 * the registered op's grain (rowops_cpu_grain_rows). */
void opcost_run_cpu_kernel(opcost_cpu_kernel kernel, const rowops_call *call);

/* Can the variant run this call? 1 yes; 0 no, with the reason in why. */
int opcost_variant_admits(const opcost_variant *v, const rowops_call *call,
                          char *why, size_t len);

#endif
