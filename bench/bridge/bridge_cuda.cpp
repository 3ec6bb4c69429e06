// The C bridge's CUDA half (rowops_bridge.h): what `opcost run --device
// cuda` needs of the GPU, through libtorch's own CUDA runtime (its caching
// allocator, current stream and events), so the bench links no CUDA
// library of its own. Built without CUDA, every call says so.
#include "rowops_bridge.h"

#include "bridge_tensor.h"
#include "op_handle.h"

#ifdef ROWOPS_HAVE_CUDA
#include <ATen/ATen.h>
#include <ATen/cuda/CUDAContext.h>
#include <ATen/cuda/CUDAEvent.h>
#include <ATen/cuda/CUDAGraph.h>
#include <c10/cuda/CUDACachingAllocator.h>
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>

#include "probe_copy.h"
#endif

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

namespace
{

int fail(char *err, size_t len, const char *what)
{
    return rowops::bridge_fail(err, len, what);
}

#ifdef ROWOPS_HAVE_CUDA
void check(cudaError_t e, const char *what)
{
    TORCH_CHECK(e == cudaSuccess, what, ": ", cudaGetErrorString(e));
}

cudaStream_t stream()
{
    return at::cuda::getCurrentCUDAStream().stream();
}

// Start and stop events of the device timer (one timed region at a time).
// Never destroyed: at exit the CUDA runtime may unload before this
// library's static destructors run, and a CUDAEvent's destructor then
// throws ("driver shutting down"), which aborted opcost after it had
// written its results (gpu-check on an H200, 2026-12-04).
struct timer_events {
    at::cuda::CUDAEvent start{cudaEventDefault}, stop{cudaEventDefault};
};
timer_events *timer = nullptr;
#endif

} // namespace

#ifdef ROWOPS_HAVE_CUDA
// One captured eager call (the cuda-graph path): the graph, the inputs it
// reads and the outputs it writes, all kept alive while it is replayed.
struct rowops_bridge_graph {
    at::cuda::CUDAGraph graph;
    at::Tensor x, residual, weight;
    rowops_bridge_result outputs{};
};
#else
struct rowops_bridge_graph {
    int unused;
};
#endif

extern "C" {

int rowops_bridge_cuda_info(rowops_bridge_cuda_device *info, char *err,
                            size_t err_len)
{
    *info = rowops_bridge_cuda_device{};
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        // throws with torch's reason (no driver, no device) when none
        c10::cuda::device_count_ensure_non_zero();
        const int dev = c10::cuda::current_device();
        const cudaDeviceProp *p = at::cuda::getDeviceProperties(dev);
        info->index = dev;
        std::snprintf(info->name, sizeof info->name, "%.127s", p->name);
        info->arch = p->major * 10 + p->minor;
        info->sm_count = p->multiProcessorCount;
        info->l2_bytes = p->l2CacheSize;
        size_t free_b = 0, total_b = 0;
        check(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
        info->free_bytes = static_cast<double>(free_b);
        info->total_bytes = static_cast<double>(total_b);
        return 0;
    });
#else
    return fail(err, err_len,
                "this build has no CUDA (nvcc was not found at build time)");
#endif
}

void *rowops_bridge_cuda_alloc(size_t bytes, char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    try {
        return c10::cuda::CUDACachingAllocator::raw_alloc(bytes ? bytes : 1);
    } catch (const std::exception &e) {
        fail(err, err_len, e.what());
        return nullptr;
    }
#else
    (void)bytes;
    fail(err, err_len, "this build has no CUDA");
    return nullptr;
#endif
}

void rowops_bridge_cuda_free(void *p)
{
#ifdef ROWOPS_HAVE_CUDA
    if (p)
        c10::cuda::CUDACachingAllocator::raw_delete(p);
#else
    (void)p;
#endif
}

