/* rowops C API: the call record, the eligibility function and the kernels.
 *
 * Contract (the reference in ops/reference.cpp defines it, and
 * docs/operators.md has the table): for x of shape [..., N]
 *   rms_norm_rows:      rstd = 1/sqrt(mean(x^2) + eps), out = x * rstd
 *   fused_add_rms_norm: h = x + residual (rounded to x's dtype),
 *                       residual_out = h, rstd from h,
 *                       out = h * rstd * weight
 * Accumulation and rstd are float32 (float64 for float64 inputs); every
 * output is rounded once to its dtype. N == 0 gives rstd = 1/sqrt(eps).
 *
 * In-place use is allowed when `out` describes exactly the memory of `x` and
 * `residual_out` exactly that of `residual`: each kernel reads a row's inputs
 * completely before writing that row's `out`, and reads h back from
 * `residual_out`. */
#ifndef ROWOPS_H
#define ROWOPS_H

#include "rowops_tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The operators: one line each in op_table.def. */
typedef enum rowops_op {
#define ROWOPS_OP(id, name, row_inputs, weighted, row_outputs, fused)          \
    ROWOPS_OP_##id,
#include "op_table.def"
#undef ROWOPS_OP
    ROWOPS_OP_COUNT
} rowops_op;

/* An op's line of the table, and what follows from it. */
typedef struct rowops_op_info {
    const char *name;
    int row_inputs;  /* row tensors read: x (, residual) */
    int weighted;    /* 1: reads a weight of N elements */
    int row_outputs; /* row tensors written: y or out (, residual_out) */
    int fused;       /* the fused residual add */
    int tensor_args; /* row_inputs + weighted: the op's tensor arguments */
} rowops_op_info;

/* NULL for a value outside the table. */
const rowops_op_info *rowops_op_info_of(rowops_op op);
/* Name to enum: 0, or -1 for a name not in the table. */
int rowops_op_from_name(const char *name, rowops_op *op);

/* One call's parameters. residual, weight and residual_out are used by the
 * fused op only. */
typedef struct rowops_call {
    rowops_op op;
    rowops_tensor x;
    rowops_tensor residual;
    rowops_tensor weight;
    rowops_tensor out;
    rowops_tensor residual_out;
    rowops_tensor rstd;
    double eps;
    /* CUDA compute capability of x's device (e.g. 90), 0 if unknown or not
     * CUDA; filled by the caller, read by the eligibility function. */
    int cuda_arch;
} rowops_call;

/* The implementations the eligibility function can pick: one line each in
 * kernels/kernel_table.def, which also gives each its name, CPU entry,
 * device, layout and CPU features (rowops_kernel_info). */
typedef enum rowops_impl {
#define ROWOPS_KERNEL(id, name, cpu_fn, device, layout, features, what)        \
    ROWOPS_IMPL_##id,
#include "kernel_table.def"
#undef ROWOPS_KERNEL
    ROWOPS_IMPL_COUNT
} rowops_impl;

/* Which calls a kernel runs (the eligibility function admits them). */
typedef enum rowops_kernel_layout {
    ROWOPS_LAYOUT_ANY = 0,      /* any strides */
    ROWOPS_LAYOUT_ROWS = 1,     /* the CPU fast path's row-major rows */
    ROWOPS_LAYOUT_COLUMNS = 2,  /* column-major (transposed) rows */
    ROWOPS_LAYOUT_CUDA_ROWS = 3 /* the CUDA fast path's rows */
} rowops_kernel_layout;

/* A CPU kernel's entry: rows [row_begin, row_end) of an admitted call. */
typedef void (*rowops_cpu_kernel_fn)(const struct rowops_call *call,
                                     int64_t row_begin, int64_t row_end);

/* One line of kernels/kernel_table.def. */
typedef struct rowops_kernel_info {
    const char *name;
    rowops_cpu_kernel_fn cpu; /* NULL: not a CPU kernel */
    int device;               /* rowops_device, or -1: no kernel (reference) */
    rowops_kernel_layout layout;
    unsigned features; /* rowops_cpu_features() bits it needs */
    const char *what;
} rowops_kernel_info;

/* The table's line of impl; NULL for ROWOPS_IMPL_COUNT or beyond. */
const rowops_kernel_info *rowops_kernel_info_of(rowops_impl impl);

