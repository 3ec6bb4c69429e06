/* The launcher of the paired probe's device copy (probe_copy_kernel.cuh):
 * a grid of 4 blocks of 256 threads per SM at most, on the caller's
 * stream. */
#include "probe_copy.h"
#include "probe_copy_kernel.cuh"

#include <stdint.h>

namespace
{

__global__ void __launch_bounds__(256)
    copy_pairs_kernel(const opcost_probe::copy_pairs p)
{
    opcost_probe::copy_pairs_body(p);
}

} // namespace

extern "C" int opcost_cuda_copy_pairs(void *const dst[2],
                                      const void *const src[2], int pairs,
                                      size_t bytes, void *stream)
{
    if (pairs < 1 || pairs > 2 || bytes % 8)
        return (int)cudaErrorInvalidValue;
    opcost_probe::copy_pairs p{};
    for (int k = 0; k < pairs; ++k) {
        if ((uintptr_t)dst[k] % 16 || (uintptr_t)src[k] % 16)
            return (int)cudaErrorInvalidValue;
        p.dst[k] = static_cast<uint4 *>(dst[k]);
        p.src[k] = static_cast<const uint4 *>(src[k]);
    }
    p.words = (long long)(bytes / 16);
    p.tail8 = bytes % 16 != 0;
    p.pairs = pairs;
    if (!bytes)
        return 0;
    int device = 0, sms = 0;
    if (cudaGetDevice(&device) != cudaSuccess ||
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount,
                               device) != cudaSuccess)
        return (int)cudaGetLastError();
    const long long blocks = (p.words + 256) / 256, most = 4LL * sms;
    copy_pairs_kernel<<<(unsigned)(blocks < most ? blocks : most), 256, 0,
                        (cudaStream_t)stream>>>(p);
    return (int)cudaGetLastError();
}
