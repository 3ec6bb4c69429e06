/* A kernel variant as the measurement sees it: what the `kernel` path runs
 * on a point (bench/paths/variants.c holds the table of them). The engine
 * needs only its name, its device and whether it is "auto". */
#ifndef OPCOST_VARIANT_H
#define OPCOST_VARIANT_H

#include "rowops.h"

#include <stdint.h>

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

#endif
