// MemPool: the caching, 64-byte-aligned allocator behind every Block: of host
// memory by default, of a GPU's memory with a device backend (MemBackend).
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
//
//   { MemoryLimit limit(pool, 1 << 30); rep->Run(x); }  // MemoryError past 1 GiB more
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace singa {

struct MemStats {
  int64_t current_bytes = 0;  // in use by live blocks (rounded to size classes)
  int64_t peak_bytes = 0;     // maximum of current_bytes since the last ResetPeak
  int64_t cached_bytes = 0;   // freed and kept for reuse
  int64_t num_mallocs = 0;    // requests served
  int64_t num_os_allocs = 0;  // requests that went to the OS
};

class MemoryLimit;

// Where a pool's memory comes from when the host's is not wanted: a GPU's
// allocator. `alloc` returns null when the device refuses; `fill` sets
// every byte (SINGA_POISON_MEMORY).
struct MemBackend {
  void* (*alloc)(size_t bytes, int device) = nullptr;
  void (*free)(void* ptr, size_t bytes, int device) = nullptr;
  void (*fill)(void* ptr, int byte, size_t bytes, int device) = nullptr;
  int device = 0;
};

class MemPool {
 public:
  static constexpr size_t kAlignment = 64;

  // With SINGA_POISON_MEMORY set in the environment, every allocation is
  // filled with 0xff bytes (NaN floats, -1 integers) before it is handed out,
  // so an op that leaves part of its output unwritten shows it in tests
  // instead of returning what the memory held before.
  MemPool();
  explicit MemPool(MemBackend backend);
  ~MemPool();
  MemPool(const MemPool&) = delete;
  MemPool& operator=(const MemPool&) = delete;

  // Never returns null; 0 bytes gives a valid, unique, aligned pointer.
  // Throws MemoryError past a MemoryLimit or when the system refuses.
  void* Malloc(size_t bytes);
  // `bytes` must be the size passed to Malloc.
  void Free(void* ptr, size_t bytes);

  MemStats stats() const;
  void ResetPeak();
  void EmptyCache();
  // With caching off, Free returns memory to the OS at once.
  void set_caching(bool on);
  bool caching() const;

  // While one lives, the blocks allocated and freed within it go back to the
  // OS instead of the cache (a plan build's temporaries, in size classes the
  // replay never asks for); what was cached before stays for Malloc, and a
  // block from before that is freed is cached (a dropped model's packed
  // weights, whose pages a new one of the same model can reuse). When the
  // last scope ends, what is left in the cache goes back to the OS. Scopes
  // on several threads nest.
  class TemporariesScope {
   public:
    explicit TemporariesScope(MemPool& pool);
    ~TemporariesScope();
    TemporariesScope(const TemporariesScope&) = delete;
    TemporariesScope& operator=(const TemporariesScope&) = delete;

   private:
    MemPool& pool_;
  };

  // Size class of a request: exact multiples of 64 up to 4 KiB, then eight
  // classes per power of two (at most 12.5% waste).
  static size_t RoundSize(size_t bytes);

 private:
  mutable std::mutex mu_;
  std::unordered_map<size_t, std::vector<void*>> free_;
  MemStats stats_;
  void* Alloc(size_t size);
  void Release(void* ptr, size_t size);
  bool caching_ = true;
  int temporaries_scopes_ = 0;
  std::unordered_set<void*> temporaries_;  // allocated while a TemporariesScope lives
  const bool poison_;
  const MemBackend backend_;  // alloc null: host memory
};

// Bounds what a piece of work (a run, a prepare) may take from a pool: while
// alive, an allocation on this thread that would put the pool's bytes in use
// more than `bytes` above where they were when the scope began throws
// MemoryError, and nothing is allocated. Scopes nest; each applies. Other
// threads' allocations in the meantime count too: the pool is shared.
class MemoryLimit {
 public:
  MemoryLimit(MemPool& pool, size_t bytes);
  ~MemoryLimit();
  MemoryLimit(const MemoryLimit&) = delete;
  MemoryLimit& operator=(const MemoryLimit&) = delete;

 private:
  friend class MemPool;
  MemPool* pool_;
  int64_t base_;
  size_t bytes_;
  MemoryLimit* outer_;
};

}  // namespace singa
