#include "block_cache.h"

#include <ATen/Context.h>
#include <ATen/EmptyTensor.h>
#include <ATen/native/TensorFactories.h>
#include <c10/core/CPUAllocator.h>
#include <c10/core/impl/alloc_cpu.h>

#include <cstdint>
#include <cstdlib>
#include <deque>
#include <mutex>
#include <string>

namespace rowops
{
namespace
{

struct Block {
    void *ptr;
    size_t size;
};

constexpr const char *kCapVariable = "ROWOPS_CPU_BLOCK_CACHE_MB";
constexpr size_t kDefaultCapMb = 1024;
// The largest cap whose bytes fit in size_t.
constexpr size_t kMaxCapMb = SIZE_MAX >> 20;

class BlockCache final : public c10::Allocator
{
  public:
    BlockCache()
    {
        const char *env = std::getenv(kCapVariable);
        if (!env)
            cap_ = kDefaultCapMb << 20;
        else if (!parse_cache_mb(env, &cap_, &error_))
            cap_ = 0;
    }

    // The variable's error, raised by every call that would use the cache
    // (the ops' outputs), rather than running with a cap it did not ask for.
    void check() const { TORCH_CHECK(error_.empty(), error_); }

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
    std::string error_;
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
    cache().check();
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

bool parse_cache_mb(const char *text, size_t *bytes, std::string *err)
{
    // digits only: no sign, blanks, suffix or empty string; no wrap-around
    size_t mb = 0;
    bool ok = *text != '\0';
    for (const char *p = text; ok && *p; ++p) {
        const unsigned digit = static_cast<unsigned>(*p - '0');
        ok = digit <= 9 && mb <= (kMaxCapMb - digit) / 10;
        mb = mb * 10 + digit;
    }
    if (!ok) {
        *err = std::string(kCapVariable) +
               " must be a whole number of MiB from 0 (cache off) to " +
               std::to_string(kMaxCapMb) + " (got '" + text + "')";
        return false;
    }
    *bytes = mb << 20;
    return true;
}

int64_t parse_cache_mb_checked(const std::string &text)
{
    size_t bytes = 0;
    std::string err;
    TORCH_CHECK(parse_cache_mb(text.c_str(), &bytes, &err), err);
    return static_cast<int64_t>(bytes >> 20);
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
