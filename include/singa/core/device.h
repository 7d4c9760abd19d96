// Device: a value naming one piece of hardware ({type, index}, like c10's
// Device), and the runtime behind it: its MemPool, its random generator and its
// Scheduler. Every kernel reaches the hardware through Device::Exec, which runs
// the closure now (eager) or records it while a graph is being captured, so
// graph mode needs no change to any op.
//
//   Device cpu = Device::Cpu();
//   auto block = std::make_shared<Block>(cpu, 1024);
//   cpu.Exec([&] { Fill(block->data()); }, {}, {});   // runs now
//   cpu.EnableGraph(true);  ...ops are recorded...   cpu.EnableGraph(false);
//   cpu.RunGraph();                                   // replays the recording
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "singa/core/dtype.h"
#include "singa/core/mempool.h"

namespace singa {

enum class DeviceType : uint8_t { kCpu = 0, kCuda = 1, kOpenCL = 2 };

class Block;
class DeviceRuntime;
class Tensor;

// Memory that recordings take turns in: the plans of one model for inputs
// of different shapes, which never replay at once and keep nothing in their
// arenas from one replay to the next. Each is placed from the start; one
// that needs more gets a new arena (at least half again as large), which
// later ones share; the owner of the plans placed before moves them there
// (Block::Move) so that the old arena can go.
struct SharedArena {
  std::shared_ptr<void> memory;
  size_t bytes = 0;
};
// The blocks of a recording in its arena, at their offsets: what moving it to
// another arena, as large, changes (Block::Move). The recording owns them.
using ArenaPlacement = std::vector<std::pair<Block*, size_t>>;

struct Device {
  DeviceType type = DeviceType::kCpu;
  int index = 0;

  static Device Cpu() { return Device{}; }
  // GPU `index`: UnsupportedOp when this build has no CUDA support or the
  // machine no such GPU.
  static Device Cuda(int index = 0);
  // GPUs this process can use: 0 without CUDA support, driver or GPU.
  static int NumCudaGpus();
  // Throws UnsupportedOp: this build has no OpenCL runtime.
  static Device OpenCL(int index = 0);

  friend bool operator==(const Device&, const Device&) = default;
  std::string ToString() const;  // "cpu:0"

  DeviceRuntime& runtime() const;
  MemPool& mem_pool() const;

  // Runs `fn` now, or records it (with the blocks it reads and writes) while a
  // graph is being captured on this device.
  template <class F>
  void Exec(F&& fn, std::span<const Tensor> reads, std::span<const Tensor> writes) const;

  // Graph capture and replay (SINGA's Scheduler).
  void EnableGraph(bool enable) const;
  bool graph_enabled() const;
  void RunGraph(bool sequential = false) const;
  void ResetGraph() const;
  size_t graph_size() const;  // ops recorded
  // Places the blocks the recorded graph creates (those not yet allocated)
  // in one arena, sharing memory between blocks whose lifetimes in the
  // recording do not overlap. Blocks of `keep` (results read after a replay)
  // get memory of their own. Returns the arena's size in bytes. With
  // `shared`, the arena is that one's. Blocks of `inputs` (written before a
  // replay) live from its first op on. `placement` receives where each block
  // went.
  size_t PlanGraphMemory(std::span<const Tensor> keep, SharedArena* shared = nullptr,
                         std::span<const Tensor> inputs = {},
                         ArenaPlacement* placement = nullptr) const;
  // Waits for the device's queued work (a GPU's stream); CPU ops complete
  // before Exec returns.
  void Sync() const;

