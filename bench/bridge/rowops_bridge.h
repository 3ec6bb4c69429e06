/* The C bridge from the opcost benchmark (C11) into libtorch, the bench's
 * own library (libopcost_bridge.so): the one place the bench's C code
 * reaches the PyTorch dispatcher. Tensors cross as opaque
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

/* The attribution pass's tracer (bridge_trace.cpp): while started,
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
 * (torch::inductor::AOTIModelPackageLoader; bridge_aoti.cpp). A loaded
 * package lives until the process ends: the benchmark keeps each one for
 * its whole run (compiled_aoti.c), so there is no release. */
typedef struct rowops_bridge_aoti rowops_bridge_aoti;

rowops_bridge_aoti *rowops_bridge_aoti_load(const char *package, char *err,
                                            size_t err_len);
/* Runs the package on n wrapped inputs; outputs replace those in res. */
int rowops_bridge_aoti_run(rowops_bridge_aoti *m,
                           rowops_bridge_tensor *const *inputs, int n,
                           rowops_bridge_result *res, char *err,
                           size_t err_len);

/* ---- CUDA (bridge_cuda.cpp), through libtorch's CUDA runtime: its
 * caching allocator, the current stream, events. Each returns -1 with the
 * reason (no driver, no device, a build without CUDA) in err. */
typedef struct rowops_bridge_cuda_device {
    int index;
    char name[128];
    int arch; /* compute capability, major * 10 + minor */
    int sm_count;
    double l2_bytes, free_bytes, total_bytes;
} rowops_bridge_cuda_device;

int rowops_bridge_cuda_info(rowops_bridge_cuda_device *info, char *err,
                            size_t err_len);
void *rowops_bridge_cuda_alloc(size_t bytes, char *err, size_t err_len);
void rowops_bridge_cuda_free(void *p);

typedef enum rowops_bridge_copy {
    ROWOPS_BRIDGE_TO_DEVICE = 0,
    ROWOPS_BRIDGE_TO_HOST = 1,
    ROWOPS_BRIDGE_ON_DEVICE = 2
} rowops_bridge_copy;

/* Copies and sets bytes on the current stream and waits for them. */
int rowops_bridge_cuda_copy(void *dst, const void *src, size_t bytes,
                            rowops_bridge_copy kind, char *err, size_t err_len);
int rowops_bridge_cuda_memset(void *p, int value, size_t bytes, char *err,
                              size_t err_len);
/* The paired probe's copy of one or two (src, dst) pairs of `bytes` each,
 * in one launch on the current stream, not waited for (the timing loop
 * synchronizes; one launch, as the fused op is one); where a pointer is not
 * 16-byte aligned or the size not a multiple of 8, one cudaMemcpyAsync a
 * pair. */
int rowops_bridge_cuda_copy_pairs(void *const dst[2], const void *const src[2],
                                  int pairs, size_t bytes, char *err,
                                  size_t err_len);
/* Waits for the current stream. */
int rowops_bridge_cuda_sync(char *err, size_t err_len);

/* The device timer: events recorded on the current stream around a
 * region; stop waits for the stop event and gives the elapsed ms. */
int rowops_bridge_cuda_timer_start(char *err, size_t err_len);
int rowops_bridge_cuda_timer_stop(double *ms, char *err, size_t err_len);

/* A rowops CUDA kernel (cuda_fast, cuda_strided) launched from C on the
 * current stream, through the kernels' C API. */
int rowops_bridge_cuda_kernel(rowops_impl impl, const rowops_call *call,
                              char *err, size_t err_len);

/* A device-to-device copy of `bytes`, best of `trials`: GB/s counting the
 * bytes read and written. */
int rowops_bridge_cuda_copy_gbps(size_t bytes, int trials, double *gbps,
                                 char *err, size_t err_len);

/* One eager rowops call captured in a CUDA graph (warmed up and captured
 * on a side stream); replaying it reruns that call on the same inputs into
 * the same outputs: the launch floor. */
typedef struct rowops_bridge_graph rowops_bridge_graph;
rowops_bridge_graph *rowops_bridge_graph_capture(
    rowops_op op, rowops_bridge_tensor *x, rowops_bridge_tensor *residual,
    rowops_bridge_tensor *weight, double eps, char *err, size_t err_len);
int rowops_bridge_graph_replay(rowops_bridge_graph *g, char *err,
                               size_t err_len);
const rowops_bridge_result *
rowops_bridge_graph_outputs(const rowops_bridge_graph *g);
void rowops_bridge_graph_release(rowops_bridge_graph *g);

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
