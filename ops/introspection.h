// The library's private introspection and cache-control ops (names start
// with an underscore; schemas in schema.cpp): which implementation the last
// call on this thread ran, CPU features forced off for tests, the CPU
// output block cache (block_cache.h) and, with CUDA, a way to leave an
// error pending for the tests of error attribution.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace rowops
{

std::string last_dispatch();          // forward.cpp
std::string last_backward_dispatch(); // backward.cpp
// What the backward of an op on h would run, and why (explain_dispatch).
std::string explain_backward_dispatch(const at::Tensor &h); // backward.cpp
int64_t force_cpu_features(int64_t mask);
// The features the eligibility function sees (ROWOPS_CPU_* bits).
int64_t cpu_features();
#ifdef ROWOPS_HAVE_CUDA
void cuda_leave_pending_error(); // forward_cuda.cpp
#endif

} // namespace rowops