/* Whether kernel impl may run call, as the tests and the bench's
 * --variants run kernels the eligibility function did not pick: a kernel
 * of any layout every call of its device; the others only a call the
 * eligibility function sends to a kernel of the same layout and device,
 * and only on a CPU with impl's features. */
int rowops_kernel_can_run(rowops_impl impl, const rowops_call *call);

typedef struct rowops_choice {
    rowops_impl impl;
    char reason[200];
} rowops_choice;

/* Fast-path conditions (rowops_choose; the measurements behind each
 * threshold: docs/dispatch.md). */
#define ROWOPS_CPU_VECTOR_BYTES 32  /* AVX2 */
#define ROWOPS_CUDA_VECTOR_BYTES 16 /* one 128-bit load */
#define ROWOPS_CUDA_MIN_ARCH 80
/* A row of h is kept in L1/L2 (CPU) or registers (CUDA) between the
 * reduction and the scaling; 128 KiB per row bounds N per dtype. */
#define ROWOPS_ONE_PASS_BYTES 131072
/* The AVX kernels stream their outputs past the cache (the _nt and _nta
 * kernels: non-temporal stores) when out + residual_out are at least
 * NUM/DEN of the last-level cache, the call's inputs and outputs together
 * 3/4 of it: they would be evicted before the next op reads them, and
 * streaming saves reading each destination line first. */
#define ROWOPS_STREAM_LLC_NUM 3
#define ROWOPS_STREAM_LLC_DEN 8
/* Below the streaming size, on a core that runs 512-bit operations as two
 * halves (ROWOPS_CPU_AVX512_HALF_RATE), the AVX2 kernel is picked over the
 * AVX-512 one, but for bfloat16 whose outputs fit this many bytes (one
 * core's L2), where AVX-512 BF16's one-instruction rounding keeps AVX-512
 * ahead. From the streaming size on, float16 takes the streaming AVX2
 * kernel there too; bfloat16 and float32 keep AVX-512. */
#define ROWOPS_HALF_RATE_BF16_512_MAX_OUT_BYTES (1u << 20)

/* The largest N the one-pass fast kernels accept for a dtype (0: none). */
int64_t rowops_one_pass_limit(rowops_dtype dtype);

/* Names of the table's lines; "unknown" outside the tables. */
const char *rowops_op_name(rowops_op op);
const char *rowops_impl_name(rowops_impl impl);

/* The one place that picks an implementation. Pure: reads only the
 * descriptors (never the data) and the detected machine features. Any
 * call gets a choice (the reference for what no kernel runs), with the
 * reason in one line. */
rowops_choice rowops_choose(const rowops_call *call);

/* The same choice without the reason text (the kernels' hot path). */
rowops_impl rowops_choose_impl(const rowops_call *call);

/* Checks the descriptors of a call against the contract (shapes, dtypes,
 * devices, eps). Returns 0 if valid, else writes a message naming the
 * argument and the rule into err and returns -1. The torch layer validates
 * with symbolic sizes before building a call; C callers use this. */
int rowops_check_call(const rowops_call *call, char *err, size_t err_len);

/* The kernels' entries, declared from the table (kernel_table.def, where
 * each line says what its kernel does and which calls it takes).
 *
 * A CPU kernel runs rows [row_begin, row_end) of a call that
 * rowops_kernel_can_run admits (0 <= row_begin <= row_end <= the call's
 * rows): it never fails, allocates nothing, reads only the call's tensors
 * and writes only their outputs. Threading is the caller's: disjoint row
 * ranges may run in parallel, in tasks of rowops_cpu_grain rows or more.
 *
 * A CUDA kernel (defined only when the library is built with CUDA,
 * ROWOPS_HAVE_CUDA) launches the whole call on `stream` (a cudaStream_t)
 * on the current device, allocates nothing and never synchronizes. It
 * returns 0, the cudaError_t of its own launch (cudaErrorInvalidValue for
 * a call it does not take), or the negative of a CUDA error that was
 * already pending before it (left by earlier work, not rowops: nothing is
 * launched then). */
typedef int (*rowops_cuda_kernel_fn)(const struct rowops_call *call,
                                     void *stream);
