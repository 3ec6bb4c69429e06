/* Sample calls for the C tests: one generator, every layout, every dtype.
 * Inputs are random, non-zero and seeded; outputs are poisoned with NaN
 * bytes so an element a kernel forgot to write fails the comparison. */
#ifndef C_SAMPLES_H
#define C_SAMPLES_H

#include "rowops.h"

#include <stdio.h> /* C_EXPECT prints */

typedef enum c_layout {
    C_CONTIGUOUS = 0,
    C_TRANSPOSED,  /* [B,N] view of an [N,B] buffer: strides (1, B) */
    C_ROW_STRIDED, /* row stride N + 3 */
    C_COL_STRIDED, /* every other column: strides (2N, 2), weight stride 2 */
    C_EXPANDED,    /* one row broadcast: strides (0, 1) */
    C_OFFSET,      /* storage offset of one element (misaligned) */
    C_3D,          /* [B, 2, N] with the leading dims swapped in memory */
    C_LAYOUT_COUNT
} c_layout;

const char *c_layout_name(c_layout layout);

typedef struct c_sample {
    rowops_call call;
    void *buffers[8];
    int nbuf;
} c_sample;

/* A 2-D descriptor of sizes {s0, s1} and strides {st0, st1} at addr (a
 * made-up address is fine where nothing reads the data). */
rowops_tensor c_desc2d(rowops_dtype dt, uintptr_t addr, int64_t s0, int64_t s1,
                       int64_t st0, int64_t st1);

/* Builds a call for op over logical [B, N] (or [B, 2, N] for C_3D).
 * inplace: out aliases x and residual_out aliases residual (fused op). */
int c_sample_make(c_sample *s, rowops_op op, rowops_dtype dtype,
                  rowops_dtype weight_dtype, c_layout layout, int64_t B,
                  int64_t N, int inplace, unsigned seed);
void c_sample_free(c_sample *s);

/* Runs CPU kernel impl (kernels/kernel_table.def) over every row of call:
 * the whole range at once, or (split) two disjoint ranges in reverse
 * order, as a thread pool would. */
void c_run_kernel(rowops_impl impl, const rowops_call *call, int split);

/* Per-dtype tolerance of an output rounded once from float32 math. */
double c_rtol(rowops_dtype dtype);
double c_atol(rowops_dtype dtype);

/* Minimal test harness. */
extern int c_failures;
extern int c_checks;
#define C_EXPECT(cond, ...)                                                    \
    do {                                                                       \
        ++c_checks;                                                            \
        if (!(cond)) {                                                         \
            ++c_failures;                                                      \
            fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);              \
            fprintf(stderr, __VA_ARGS__);                                      \
            fprintf(stderr, "\n");                                             \
        }                                                                      \
    } while (0)
/* C_EXPECT whose message is the condition's own text. */
#define C_CHECK(cond) C_EXPECT(cond, "%s", #cond)
/* Compares two strings, counted like C_EXPECT; a failure prints the
 * context (printf-style), then both strings in full. */
#define C_EXPECT_STR(got, want, ...)                                           \
    c_expect_str(__FILE__, __LINE__, (got), (want), __VA_ARGS__)
void c_expect_str(const char *file, int line, const char *got, const char *want,
                  const char *fmt, ...) __attribute__((format(printf, 5, 6)));
int c_report(const char *name);

#endif
