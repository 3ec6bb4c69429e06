/* The paired probe's device copy: up to two (source, destination) pairs of
 * one size copied in one launch, 16 bytes a thread per step, the pairs
 * interleaved so both streams are in flight together. One launch, as the
 * fused op is one launch: with a copy per pair (two launches) the probe
 * read half the op's speed at B = 64 on an H200 and was no ceiling there
 * (results/experiments/20261204-h200-gpu-check). Device code only: the
 * launcher is probe_copy.cu, and tests/c/test_cuda_emulated.cpp runs this
 * on the CPU. */
#pragma once

#include <cuda_runtime.h>

namespace opcost_probe
{

struct copy_pairs {
    const uint4 *src[2];
    uint4 *dst[2];
    long long words; /* whole 16-byte words a pair */
    int tail8;       /* 1: an 8-byte word after them */
    int pairs;       /* 1 or 2 */
};

__device__ __forceinline__ void copy_pairs_body(const copy_pairs &p)
{
    const long long step = (long long)gridDim.x * blockDim.x;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < p.words; i += step) {
        const uint4 a = p.src[0][i];
        if (p.pairs > 1) {
            const uint4 b = p.src[1][i];
            p.dst[1][i] = b;
        }
        p.dst[0][i] = a;
    }
    if (p.tail8 && blockIdx.x == 0 && threadIdx.x == 0)
        for (int k = 0; k < p.pairs; ++k)
            reinterpret_cast<uint2 *>(p.dst[k] + p.words)[0] =
                reinterpret_cast<const uint2 *>(p.src[k] + p.words)[0];
}

} // namespace opcost_probe