#define ROWOPS_CPU_KERNEL(id, name, fn, layout, features, what)                \
    void fn(const rowops_call *call, int64_t row_begin, int64_t row_end);
#define ROWOPS_CUDA_KERNEL(id, name, fn, layout, what)                         \
    int fn(const rowops_call *call, void *stream);
#define ROWOPS_NO_KERNEL(id, name, what)
#include "kernel_table.def"

/* The CUDA entry of impl from the table, NULL where impl is not a CUDA
 * kernel (defined with the CUDA kernels: kernels/cuda/launchers.c). */
rowops_cuda_kernel_fn rowops_cuda_launcher(rowops_impl impl);

/* Whether impl is one of the table's CUDA kernels (defined everywhere). */
int rowops_impl_is_cuda(rowops_impl impl);

/* Column-major rows with a short column: cpu_colmajor_narrow takes
 * columns at most this many elements apart. */
#define ROWOPS_COLMAJOR_NARROW_MAX 16
/* ... and the eligibility function picks it over the wide tiles for
 * float16 and bfloat16 to that limit, and float32 to S = PICK_F32; on a
 * core with full-width 512-bit units, 16-bit calls take it to S =
 * PICK_16_FULL_RATE (fused) and PICK_16_FULL_RATE_ROWS (rms_norm_rows). */
#define ROWOPS_COLMAJOR_NARROW_PICK_F32 12
#define ROWOPS_COLMAJOR_NARROW_PICK_16_FULL_RATE 5
#define ROWOPS_COLMAJOR_NARROW_PICK_16_FULL_RATE_ROWS 4
/* Whether call is column-major with columns at most
 * ROWOPS_COLMAJOR_NARROW_MAX apart (cpu_colmajor_narrow's precondition
 * beyond the column-major ones; kernels/eligibility.c). */
int rowops_colmajor_narrow_ok(const rowops_call *call);
/* cpu_colmajor_copy: a row of at most this many bytes (the stack batch
 * holds one). */
#define ROWOPS_COLMAJOR_COPY_ROW_BYTES (32 << 10)
/* Whether call is cpu_colmajor_inplace's: the fused op, x 2-D with strides
 * {1, S >= B} (B >= 16: a vector block at least; N >= 2), residual with x's
 * sizes and strides and not overlapping it, out being x and residual_out
 * being residual, a unit-stride weight (kernels/eligibility.c; dtypes and
 * features checked there). */
int rowops_colmajor_inplace_ok(const rowops_call *call);
/* Whether call is column-major and its outputs and weight are as the AVX2
 * row kernel wants them (32-byte aligned rows), with a row of N elements
 * within ROWOPS_COLMAJOR_COPY_ROW_BYTES (cpu_colmajor_copy's
 * preconditions; kernels/eligibility.c). */
int rowops_colmajor_copy_ok(const rowops_call *call);
/* Where the CPU has no AVX-512 the eligibility function picks
 * cpu_colmajor_copy over the AVX2 tiles for float16 and bfloat16 at S <=
 * COPY_PICK_16 (fused) and COPY_PICK_16_ROWS (rms_norm_rows). */
#define ROWOPS_COLMAJOR_COPY_PICK_16 5
#define ROWOPS_COLMAJOR_COPY_PICK_16_ROWS 10
/* Where the CPU has AVX-512 the eligibility function picks the AVX-512
 * wide tiles beyond the short columns; on a core that runs 512-bit
 * operations as two halves it picks the AVX2 tiles at mid strides
 * instead: float32 S = MAX_F32 + 1 .. FROM_F32 - 1 (both ops), and the
 * fused op in float16 and bfloat16 S = MAX_16 + 1 .. FROM_16 - 1. */
#define ROWOPS_COLMAJOR_AVX512_MAX_F32 32
#define ROWOPS_COLMAJOR_AVX512_FROM_F32 384
#define ROWOPS_COLMAJOR_AVX512_MAX_16 127
#define ROWOPS_COLMAJOR_AVX512_FROM_16 768

