/* Host side shared by the CUDA entry points: device limits, per-kernel
 * attributes (cached), and the error protocol of the launches. No
 * allocation, no synchronization: calls are capture-safe once a device's
 * kernels have been set up (the first call on a device does that). */
#include "common.cuh"

#include <map>
#include <mutex>
#include <utility>

namespace rowops_cuda
{
namespace
{

constexpr int MAX_DEVICES = 64;
rowops_cuda_device limits[MAX_DEVICES];
std::once_flag limits_once[MAX_DEVICES];

std::mutex attr_mutex;
std::map<std::pair<int, const void *>, rowops_cuda_kernel_attr> attrs;

int attribute(cudaDeviceAttr what, int device)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, what, device) != cudaSuccess)
        return 0;
    return v;
}

} // namespace

const rowops_cuda_device &device_limits(int device)
{
    static rowops_cuda_device none = {};
    if (device < 0 || device >= MAX_DEVICES)
        return none;
    std::call_once(limits_once[device], [device] {
        rowops_cuda_device &d = limits[device];
        d.sm_count = attribute(cudaDevAttrMultiProcessorCount, device);
        d.max_threads_per_sm =
            attribute(cudaDevAttrMaxThreadsPerMultiProcessor, device);
        d.max_blocks_per_sm =
            attribute(cudaDevAttrMaxBlocksPerMultiprocessor, device);
        d.regs_per_sm =
            attribute(cudaDevAttrMaxRegistersPerMultiprocessor, device);
        d.smem_per_sm =
            attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device);
        d.smem_per_block_optin =
            attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device);
    });
    return limits[device];
}

rowops_cuda_kernel_attr kernel_attr(int device, const void *kernel)
{
    const std::lock_guard<std::mutex> lock(attr_mutex);
    const auto key = std::make_pair(device, kernel);
    const auto found = attrs.find(key);
    if (found != attrs.end())
        return found->second;
    rowops_cuda_kernel_attr a = {0, 0};
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, kernel) == cudaSuccess) {
        a.regs = fa.numRegs;
        a.static_smem = (int)fa.sharedSizeBytes;
        /* dynamic shared memory beyond 48 KiB needs the opt-in */
        const int most = device_limits(device).smem_per_block_optin;
        if (most > a.static_smem)
            (void)cudaFuncSetAttribute(
                kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                most - a.static_smem);
    }
    /* a failure here is left for the launch to report */
    attrs[key] = a;
    return a;
}

int pending_error()
{
    const cudaError_t e = cudaGetLastError();
    return e == cudaSuccess ? 0 : -(int)e;
}

int launch_error()
{
    return (int)cudaGetLastError();
}

} // namespace rowops_cuda
