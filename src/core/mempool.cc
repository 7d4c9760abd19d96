#include "singa/core/mempool.h"

#include <bit>
#include <cstdlib>
#include <new>

namespace singa {

size_t MemPool::RoundSize(size_t bytes) {
  if (bytes <= 4096)
    return bytes == 0 ? kAlignment : (bytes + kAlignment - 1) / kAlignment * kAlignment;
  size_t top = std::bit_floor(bytes);
  size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

MemPool::~MemPool() { EmptyCache(); }

void* MemPool::Malloc(size_t bytes) {
  size_t size = RoundSize(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.num_mallocs++;
    stats_.current_bytes += size;
    if (stats_.current_bytes > stats_.peak_bytes) stats_.peak_bytes = stats_.current_bytes;
    auto it = free_.find(size);
    if (it != free_.end() && !it->second.empty()) {
      void* p = it->second.back();
      it->second.pop_back();
      stats_.cached_bytes -= size;
      return p;
    }
    stats_.num_os_allocs++;
  }
  void* p = std::aligned_alloc(kAlignment, size);
  if (!p) {
    EmptyCache();
    p = std::aligned_alloc(kAlignment, size);
  }
  if (!p) {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.current_bytes -= size;
    throw std::bad_alloc();
  }
  return p;
}

void MemPool::Free(void* ptr, size_t bytes) {
  if (!ptr) return;
  size_t size = RoundSize(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    stats_.current_bytes -= size;
    if (caching_) {
      free_[size].push_back(ptr);
      stats_.cached_bytes += size;
      return;
    }
  }
  std::free(ptr);
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
    for (void* p : ptrs) std::free(p);
}

void MemPool::set_caching(bool on) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    caching_ = on;
  }
  if (!on) EmptyCache();
}

bool MemPool::caching() const {
  std::lock_guard<std::mutex> lock(mu_);
  return caching_;
}

}  // namespace singa