/* One backward call. With h = x (rms_norm_rows) or h = residual_out (fused),
 * r = rstd and n = h * r recomputed per row:
 *   gw     = grad_out * weight (fused) or grad_out
 *   grad_h = r * gw - n * (r * mean(gw * n) + grad_rstd * r^2 / N)
 *            + grad_residual_out
 * grad_h is the gradient of x and of residual alike (h = x + residual).
 * The weight gradient, sum over rows of grad_out * n, is accumulated into a
 * caller-owned partial row so threads can each own one (two-stage sum).
 * grad_residual_out and grad_rstd are optional: data == NULL when absent. */
typedef struct rowops_backward_call {
    rowops_op op;
    rowops_tensor grad_out;          /* h's shape and dtype */
    rowops_tensor grad_residual_out; /* fused only, optional */
    rowops_tensor grad_rstd;         /* rstd's shape and dtype, optional */
    rowops_tensor h;                 /* x, or residual_out for the fused op */
    rowops_tensor weight;            /* fused only */
    rowops_tensor rstd;              /* as the forward returned it */
    rowops_tensor grad_h;            /* output: h's shape and dtype */
    int cuda_arch; /* as rowops_call's: compute capability of h's device */
} rowops_backward_call;

/* The eligibility function of the backward: the strided CPU or CUDA
 * kernel for describable tensors (CUDA: sm_80 and newer), the reference
 * otherwise. Pure, like rowops_choose. */
rowops_choice rowops_choose_backward(const rowops_backward_call *call);

/* Strided CPU backward over rows [row_begin, row_end): any strides, every
 * dtype, float32 accumulation (float64 for float64). For the fused op,
 * weight_grad (N doubles, written) receives those rows' weight gradient,
 * the sum over them of grad_out * n, summed in blocks of rows (rowops_sum.h)
 * with scratch of rowops_backward_scratch_bytes(call) bytes; both NULL for
 * rms_norm_rows. Threads may each take a range (two-stage sum). */
void rowops_cpu_backward_strided(const rowops_backward_call *call,
                                 int64_t row_begin, int64_t row_end,
                                 double *weight_grad, void *scratch);
size_t rowops_backward_scratch_bytes(const rowops_backward_call *call);

/* CUDA backward (any strides, every dtype): grad_h, and for the fused op
 * the weight gradient in two stages: the row kernel adds each block's rows
 * into its own row of `partial` (rowops_cuda_backward_parts(call) rows of
 * N accumulators of the accumulation dtype, caller-allocated on the
 * device, no initialization needed), then one thread per column sums them
 * into grad_weight (contiguous or strided [N], the weight's dtype). Same
 * return convention as the forward kernels. */
int64_t rowops_cuda_backward_parts(const rowops_backward_call *call);
int rowops_cuda_backward(const rowops_backward_call *call, void *partial,
                         const rowops_tensor *grad_weight, void *stream);

/* Threading policy of the CPU kernels: rows per task, so each task
 * touches at least 32K elements, PyTorch's own elementwise grain (an
 * OpenMP fork and join costs about what one core needs for 16K elements:
 * smaller calls run on one thread; docs/dispatch.md). */
static inline int64_t rowops_cpu_grain_rows(int64_t n)
{
    const int64_t g = 32768 / (n > 1 ? n : 1);
    return g > 1 ? g : 1;
}

/* A cache line, and the grain where the written rows interleave (a
 * column-major output: the fused op in place on a transposed input): two
 * tasks then write the same lines all along, so a task wants 32 rows of
 * each column or more (a line of float32 is 16), and PyTorch's
 * parallel_for cuts a range at least a grain long into tasks of half a
 * grain and up: a grain of 64 rows (docs/dispatch.md). */
#define ROWOPS_CPU_LINE_BYTES 64
#define ROWOPS_CPU_INTERLEAVED_GRAIN_ROWS 64

/* Rows per task for a call run by impl: rowops_cpu_grain_rows, raised to
 * ROWOPS_CPU_INTERLEAVED_GRAIN_ROWS where a written tensor's rows
 * interleave, except for the scalar kernel on 16-bit rows
 * (kernels/cpu_grain.c). */
int64_t rowops_cpu_grain(const rowops_call *call, rowops_impl impl);

/* Accumulation dtype of the contract for an input dtype. */
static inline rowops_dtype rowops_acc_dtype(rowops_dtype x)
{
    return x == ROWOPS_F64 ? ROWOPS_F64 : ROWOPS_F32;
}

#ifdef __cplusplus
}
#endif

#endif
