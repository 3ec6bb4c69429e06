/* The C bridge from the opcost benchmark (C11) into libtorch: the one
 * place C code reaches the PyTorch dispatcher. Tensors cross as opaque
 * handles wrapping caller-owned memory described by a rowops_tensor; every
 * function catches C++ exceptions and returns -1 with the message in err. */
#ifndef ROWOPS_BRIDGE_H
#define ROWOPS_BRIDGE_H

#include "rowops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An at::Tensor owned by the bridge. */
typedef struct rowops_bridge_tensor rowops_bridge_tensor;

/* How a call reaches the computation. */
typedef enum rowops_bridge_route {
    /* rowops::<op> through the dispatcher, as a C++ caller reaches it */
    ROWOPS_BRIDGE_ROWOPS = 0,
    /* rowops::<op>_reference: the aten composite that defines the contract */
    ROWOPS_BRIDGE_REFERENCE = 1,
    /* PyTorch's own ops: at::add, then at::rms_norm; out made contiguous */
    ROWOPS_BRIDGE_NATIVE = 2,
    /* Calibration, fused op only: at::add(x, residual) through the
     * dispatcher (h = residual_out alone), the per-call cost PyTorch's own
     * smallest op pays from C++ */
    ROWOPS_BRIDGE_TORCH_ADD = 3,
    ROWOPS_BRIDGE_ROUTE_COUNT
} rowops_bridge_route;

const char *rowops_bridge_route_name(rowops_bridge_route route);

/* The outputs of one call: out/y, residual_out (fused), rstd (absent for
 * the native route; the add routes return h alone, in slot 0), each as a
 * handle and a descriptor. Reusing a result
 * releases the previous call's tensors, as a model frees its activations. */
typedef struct rowops_bridge_result {
    rowops_bridge_tensor *handle[3];
    rowops_tensor desc[3];
    int count;
} rowops_bridge_result;

const char *rowops_bridge_torch_version(void);

/* Sets PyTorch's intra-op thread count (at::set_num_threads). */
int rowops_bridge_set_threads(int threads, char *err, size_t err_len);
int rowops_bridge_get_threads(void);

/* Wraps memory (no copy, not owned) as a CPU/CUDA tensor with t's sizes,
 * strides and dtype. NULL with err on failure. */
rowops_bridge_tensor *rowops_bridge_wrap(const rowops_tensor *t, char *err,
                                         size_t err_len);
void rowops_bridge_release(rowops_bridge_tensor *t);

/* One call of op on wrapped inputs (residual and weight NULL for
 * rms_norm_rows). Outputs replace those held in res. */
int rowops_bridge_call(rowops_bridge_route route, rowops_op op,
                       rowops_bridge_tensor *x, rowops_bridge_tensor *residual,
                       rowops_bridge_tensor *weight, double eps,
                       rowops_bridge_result *res, char *err, size_t err_len);

/* t.contiguous() into res->handle[0]/desc[0] (conversion timing). */
int rowops_bridge_contiguous(rowops_bridge_tensor *t, rowops_bridge_result *res,
                             char *err, size_t err_len);

/* Releases every tensor a result holds. */
void rowops_bridge_result_clear(rowops_bridge_result *res);

/* Which implementation the last rowops call on this thread ran. */
const char *rowops_bridge_last_dispatch(void);

/* The attribution pass's tracer (ops/bridge_trace.cpp): while started,
 * every RecordFunction scope that ends on the calling thread (aten and
 * rowops ops, the rowops kernel scope "rowops::kernel::<impl>", Inductor
 * kernels compiled with kernel profiling) is reported to fn with its
 * start and end on CLOCK_MONOTONIC (the timing loop's clock) and flags.
 * Never active while the timed calls run. */
enum {
    ROWOPS_BRIDGE_SCOPE_CHILDREN = 1,  /* other scopes ran inside it */
    ROWOPS_BRIDGE_SCOPE_OP = 2,        /* a dispatcher operator */
    ROWOPS_BRIDGE_SCOPE_COMPOSITE = 4, /* CompositeImplicitAutograd */
};
typedef void (*rowops_bridge_range_fn)(void *ctx, const char *name,
                                       int64_t start_ns, int64_t end_ns,
                                       int flags);
int rowops_bridge_trace_start(rowops_bridge_range_fn fn, void *ctx, char *err,
                              size_t err_len);
void rowops_bridge_trace_stop(void);

/* ns that `calls` calls of a small aten op take (one scope each): timed
 * with and without the tracer, the tracer's cost per scope. -1 on error. */
int64_t rowops_bridge_trace_probe(int calls);
/* ns that `calls` empty user scopes ("opcost::probe") take: traced, their
 * recorded length is the tracer's own time inside each scope. */
int64_t rowops_bridge_trace_probe_scope(int calls);

/* 1 while torch.profiler (Kineto) is recording: CUPTI must then not be
 * started by the bench (one CUPTI user per process at a time). */
int rowops_bridge_profiler_active(void);

/* While on, fresh PyTorch tensors are filled with NaN (deterministic fill
 * of uninitialized memory), so an output a path forgets to write shows. */
void rowops_bridge_poison_outputs(int on);

/* An AOTInductor package (.pt2) loaded for running from C
 * (torch::inductor::AOTIModelPackageLoader; ops/bridge_aoti.cpp). */
typedef struct rowops_bridge_aoti rowops_bridge_aoti;

rowops_bridge_aoti *rowops_bridge_aoti_load(const char *package, char *err,
                                            size_t err_len);
/* Runs the package on n wrapped inputs; outputs replace those in res. */
int rowops_bridge_aoti_run(rowops_bridge_aoti *m,
                           rowops_bridge_tensor *const *inputs, int n,
                           rowops_bridge_result *res, char *err,
                           size_t err_len);
void rowops_bridge_aoti_release(rowops_bridge_aoti *m);

/* at::parallel_for over [0, n) with grain: the C kernels run on PyTorch's
 * own thread pool, exactly as the registered op runs them. */
void rowops_bridge_parallel_for(int64_t n, int64_t grain,
                                void (*fn)(void *ctx, int64_t begin,
                                           int64_t end),
                                void *ctx);

#ifdef __cplusplus
}
#endif

#endif
