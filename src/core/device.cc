#include "singa/core/device.h"

#include <algorithm>
#include <atomic>
#include <new>
#include <unordered_map>
#include <unordered_set>

#include "singa/core/error.h"
#include "singa/core/tensor.h"

namespace singa {

namespace {
const internal::GpuBackend* g_gpu = nullptr;
}  // namespace

void internal::SetGpuBackend(const GpuBackend* backend) { g_gpu = backend; }

Device Device::Cuda(int index) {
  SINGA_CHECK(g_gpu, UnsupportedOp,
              "CUDA device " << index
                             << " requested, but this build of singa has no CUDA support (build "
                                "with make setup CUDA=1, or -DSINGA_CUDA=ON)");
  SINGA_CHECK(NumCudaGpus() > 0, UnsupportedOp,
              "CUDA device requested, but no GPU is visible to this process (no NVIDIA driver "
              "or GPU, or CUDA_VISIBLE_DEVICES hides them)");
  SINGA_CHECK(
      index >= 0 && index < NumCudaGpus(), UnsupportedOp,
      "CUDA device " << index << " requested; this machine has " << NumCudaGpus() << " GPU(s)");
  return Device{DeviceType::kCuda, index};
}

int Device::NumCudaGpus() { return g_gpu ? g_gpu->count() : 0; }

void Device::Sync() const {
  if (type == DeviceType::kCuda && g_gpu) g_gpu->sync(index);
}

Device Device::OpenCL(int) {
  throw UnsupportedOp("OpenCL device requested, but this build of singa has no OpenCL support");
}

std::string Device::ToString() const {
  const char* names[] = {"cpu", "cuda", "opencl"};
  return std::string(names[static_cast<int>(type)]) + ":" + std::to_string(index);
}

DeviceRuntime& Device::runtime() const {
  if (type == DeviceType::kCuda && g_gpu) return g_gpu->runtime(index);
  SINGA_CHECK(type == DeviceType::kCpu && index == 0, UnsupportedOp,
              "device " << ToString() << " does not exist in this build");
  static DeviceRuntime* cpu = new DeviceRuntime();  // lives until exit: blocks free into it
  return *cpu;
}

MemPool& Device::mem_pool() const { return runtime().mem_pool(); }
void Device::EnableGraph(bool enable) const { runtime().EnableGraph(enable); }
bool Device::graph_enabled() const { return runtime().capturing(); }
void Device::RunGraph(bool sequential) const { runtime().RunGraph(sequential); }
void Device::ResetGraph() const { runtime().ResetGraph(); }
size_t Device::graph_size() const { return runtime().graph_size(); }
void Device::SetRandSeed(uint64_t seed) const { runtime().rng().seed(seed); }
std::mt19937_64& Device::rng() const { return runtime().rng(); }
void Device::SetVerbosity(int level) const { runtime().verbosity = level; }

size_t Device::PlanGraphMemory(std::span<const Tensor> keep, SharedArena* shared,
                               std::span<const Tensor> inputs, ArenaPlacement* placement) const {
  return runtime().PlanGraphMemory(keep, shared, inputs, placement);
}

CaptureSuspendGuard::CaptureSuspendGuard(Device device)
    : device_(device), was_(device.graph_enabled()) {
  device_.EnableGraph(false);
}
CaptureSuspendGuard::~CaptureSuspendGuard() { device_.EnableGraph(was_); }

void DeviceRuntime::RunGraph(bool) {
  // One CPU stream: the recorded order is already a dependency order, so
  // `sequential` changes nothing here.
  bool was = capturing_;
  capturing_ = false;
  Replay(graph_);
  capturing_ = was;
}

void DeviceRuntime::Replay(std::vector<Op>& ops) {
  for (Op& op : ops) {
    op.fn();
    for (const auto& b : op.writes)
      if (b) b->Touch();
  }
}

size_t DeviceRuntime::PlanGraphMemory(std::span<const Tensor> keep, SharedArena* shared,
                                      std::span<const Tensor> inputs, ArenaPlacement* placement) {
  struct Life {
    size_t first, last, bytes, offset = 0;
  };
  std::unordered_set<const Block*> kept;
  for (const Tensor& t : keep)
    if (t.defined()) kept.insert(t.block().get());
  // The lifetime of every block the recording created, in op indices.
  std::unordered_map<Block*, Life> lives;
  std::vector<Block*> order;
  for (size_t i = 0; i < graph_.size(); ++i) {
    for (const auto* list : {&graph_[i].reads, &graph_[i].writes}) {
      for (const auto& b : *list) {
        // (null: an absent optional input)
        if (!b || b->allocated() || kept.count(b.get()) || b->dtype() == DType::kString) continue;
        auto [it, inserted] = lives.try_emplace(b.get(), Life{i, i, b->size()});
        it->second.last = i;
        if (inserted) order.push_back(b.get());
      }
    }
  }
  for (const Tensor& t : inputs)
    if (t.defined())
      if (auto it = lives.find(t.block().get()); it != lives.end()) it->second.first = 0;
  // Greedy placement, largest first: the lowest offset that overlaps no
  // placed block alive at the same time.
  std::stable_sort(order.begin(), order.end(),
                   [&](Block* a, Block* b) { return lives[a].bytes > lives[b].bytes; });
  auto round = [](size_t n) {
    return (n + MemPool::kAlignment - 1) / MemPool::kAlignment * MemPool::kAlignment;
  };
  std::vector<const Life*> placed;
  size_t total = 0;
  for (Block* b : order) {
    Life& l = lives[b];
    std::vector<std::pair<size_t, size_t>> busy;
    for (const Life* p : placed)
      if (p->first <= l.last && l.first <= p->last)
        busy.emplace_back(p->offset, p->offset + round(p->bytes));
    std::sort(busy.begin(), busy.end());
    size_t offset = 0;
    for (auto [lo, hi] : busy) {
      if (offset + round(l.bytes) <= lo) break;
      offset = std::max(offset, hi);
    }
    l.offset = offset;
    total = std::max(total, offset + round(l.bytes));
    placed.push_back(&l);
  }
  if (order.empty()) return 0;
  auto allocate = [this](size_t bytes) {
    return std::shared_ptr<void>(pool_.Malloc(bytes),
                                 [this, bytes](void* p) { pool_.Free(p, bytes); });
  };
  std::shared_ptr<void> arena;
  if (!shared) {
    arena = allocate(total);
  } else {
    if (shared->bytes < total) {
      shared->bytes = std::max(total, shared->bytes + shared->bytes / 2);
      shared->memory = allocate(shared->bytes);
    }
    arena = shared->memory;
  }
  for (Block* b : order) {
    b->Place(static_cast<char*>(arena.get()) + lives[b].offset, arena);
    if (placement) placement->emplace_back(b, lives[b].offset);
  }
  return total;
}

void Block::Place(void* ptr, std::shared_ptr<void> owner) {
  SINGA_CHECK(!ptr_.load(), Error, "Block::Place: the block is already allocated");
  ptr_.store(ptr, std::memory_order_release);
  owned_ = false;
  owner_ = std::move(owner);
}

void Block::Move(void* ptr, std::shared_ptr<void> owner) {
  SINGA_CHECK(ptr_.load() && !owned_, Error, "Block::Move: the block is not placed");
  ptr_.store(ptr, std::memory_order_release);
  owner_ = std::move(owner);
  Touch();
}

std::shared_ptr<Block> Block::TakeMemory() {
  SINGA_CHECK(owned_ && ptr_.load() && dtype_ != DType::kString, Error,
              "Block::TakeMemory: the block holds no pool memory of its own");
  auto taken = std::make_shared<Block>(device_, bytes_, dtype_);
  taken->ptr_.store(ptr_.exchange(nullptr, std::memory_order_acq_rel), std::memory_order_release);
  return taken;
}

Block::Block(Device device, size_t bytes, DType dtype)
    : device_(device), bytes_(bytes), dtype_(dtype) {}

Block::Block(Device device, void* data, size_t bytes, std::shared_ptr<void> owner)
    : device_(device),
      ptr_(data),
      bytes_(bytes),
      dtype_(DType::kUInt8),
      owned_(false),
      owner_(std::move(owner)) {}

void* Block::Allocate() {
  void* mine = device_.mem_pool().Malloc(bytes_);
  if (dtype_ == DType::kString) {
    auto* s = static_cast<std::string*>(mine);
    for (size_t i = 0; i < bytes_ / sizeof(std::string); ++i) new (s + i) std::string();
  }
  void* expected = nullptr;
  if (ptr_.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) return mine;
  Release(mine);  // another thread allocated it first
  return expected;
}

void Block::Release(void* p) {
  if (dtype_ == DType::kString) {
    auto* s = static_cast<std::string*>(p);
    for (size_t i = 0; i < bytes_ / sizeof(std::string); ++i) s[i].~basic_string();
  }
  device_.mem_pool().Free(p, bytes_);
}

Block::~Block() {
  if (void* p = ptr_.load(); owned_ && p) Release(p);
}

std::shared_ptr<Block> internal::BlockOf(const Tensor& t) { return t.block_; }
void internal::TouchBlocks(std::span<const Tensor> writes) {
  for (const Tensor& t : writes)
    if (t.block_) t.block_->Touch();
}

void internal::Record(DeviceRuntime& rt, std::function<void()> fn, std::span<const Tensor> reads,
                      std::span<const Tensor> writes) {
  DeviceRuntime::Op op{std::move(fn), {}, {}};
  for (const Tensor& t : reads) op.reads.push_back(BlockOf(t));
  for (const Tensor& t : writes) op.writes.push_back(BlockOf(t));
  rt.Record(std::move(op));
}
uint64_t Block::NextVersion() {
  static std::atomic<uint64_t> counter{0};
  return counter.fetch_add(1, std::memory_order_relaxed) + 1;
}

}  // namespace singa
