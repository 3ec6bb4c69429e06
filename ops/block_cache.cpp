#include "block_cache.h"

#include <ATen/Context.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <cstdlib>
#include <deque>
#include <mutex>

namespace rowops
{
namespace
{

struct Block {
    void *ptr;
    size_t size;
};

class BlockCache final : public c10::Allocator
{
  public:
    BlockCache()
    {
        const char *env = std::getenv("ROWOPS_CPU_BLOCK_CACHE_MB");
        const long long mb = env ? std::atoll(env) : 1024;
        cap_ = mb > 0 ? static_cast<size_t>(mb) << 20 : 0;
    }

    c10::DataPtr allocate(size_t n) override
    {
        void *p = take(n);
        if (!p)
            p = c10::alloc_cpu(n);
        auto *b = new Block{p, n};
        return {p, b, &give_back, c10::Device(c10::DeviceType::CPU)};
    }

    void copy_data(void *dest, const void *src, size_t count) const override
    {
        default_copy_data(dest, src, count);
    }

    int64_t release()
    {
        std::deque<Block> all;
        {
            std::lock_guard<std::mutex> lock(mu_);
            all.swap(free_);
            held_ = 0;
        }
        int64_t bytes = 0;
        for (const Block &b : all) {
            bytes += static_cast<int64_t>(b.size);
            c10::free_cpu(b.ptr);
        }
        return bytes;
    }

    int64_t held()
    {
        std::lock_guard<std::mutex> lock(mu_);
        return static_cast<int64_t>(held_);
    }
    int64_t cap() const { return static_cast<int64_t>(cap_); }

  private:
    // The smallest held block of at least n bytes and at most n + n/8.
    void *take(size_t n)
    {
        std::lock_guard<std::mutex> lock(mu_);
        auto best = free_.end();
        for (auto it = free_.begin(); it != free_.end(); ++it)
            if (it->size >= n && it->size - n <= n / 8 &&
                (best == free_.end() || it->size < best->size))
                best = it;
        if (best == free_.end())
            return nullptr;
        void *p = best->ptr;
        held_ -= best->size;
        free_.erase(best);
        return p;
    }

    static void give_back(void *ctx);

    void keep(Block b)
    {
        std::deque<Block> evicted;
        {
            std::lock_guard<std::mutex> lock(mu_);
            if (b.size <= cap_) {
                while (held_ + b.size > cap_ ||
                       free_.size() >= kBlockCacheEntries) {
                    evicted.push_back(free_.front());
                    held_ -= free_.front().size;
                    free_.pop_front();
                }
                free_.push_back(b);
                held_ += b.size;
                b.ptr = nullptr;
            }
        }
        for (const Block &e : evicted)
            c10::free_cpu(e.ptr);
        if (b.ptr)
            c10::free_cpu(b.ptr);
    }

    std::mutex mu_;
    std::deque<Block> free_; // oldest first
    size_t held_ = 0;
    size_t cap_ = 0;
};

BlockCache &cache()
{
    // Never destroyed: tensors may be freed after static destruction.
    static BlockCache *c = new BlockCache();
    return *c;
}

void BlockCache::give_back(void *ctx)
{
    auto *b = static_cast<Block *>(ctx);
    const Block block = *b;
    delete b;
    cache().keep(block);
}

} // namespace

at::Tensor empty_cpu_cached(at::IntArrayRef sizes, at::ScalarType dtype)
{
    const size_t bytes = static_cast<size_t>(c10::multiply_integers(sizes)) *
                         c10::elementSize(dtype);
    // empty_generic, not at::empty: no trip through the dispatcher
    // (~0.1 us per output at decode sizes).
    c10::Allocator *allocator = bytes < kBlockCacheMin || cache().cap() == 0
                                    ? c10::GetCPUAllocator()
                                    : &cache();
    at::Tensor t = at::detail::empty_generic(
        sizes, allocator, c10::DispatchKeySet(c10::DispatchKey::CPU), dtype,
        at::MemoryFormat::Contiguous);
    if (at::globalContext().deterministicAlgorithms() &&
        at::globalContext().deterministicFillUninitializedMemory())
        at::native::fill_empty_deterministic_(t);
    return t;
}

int64_t block_cache_release()
{
    return cache().release();
}

int64_t block_cache_held()
{
    return cache().held();
}

int64_t block_cache_cap()
{
    return cache().cap();
}

} // namespace rowops