  void SetRandSeed(uint64_t seed) const;
  std::mt19937_64& rng() const;
  void SetVerbosity(int level) const;
};

// A device allocation: the storage a Tensor views. Memory comes from the
// device's MemPool and is allocated on first access to data() (SINGA's lazy
// allocation), so a recorded graph can place it later. A string block
// constructs std::string objects in place. Threads may race to the first
// data() of a block (the directions of a bidirectional recurrent layer
// writing one output): one allocation wins and all of them see it.
class Block {
 public:
  Block(Device device, size_t bytes, DType dtype = DType::kUInt8);
  // Wraps memory owned elsewhere (e.g. a numpy array); `owner` keeps it
  // alive, or, null, the caller does while the block is in use.
  Block(Device device, void* data, size_t bytes, std::shared_ptr<void> owner);
  ~Block();
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  void* data() {
    void* p = ptr_.load(std::memory_order_acquire);
    return p || !bytes_ ? p : Allocate();
  }
  bool allocated() const { return ptr_.load(std::memory_order_acquire) != nullptr || bytes_ == 0; }
  // Backs an unallocated block with memory owned by `owner` (a graph's arena).
  void Place(void* ptr, std::shared_ptr<void> owner);
  // Moves a placed block to `ptr` in `owner`'s memory, leaving its contents
  // behind (a plan's arena holds nothing from one replay to the next).
  void Move(void* ptr, std::shared_ptr<void> owner);
  // A new block that owns this one's memory (from the pool, allocated),
  // leaving this one unallocated: its next data() allocates afresh. A
  // replayed plan's result goes to the caller this way instead of as a copy.
  std::shared_ptr<Block> TakeMemory();
  // Wrapped memory that nothing here keeps alive: lent for one call (the
  // numpy arrays of a run), so whatever could keep it longer copies it.
  bool borrowed() const { return !owned_ && !owner_; }
  size_t size() const { return bytes_; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  // Changes whenever an op writes the block (through Device::Exec, eager or
  // replayed), from one process-wide counter: (block, version) names one
  // content, so caches of values derived from a block (reordered weights,
  // folded constants) can tell when they are stale.
  uint64_t version() const { return version_; }
  void Touch() { version_ = NextVersion(); }

 private:
  static uint64_t NextVersion();
  void* Allocate();
  void Release(void* p);  // destroys a string block's strings, frees p
  uint64_t version_ = NextVersion();
  Device device_;
  std::atomic<void*> ptr_{nullptr};
  size_t bytes_ = 0;
  DType dtype_;
  bool owned_ = true;            // false for wrapped memory
  std::shared_ptr<void> owner_;  // keeps wrapped memory alive
};

// Per-device state; reached through Device::runtime().
class DeviceRuntime {
 public:
  struct Op {
    std::function<void()> fn;
    std::vector<std::shared_ptr<Block>> reads, writes;
  };

  DeviceRuntime() = default;
  explicit DeviceRuntime(MemBackend backend) : pool_(backend) {}
  MemPool& mem_pool() { return pool_; }
  bool capturing() const { return capturing_; }
  void Record(Op op) { graph_.push_back(std::move(op)); }
  void EnableGraph(bool enable) { capturing_ = enable; }
  void RunGraph(bool sequential);
  // Runs recorded ops in order, as Exec would have (their written blocks
  // get new versions).
  static void Replay(std::vector<Op>& ops);
  void ResetGraph() { graph_.clear(); }
  // Moves the recording out (a captured step keeps and replays its own).
  std::vector<Op> TakeGraph() { return std::exchange(graph_, {}); }
  size_t PlanGraphMemory(std::span<const Tensor> keep, SharedArena* shared = nullptr,
                         std::span<const Tensor> inputs = {}, ArenaPlacement* placement = nullptr);
  size_t graph_size() const { return graph_.size(); }
  std::mt19937_64& rng() { return rng_; }
  int verbosity = 0;

 private:
  MemPool pool_;
  bool capturing_ = false;
  std::vector<Op> graph_;
  std::mt19937_64 rng_{0};
};

namespace internal {
// What the GPU backend (src/kernels/cuda, in builds with CUDA) gives the
// core; it registers itself when the library loads.
struct GpuBackend {
  int (*count)();                      // GPUs visible
  DeviceRuntime& (*runtime)(int gpu);  // created on first use
  void (*sync)(int gpu);               // waits for the GPU's stream
};
void SetGpuBackend(const GpuBackend* backend);
std::shared_ptr<Block> BlockOf(const Tensor& t);
// What Exec does after running an op (new versions for the written blocks)
// and, during a capture, instead of running it. Out of line: Tensor is
// incomplete here.
void TouchBlocks(std::span<const Tensor> writes);
void Record(DeviceRuntime& rt, std::function<void()> fn, std::span<const Tensor> reads,
            std::span<const Tensor> writes);
}  // namespace internal

// Runs the device's ops at once while alive, even during a graph capture: for
// state created on a captured step that must not be re-created on every
// replay (optimizer slots, say).
class CaptureSuspendGuard {
 public:
  explicit CaptureSuspendGuard(Device device);
  ~CaptureSuspendGuard();
  CaptureSuspendGuard(const CaptureSuspendGuard&) = delete;
  CaptureSuspendGuard& operator=(const CaptureSuspendGuard&) = delete;

 private:
  Device device_;
  bool was_;
};

template <class F>
void Device::Exec(F&& fn, std::span<const Tensor> reads, std::span<const Tensor> writes) const {
  DeviceRuntime& rt = runtime();
  if (!rt.capturing()) {
    fn();
    internal::TouchBlocks(writes);
    return;
  }
  internal::Record(rt, std::function<void()>(std::forward<F>(fn)), reads, writes);
}

}  // namespace singa
