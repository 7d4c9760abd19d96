// MemPool: the caching, 64-byte-aligned host allocator behind every Block.
// Freed memory goes back to a per-size-class cache instead of the OS, so the
// steady state of a training or inference loop makes no malloc/munmap calls.
// Blocks of 256 KiB and more are mapped from the OS (mmap) rather than taken
// from malloc's heap, so that memory freed to the OS leaves the process.
//
//   MemPool& pool = Device::Cpu().mem_pool();
//   void* p = pool.Malloc(1 << 20);
//   pool.Free(p, 1 << 20);            // cached, not released
//   pool.stats().peak_bytes;          // high-water mark of bytes in use
//   pool.EmptyCache();                // return cached memory to the OS
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace singa {

struct MemStats {
  int64_t current_bytes = 0;  // in use by live blocks (rounded to size classes)
  int64_t peak_bytes = 0;     // maximum of current_bytes since the last ResetPeak
  int64_t cached_bytes = 0;   // freed and kept for reuse
  int64_t num_mallocs = 0;    // requests served
  int64_t num_os_allocs = 0;  // requests that went to the OS
};

class MemPool {
 public:
  static constexpr size_t kAlignment = 64;

  MemPool() = default;
  ~MemPool();
  MemPool(const MemPool&) = delete;
  MemPool& operator=(const MemPool&) = delete;

  // Never returns null; 0 bytes gives a valid, unique, aligned pointer.
  void* Malloc(size_t bytes);
  // `bytes` must be the size passed to Malloc.
  void Free(void* ptr, size_t bytes);

  MemStats stats() const;
  void ResetPeak();
  void EmptyCache();
  // With caching off, Free returns memory to the OS at once.
  void set_caching(bool on);
  bool caching() const;

  // Size class of a request: exact multiples of 64 up to 4 KiB, then eight
  // classes per power of two (at most 12.5% waste).
  static size_t RoundSize(size_t bytes);

 private:
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  MemStats stats_;
  bool caching_ = true;
};

}  // namespace singa
