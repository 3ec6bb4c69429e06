/* The kernel variants the `kernel` path can time (--variants): every
 * kernel of kernels/kernel_table.def but the reference, and the Python
 * kernels listed in variants.c. */
#ifndef OPCOST_VARIANTS_H
#define OPCOST_VARIANTS_H

#include "rowops.h"
#include "variant.h"

#include <stddef.h>

size_t opcost_variant_count(void);
const opcost_variant *opcost_variant_at(size_t i);
const opcost_variant *opcost_variant_find(const char *name);

/* The CPU kernel of an implementation; NULL if it has none here. */
opcost_cpu_kernel opcost_cpu_kernel_of(rowops_impl impl);

/* Runs impl's CPU kernel over every row of call on PyTorch's thread pool,
 * with the registered op's grain (rowops_cpu_grain). */
void opcost_run_cpu_kernel(rowops_impl impl, opcost_cpu_kernel kernel,
                           const rowops_call *call);

/* Can the variant run this call? 1 yes; 0 no, with the reason in why. */
int opcost_variant_admits(const opcost_variant *v, const rowops_call *call,
                          char *why, size_t len);

#endif