int rowops_bridge_cuda_copy(void *dst, const void *src, size_t bytes,
                            rowops_bridge_copy kind, char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        const cudaMemcpyKind k =
            kind == ROWOPS_BRIDGE_TO_DEVICE ? cudaMemcpyHostToDevice
            : kind == ROWOPS_BRIDGE_TO_HOST ? cudaMemcpyDeviceToHost
                                            : cudaMemcpyDeviceToDevice;
        check(cudaMemcpyAsync(dst, src, bytes, k, stream()), "cudaMemcpyAsync");
        check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
        return 0;
    });
#else
    (void)dst, (void)src, (void)bytes, (void)kind;
    return fail(err, err_len, "this build has no CUDA");
#endif
}

int rowops_bridge_cuda_copy_pairs(void *const dst[2], const void *const src[2],
                                  int pairs, size_t bytes, char *err,
                                  size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        TORCH_CHECK(pairs == 1 || pairs == 2,
                    "rowops_bridge_cuda_copy_pairs: pairs must be 1 or 2");
        bool aligned = bytes % 8 == 0;
        for (int k = 0; k < pairs; ++k)
            aligned = aligned && (uintptr_t)dst[k] % 16 == 0 &&
                      (uintptr_t)src[k] % 16 == 0;
        if (aligned) {
            check(static_cast<cudaError_t>(
                      opcost_cuda_copy_pairs(dst, src, pairs, bytes, stream())),
                  "opcost_cuda_copy_pairs");
            return 0;
        }
        for (int k = 0; k < pairs; ++k)
            check(cudaMemcpyAsync(dst[k], src[k], bytes,
                                  cudaMemcpyDeviceToDevice, stream()),
                  "cudaMemcpyAsync");
        return 0;
    });
#else
    (void)dst, (void)src, (void)pairs, (void)bytes;
    return fail(err, err_len, "this build has no CUDA");
#endif
}

int rowops_bridge_cuda_memset(void *p, int value, size_t bytes, char *err,
                              size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        check(cudaMemsetAsync(p, value, bytes, stream()), "cudaMemsetAsync");
        check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
        return 0;
    });
#else
    (void)p, (void)value, (void)bytes;
    return fail(err, err_len, "this build has no CUDA");
#endif
}

int rowops_bridge_cuda_sync(char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        check(cudaStreamSynchronize(stream()), "cudaStreamSynchronize");
        return 0;
    });
#else
    return fail(err, err_len, "this build has no CUDA");
#endif
}

int rowops_bridge_cuda_timer_start(char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        if (!timer)
            timer = new timer_events();
        timer->start.record(at::cuda::getCurrentCUDAStream());
        return 0;
    });
#else
    return fail(err, err_len, "this build has no CUDA");
#endif
}

int rowops_bridge_cuda_timer_stop(double *ms, char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        TORCH_CHECK(timer, "rowops_bridge_cuda_timer_stop: not started");
        timer->stop.record(at::cuda::getCurrentCUDAStream());
        timer->stop.synchronize();
        *ms = timer->start.elapsed_time(timer->stop);
        return 0;
    });
#else
    (void)ms;
    return fail(err, err_len, "this build has no CUDA");
#endif
}

int rowops_bridge_cuda_kernel(rowops_impl impl, const rowops_call *call,
                              char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        const rowops_cuda_kernel_fn launch = rowops_cuda_launcher(impl);
        TORCH_CHECK(launch,
                    "rowops_bridge_cuda_kernel: ", rowops_impl_name(impl),
                    " is not a CUDA kernel");
        const int e = launch(call, stream());
        // negative: an error earlier work left pending, not this launch's
        TORCH_CHECK(
            e == 0,
            e < 0 ? "a CUDA error pending before the rowops launch "
                    "(left by earlier work): "
                  : "rowops: CUDA kernel launch failed: ",
            cudaGetErrorString(static_cast<cudaError_t>(e < 0 ? -e : e)));
        return 0;
    });
