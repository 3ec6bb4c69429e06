/* A CPU emulation of the few CUDA features the rowops kernels use, so the
 * device code itself (kernels/cuda/\*_kernel.cuh) runs in ctest without a
 * GPU: every thread of a block is a fiber (ucontext), __syncthreads and
 * the warp shuffles are barriers between fibers, blocks run one after the
 * other, shared memory is a function-static array (one block at a time).
 * One ready thread at a time runs until it blocks: after every
 * __syncthreads one warp, picked pseudo-randomly, runs ahead of all the
 * others to the next one (most of the time), the rest in a random order,
 * so an access to shared memory that a missing barrier leaves unordered
 * sees the wrong value in some run. A
 * barrier that not every live thread of the block (or warp) reaches is
 * reported as a deadlock.
 *
 * It checks indexing, reductions, barriers and the arithmetic; it says
 * nothing about timing, coalescing or the GPU's memory model.
 *
 * Include it before any kernel header, in one C++ file. */
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <ucontext.h>
#include <vector>

uint3 threadIdx, blockIdx, blockDim, gridDim;

namespace simt
{

enum state { RUNNING, AT_BLOCK_BARRIER, AT_WARP_BARRIER, DONE };

struct emulator {
    int threads = 0;
    int current = 0;
    std::vector<ucontext_t> ctx;
    std::vector<state> st;
    std::vector<char> stacks;
    std::vector<unsigned char> dynamic_smem;
    unsigned long long slot[1024];
    ucontext_t sched;
    std::function<void()> body;
    unsigned rng = 12345u;
    bool deadlock = false;
    long switches = 0;
};

inline emulator &emu()
{
    static emulator e;
    return e;
}

inline void set_thread(int t)
{
    emulator &e = emu();
    e.current = t;
    threadIdx.x = (unsigned)t;
    threadIdx.y = threadIdx.z = 0;
}

inline void wait(state s)
{
    emulator &e = emu();
    e.st[e.current] = s;
    ++e.switches;
    swapcontext(&e.ctx[e.current], &e.sched);
}

inline void entry()
{
    emu().body();
    wait(DONE);
}

/* Thread t's fiber at the start of the body (getcontext returns twice:
 * kept out of the scheduler's frame). */
__attribute__((noinline)) inline void start_fiber(unsigned t, size_t stack)
{
    emulator &e = emu();
    getcontext(&e.ctx[t]);
    e.ctx[t].uc_stack.ss_sp = &e.stacks[t * stack];
    e.ctx[t].uc_stack.ss_size = stack;
    e.ctx[t].uc_link = nullptr;
    makecontext(&e.ctx[t], entry, 0);
    e.st[t] = RUNNING;
}

/* After each __syncthreads (and at the start) one warp, or none (one time
 * in three), is favoured: it runs ahead of all others. */
inline int pick_favoured(unsigned threads)
{
    emulator &e = emu();
    e.rng = e.rng * 1103515245u + 12345u;
    const unsigned warps = (threads + 31) / 32, r = (e.rng >> 8) % (warps * 3);
    return r < warps * 2 ? (int)(r % warps) : -1;
}

/* Runs `body` as every thread of a grid; false on a deadlock. */
inline bool launch(unsigned grid, unsigned threads, size_t dyn_smem,
                   const std::function<void()> &body)
{
    constexpr size_t STACK = 64 * 1024;
    emulator &e = emu();
    e.threads = (int)threads;
    e.ctx.assign(threads, ucontext_t{});
    e.st.assign(threads, RUNNING);
    e.stacks.assign(threads * STACK, 0);
    e.dynamic_smem.assign(dyn_smem + 16, 0xff);
    e.body = body;
    e.deadlock = false;
    blockDim.x = threads;
    blockDim.y = blockDim.z = gridDim.y = gridDim.z = 1;
    gridDim.x = grid;
    std::vector<int> ready;
    ready.reserve(threads);
    for (unsigned b = 0; b < grid && !e.deadlock; ++b) {
        blockIdx.x = b;
        blockIdx.y = blockIdx.z = 0;
        ready.clear();
        for (unsigned t = 0; t < threads; ++t) {
            start_fiber(t, STACK);
            ready.push_back((int)t);
        }
        int done = 0, at_block = 0, favoured = pick_favoured(threads);
        while (done < (int)threads) {
            if (ready.empty()) {
                if (at_block + done == (int)threads && done == 0) {
                    favoured = pick_favoured(threads);
                    for (unsigned t = 0; t < threads; ++t) {
                        e.st[t] = RUNNING;
                        ready.push_back((int)t);
                    }
                    at_block = 0;
                    continue;
                }
                fprintf(stderr,
                        "simt: deadlock in block %u: %d threads done, %d at "
                        "__syncthreads, the rest at a warp shuffle\n",
                        b, done, at_block);
                e.deadlock = true;
                break;
            }
            /* one ready thread runs until it blocks: a thread of the
             * favoured warp if one is ready (that warp runs ahead to the
             * next __syncthreads), else any, at random */
            e.rng = e.rng * 1103515245u + 12345u;
            size_t pick = (e.rng >> 8) % ready.size();
            for (size_t i = 0; favoured >= 0 && i < ready.size(); ++i)
                if (ready[i] >> 5 == favoured) {
                    pick = i;
                    break;
                }
            const int t = ready[pick];
            ready[pick] = ready.back();
            ready.pop_back();
            set_thread(t);
            swapcontext(&e.sched, &e.ctx[t]);
            if (e.st[t] == DONE) {
                ++done;
            } else if (e.st[t] == AT_BLOCK_BARRIER) {
                ++at_block;
            } else if (e.st[t] == AT_WARP_BARRIER) {
                /* its warp goes on at once when all 32 have arrived */
                const unsigned w0 = (unsigned)t & ~31u;
                bool all = true;
                for (unsigned u = w0; u < w0 + 32 && u < threads; ++u)
                    all = all && e.st[u] == AT_WARP_BARRIER;
                if (all)
                    for (unsigned u = w0; u < w0 + 32 && u < threads; ++u) {
                        e.st[u] = RUNNING;
                        ready.push_back((int)u);
                    }
            }
        }
    }
    return !e.deadlock;
}

inline unsigned char *dynamic_smem()
{
    return emu().dynamic_smem.data();
}

} // namespace simt

