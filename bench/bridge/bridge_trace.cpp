// The C bridge's tracer (rowops_bridge.h): a thread-local RecordFunction
// callback, registered only during the bench's attribution pass, that
// reports every scope on the calling thread (aten ops, rowops ops, the
// rowops kernel scope, Inductor kernels built with kernel profiling) with
// its start and end on CLOCK_MONOTONIC, the timing loop's clock.
#include "rowops_bridge.h"

#include "bridge_tensor.h"

#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <torch/csrc/autograd/profiler_kineto.h>

#include <ATen/core/dispatch/Dispatcher.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <unordered_map>
#include <vector>

namespace
{

struct open_scope {
    int64_t start_ns;
    bool has_children;
};

struct tracer {
    rowops_bridge_range_fn fn = nullptr;
    void *ctx = nullptr;
    std::thread::id thread;
    std::vector<open_scope> stack;
    at::CallbackHandle handle = 0;
    bool active = false;
};

tracer the_tracer; // one attribution pass at a time, on one thread

int64_t now_ns()
{
    // libstdc++'s steady_clock is CLOCK_MONOTONIC, as opcost_now_ns
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Scopes begin and end on the thread that runs them; only the tracing
// thread's are kept (others nest inside one of its scopes anyway).
std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction &)
{
    tracer &t = the_tracer;
    if (!t.active || std::this_thread::get_id() != t.thread)
        return nullptr;
    if (!t.stack.empty())
        t.stack.back().has_children = true;
    t.stack.push_back({now_ns(), false});
    return nullptr;
}

// ROWOPS_BRIDGE_SCOPE_* flags of a scope's operator: whether it is one,
// and whether it is CompositeImplicitAutograd (a decomposition: its own
// time is the dispatch of the ops it calls). Looked up once per name.
int op_flags(const at::RecordFunction &fn)
{
    thread_local std::unordered_map<const char *, int> cache;
    const char *name = fn.name();
    const auto hit = cache.find(name);
    if (hit != cache.end())
        return hit->second;
    int flags = 0;
    if (const auto op = fn.operator_name()) {
        flags |= ROWOPS_BRIDGE_SCOPE_OP;
        const auto handle = c10::Dispatcher::singleton().findOp(*op);
        if (handle && handle->hasKernelForDispatchKey(
                          c10::DispatchKey::CompositeImplicitAutograd))
            flags |= ROWOPS_BRIDGE_SCOPE_COMPOSITE;
    }
    cache.emplace(name, flags);
    return flags;
}

void on_end(const at::RecordFunction &fn, at::ObserverContext *)
{
    tracer &t = the_tracer;
    if (!t.active || std::this_thread::get_id() != t.thread || t.stack.empty())
        return;
    const int64_t end = now_ns();
    const open_scope s = t.stack.back();
    t.stack.pop_back();
    t.fn(t.ctx, fn.name(), s.start_ns, end,
         op_flags(fn) | (s.has_children ? ROWOPS_BRIDGE_SCOPE_CHILDREN : 0));
}

} // namespace

extern "C" {

int rowops_bridge_trace_start(rowops_bridge_range_fn fn, void *ctx, char *err,
                              size_t err_len)
{
    return rowops::bridge_guard(err, err_len, [&] {
        tracer &t = the_tracer;
        TORCH_CHECK(fn, "rowops_bridge_trace_start: fn must not be NULL");
        TORCH_CHECK(!t.active, "rowops_bridge_trace_start: already tracing");
        t.fn = fn;
        t.ctx = ctx;
        t.thread = std::this_thread::get_id();
        t.stack.clear();
        t.stack.reserve(64);
        t.handle = at::addThreadLocalCallback(
            at::RecordFunctionCallback(on_start, on_end)
                .needsInputs(false)
                .needsIds(false)
                .scopes(
                    {at::RecordScope::FUNCTION, at::RecordScope::USER_SCOPE}));
        t.active = true;
        return 0;
    });
}

void rowops_bridge_trace_stop(void)
{
    tracer &t = the_tracer;
    if (!t.active)
        return;
    t.active = false;
    at::removeCallback(t.handle);
    t.stack.clear();
}

int64_t rowops_bridge_trace_probe(int calls)
{
    try {
        // A small op with a real kernel: one scope per call, the
        // dispatcher's profiled path when a tracer is on.
        const at::Tensor t = at::ones({4});
        const int64_t start = now_ns();
        for (int i = 0; i < calls; ++i) {
            at::Tensor v = at::add(t, t);
            (void)v;
        }
        return now_ns() - start;
    } catch (const std::exception &) {
        return -1;
    }
}

int64_t rowops_bridge_trace_probe_scope(int calls)
{
    const int64_t start = now_ns();
    for (int i = 0; i < calls; ++i) {
        RECORD_USER_SCOPE("opcost::probe");
    }
    return now_ns() - start;
}

int rowops_bridge_profiler_active(void)
{
    try {
        return torch::autograd::profiler::isProfilerEnabledInMainThread() ? 1
                                                                          : 0;
    } catch (const std::exception &) {
        return 0;
    }
}

} // extern "C"
