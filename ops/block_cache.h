// A cache of freed CPU blocks for the ops' outputs (kernel_output).
//
// glibc serves every block above 32 MiB with a fresh mmap and unmaps it on
// free, so each call that returns outputs that large page-faults and the
// kernel zeroes every page again: 3.5-7.5x the kernel's own time
// (docs/operators.md, "Outputs on the CPU"). Smaller blocks cost a malloc and a
// free per output (with glibc's consolidation of freed chunks, ~0.1-0.2 us
// each: a decode call returns three). Outputs of at least kBlockCacheMin bytes
// come from here instead: a freed block is kept (up to the byte cap and
// kBlockCacheEntries blocks, oldest evicted first) and handed to the next
// output of its size, as CUDA's caching allocator does.
//
// The cap is ROWOPS_CPU_BLOCK_CACHE_MB in the environment (default 1024;
// 0 turns the cache off; anything but a whole number of MiB makes every
// op call that allocates an output raise, naming the variable);
// rowops.empty_cache() returns every held block.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <string>

namespace rowops
{

constexpr size_t kBlockCacheMin = 4096;
constexpr size_t kBlockCacheEntries = 64;

// An uninitialized contiguous CPU tensor of x's shape and dtype (or dtype),
// from the block cache when large. Filled with NaN like at::empty when
// deterministic algorithms fill uninitialized memory.
at::Tensor empty_cpu_cached(at::IntArrayRef sizes, at::ScalarType dtype);

// Parses a ROWOPS_CPU_BLOCK_CACHE_MB value: a whole number of MiB, digits
// only, whose bytes fit in size_t. false with a message naming the
// variable and the rule otherwise. parse_cache_mb_checked returns the MiB
// or raises that message (the rowops::_parse_cpu_cache_mb test hook).
bool parse_cache_mb(const char *text, size_t *bytes, std::string *err);
int64_t parse_cache_mb_checked(const std::string &text);

// Frees every cached block; returns the bytes released.
int64_t block_cache_release();

// Bytes held now (freed blocks waiting for reuse) and the cap.
int64_t block_cache_held();
int64_t block_cache_cap();

} // namespace rowops