inline void __syncthreads()
{
    simt::wait(simt::AT_BLOCK_BARRIER);
}

template <typename T> inline T __shfl_xor_sync(unsigned mask, T v, int lane)
{
    static_assert(sizeof(T) <= 8, "shuffle of at most 8 bytes");
    simt::emulator &e = simt::emu();
    if (mask != 0xffffffffu) {
        fprintf(stderr, "simt: partial shuffle masks are not emulated\n");
        abort();
    }
    const int me = e.current;
    unsigned long long bits = 0;
    memcpy(&bits, &v, sizeof v);
    e.slot[me] = bits;
    simt::wait(simt::AT_WARP_BARRIER);
    const int from = (me & ~31) | ((me & 31) ^ (lane & 31));
    T out;
    memcpy(&out, &e.slot[from], sizeof out);
    simt::wait(simt::AT_WARP_BARRIER); /* slots are reused by the next */
    return out;
}

inline int __ffs(int v)
{
    return __builtin_ffs(v);
}

inline int __clz(int v)
{
    return v == 0 ? 32 : __builtin_clz((unsigned)v);
}

/* Device-code keywords as plain C++: shared memory is static (one block
 * runs at a time), the dynamic part is the emulator's buffer. */
#undef __shared__
#define __shared__ static
#define ROWOPS_DYNAMIC_SMEM(name) unsigned char *name = simt::dynamic_smem()
