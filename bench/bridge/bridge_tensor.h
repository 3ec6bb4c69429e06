// Internal to the C bridge: the opaque tensor handle and how a result
// takes ownership of an output.
#pragma once

#include "descriptor.h"
#include "rowops_bridge.h"

#include <ATen/core/Tensor.h>

#include <cstdio>
#include <cstring>
#include <exception>

struct rowops_bridge_tensor {
    at::Tensor t;
};

namespace rowops
{

inline void bridge_set_output(rowops_bridge_result *res, int i, at::Tensor t)
{
    delete res->handle[i];
    res->desc[i] = describe(t);
    res->handle[i] = new rowops_bridge_tensor{std::move(t)};
}

// The first line of an exception's message into err; returns -1.
inline int bridge_fail(char *err, size_t len, const char *what)
{
    if (err && len) {
        // c10::Error appends a C++ backtrace after the first line.
        const char *nl = std::strchr(what, '\n');
        const size_t n = nl ? static_cast<size_t>(nl - what) : strlen(what);
        std::snprintf(err, len, "%.*s", static_cast<int>(n), what);
    }
    return -1;
}

// Runs f (which returns 0 or -1), an exception becoming -1 with its
// message in err: every int-returning bridge function is one of these.
template <typename F> int bridge_guard(char *err, size_t len, F &&f)
{
    try {
        return f();
    } catch (const std::exception &e) {
        return bridge_fail(err, len, e.what());
    }
}

} // namespace rowops
