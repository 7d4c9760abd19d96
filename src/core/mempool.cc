#include "singa/core/mempool.h"

#include <sys/mman.h>

#include <bit>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "singa/core/error.h"

namespace singa {
namespace {

// Blocks of this size and up are mapped from the OS directly, and unmapped
// when freed uncached. Through malloc they would come from glibc's heap once
// its dynamic mmap threshold has risen past them (it does when the first big
// block is freed), and a freed block in the middle of that heap stays
// resident: MobileNet-V2 at batch 8, whose plan build frees blocks of every
// size, peaked at 263 MiB that way and at 127 MiB mapped (onnxruntime: 123).
constexpr size_t kMapBytes = size_t{256} << 10;

void* OsAlloc(size_t size) {
  if (size < kMapBytes) return std::aligned_alloc(MemPool::kAlignment, size);
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

void OsFree(void* p, size_t size) {
  if (size < kMapBytes)
    std::free(p);
  else
    munmap(p, size);
}

thread_local MemoryLimit* t_limit = nullptr;

}  // namespace

MemoryLimit::MemoryLimit(MemPool& pool, size_t bytes)
    : pool_(&pool), base_(pool.stats().current_bytes), bytes_(bytes), outer_(t_limit) {
  t_limit = this;
}

MemoryLimit::~MemoryLimit() { t_limit = outer_; }

size_t MemPool::RoundSize(size_t bytes) {
  if (bytes <= 4096)
    return bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  size_t top = std::bit_floor(bytes);
  size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

MemPool::~MemPool() { EmptyCache(); }

MemPool::MemPool() : MemPool(MemBackend{}) {}
MemPool::MemPool(MemBackend backend)
    : poison_(std::getenv("SINGA_POISON_MEMORY") != nullptr), backend_(backend) {}

void* MemPool::Alloc(size_t size) {
  return backend_.alloc ? backend_.alloc(size, backend_.device) : OsAlloc(size);
}
void MemPool::Release(void* ptr, size_t size) {
  if (backend_.free)
    backend_.free(ptr, size, backend_.device);
  else
    OsFree(ptr, size);
}

void* MemPool::Malloc(size_t bytes) {
  size_t size = RoundSize(bytes);
  void* p = nullptr;
  bool temporary = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    temporary = temporaries_scopes_ > 0;
    for (const MemoryLimit* l = t_limit; l; l = l->outer_) {
      const int64_t above = stats_.current_bytes + static_cast<int64_t>(size) - l->base_;
      SINGA_CHECK(l->pool_ != this || above <= static_cast<int64_t>(l->bytes_), MemoryError,
                  "memory limit: " << bytes << " more bytes would take the memory in use to "
                                   << above << " bytes above where it was when the limit was "
                                   << "set, over the limit of " << l->bytes_);
    }
    stats_.num_mallocs++;
    stats_.current_bytes += size;
    if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      p = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= size;
    } else {
      stats_.num_os_allocs++;
    }
  }
  if (!p) {
    p = Alloc(size);
    if (!p) {
      EmptyCache();
      p = Alloc(size);
    }
    if (!p) {
      std::lock_guard<std::mutex> lock(mu_);
      stats_.current_bytes -= size;
      throw MemoryError(std::string("out of memory: the ") + (backend_.alloc ? "GPU" : "system") +
                        " refused " + std::to_string(size) + " bytes");
    }
  }
  if (temporary) {
    std::lock_guard<std::mutex> lock(mu_);
    if (temporaries_scopes_ > 0) temporaries_.insert(p);
  }
  if (poison_) {
    if (backend_.fill)
      backend_.fill(p, 0xff, size, backend_.device);
    else
      std::memset(p, 0xff, size);
  }
  return p;
}

void MemPool::Free(void* ptr, size_t bytes) {
  if (!ptr) return;
  size_t size = RoundSize(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.current_bytes -= size;
    const bool temporary = !temporaries_.empty() && temporaries_.erase(ptr) > 0;
    if (caching_ && !temporary) {
      free_[size].push_back(ptr);
      stats_.cached_bytes += size;
      return;
    }
  }
  Release(ptr, size);
}

MemStats MemPool::stats() const {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void MemPool::ResetPeak() {
  std::lock_guard<std::mutex> lock(mu_);
  stats_.peak_bytes = stats_.current_bytes;
}

void MemPool::EmptyCache() {
  std::unordered_map<size_t, std::vector<void*>> drop;
  {
    std::lock_guard<std::mutex> lock(mu_);
    drop.swap(free_);
    stats_.cached_bytes = 0;
  }
  for (auto& [size, ptrs] : drop)
    for (void* p : ptrs) Release(p, size);
}

void MemPool::set_caching(bool on) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    caching_ = on;
  }
  if (!on) EmptyCache();
}

MemPool::TemporariesScope::TemporariesScope(MemPool& pool) : pool_(pool) {
  std::lock_guard<std::mutex> lock(pool_.mu_);
  ++pool_.temporaries_scopes_;
}

MemPool::TemporariesScope::~TemporariesScope() {
  {
    std::lock_guard<std::mutex> lock(pool_.mu_);
    if (--pool_.temporaries_scopes_ > 0) return;
    // Blocks that outlive the last scope are the caller's to keep: cached when freed.
    pool_.temporaries_.clear();
  }
  // What the scope's work did not take from the cache, it will not ask for.
  pool_.EmptyCache();
}

bool MemPool::caching() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caching_;
}

}  // namespace singa