#else
    (void)impl, (void)call;
    return fail(err, err_len, "this build has no CUDA");
#endif
}

int rowops_bridge_cuda_copy_gbps(size_t bytes, int trials, double *gbps,
                                 char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        // A device-to-device copy of `bytes`, counting bytes read plus
        // written, best of `trials`: the device's memory ceiling.
        const auto opts =
            at::TensorOptions().dtype(at::kByte).device(at::kCUDA);
        at::Tensor src = at::empty({static_cast<int64_t>(bytes)}, opts);
        at::Tensor dst = at::empty_like(src);
        src.fill_(1);
        double best = 0;
        for (int t = 0; t < trials + 1; ++t) {
            char e[256];
            if (rowops_bridge_cuda_timer_start(e, sizeof e))
                TORCH_CHECK(false, e);
            dst.copy_(src);
            double ms = 0;
            if (rowops_bridge_cuda_timer_stop(&ms, e, sizeof e))
                TORCH_CHECK(false, e);
            if (t > 0 && ms > 0) // the first warms up
                best = std::max(best, 2.0 * static_cast<double>(bytes) /
                                          (ms * 1e-3) / 1e9);
        }
        *gbps = best;
        return 0;
    });
#else
    (void)bytes, (void)trials, (void)gbps;
    return fail(err, err_len, "this build has no CUDA");
#endif
}

rowops_bridge_graph *rowops_bridge_graph_capture(
    rowops_op op, rowops_bridge_tensor *x, rowops_bridge_tensor *residual,
    rowops_bridge_tensor *weight, double eps, char *err, size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    try {
        auto g = std::make_unique<rowops_bridge_graph>();
        g->x = x->t;
        if (residual)
            g->residual = residual->t;
        if (weight)
            g->weight = weight->t;
        // warm up on a side stream (allocator pools, lazy init), then
        // capture one eager call; its outputs stay the graph's
        const at::cuda::CUDAStream side = at::cuda::getStreamFromPool();
        side.synchronize();
        {
            const at::cuda::CUDAStreamGuard guard(side);
            rowops_bridge_result warm{};
            char e[512];
            if (rowops_bridge_call(ROWOPS_BRIDGE_ROWOPS, op, x, residual,
                                   weight, eps, &warm, e, sizeof e))
                TORCH_CHECK(false, e);
            rowops_bridge_result_clear(&warm);
            side.synchronize();
            g->graph.capture_begin();
            const int rc =
                rowops_bridge_call(ROWOPS_BRIDGE_ROWOPS, op, x, residual,
                                   weight, eps, &g->outputs, e, sizeof e);
            g->graph.capture_end();
            TORCH_CHECK(rc == 0, e);
        }
        side.synchronize();
        return g.release();
    } catch (const std::exception &e) {
        fail(err, err_len, e.what());
        return nullptr;
    }
#else
    (void)op, (void)x, (void)residual, (void)weight, (void)eps;
    fail(err, err_len, "this build has no CUDA");
    return nullptr;
#endif
}

int rowops_bridge_graph_replay(rowops_bridge_graph *g, char *err,
                               size_t err_len)
{
#ifdef ROWOPS_HAVE_CUDA
    return rowops::bridge_guard(err, err_len, [&] {
        g->graph.replay();
        return 0;
    });
#else
    (void)g;
    return fail(err, err_len, "this build has no CUDA");
#endif
}

const rowops_bridge_result *
rowops_bridge_graph_outputs(const rowops_bridge_graph *g)
{
#ifdef ROWOPS_HAVE_CUDA
    return &g->outputs;
#else
    (void)g;
    return nullptr;
#endif
}

void rowops_bridge_graph_release(rowops_bridge_graph *g)
{
#ifdef ROWOPS_HAVE_CUDA
    if (g)
        rowops_bridge_result_clear(&g->outputs);
#endif
    delete g;
}

} // extern "C"
