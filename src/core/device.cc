#include "singa/core/device.h"

#include <new>

#include "singa/core/error.h"
#include "singa/core/tensor.h"

namespace singa {

Device Device::Cuda(int) {
  throw UnsupportedOp("CUDA device requested, but this build of singa has no CUDA support");
}
Device Device::OpenCL(int) {
  throw UnsupportedOp("OpenCL device requested, but this build of singa has no OpenCL support");
}

std::string Device::ToString() const {
  const char* names[] = {"cpu", "cuda", "opencl"};
  return std::string(names[static_cast<int>(type)]) + ":" + std::to_string(index);
}

DeviceRuntime& Device::runtime() const {
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

void DeviceRuntime::RunGraph(bool) {
  // Recorded order is a valid topological order; dependency-ordered replay
  // with a memory plan comes with the training engine.
  bool was = capturing_;
  capturing_ = false;
  for (Op& op : graph_) op.fn();
  capturing_ = was;
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

void Block::Allocate() {
  ptr_ = device_.mem_pool().Malloc(bytes_);
  if (dtype_ == DType::kString) {
    auto* s = static_cast<std::string*>(ptr_);
    for (size_t i = 0; i < bytes_ / sizeof(std::string); ++i) new (s + i) std::string();
  }
}

Block::~Block() {
  if (!owned_ || !ptr_) return;
  if (dtype_ == DType::kString) {
    auto* s = static_cast<std::string*>(ptr_);
    for (size_t i = 0; i < bytes_ / sizeof(std::string); ++i) s[i].~basic_string();
  }
  device_.mem_pool().Free(ptr_, bytes_);
}

std::shared_ptr<Block> internal::BlockOf(const Tensor& t) { return t.block_; }

}  // namespace singa
