// oneDNN glue shared by the op files: one engine and stream, Tensor <-> memory
// descriptors, and a cache so that each primitive is created once per key
// (shapes, dtypes, attributes) and reused on every later call.
//
//   const auto conv = dnnl_util::Cached<dnnl::convolution_forward>(
//       key, [&] { return dnnl::convolution_forward(...); });
//   dnnl_util::Execute(*conv, {{DNNL_ARG_SRC, dnnl_util::Mem(x)}, ...});
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "singa/core/parallel.h"
#include "singa/core/tensor.h"
#include "singa/kernels/cpu.h"

namespace singa::cpu::dnnl_util {

dnnl::engine& Engine();
dnnl::stream& Stream();

bool Supports(DType dt);  // f32, f16, bf16, s8, u8, s32
dnnl::memory::data_type ToDnnl(DType dt);
dnnl::memory::dims Dims(const Shape& shape);
// A plain descriptor with the tensor's own strides (any layout oneDNN can
// express as strides).
dnnl::memory::desc Desc(const Tensor& t);
// A row-major descriptor for `shape` and `dt`.
dnnl::memory::desc PlainDesc(const Shape& shape, DType dt);
// A memory object over the tensor's data (no copy).
dnnl::memory Mem(const Tensor& t);
dnnl::memory Mem(const Tensor& t, const dnnl::memory::desc& desc);

// The channel block of the blocked layouts (16 or 8; singa/kernels/cpu.h).
using cpu::ChannelBlock;
// That layout for `spatial_dims` (1 to 3) spatial dimensions.
dnnl::memory::format_tag BlockedTag(int64_t spatial_dims);

// The planner's blocked buffers (src/onnx/passes/choose_layouts.cc): a
// 2-D float32 activation of C channels held as nChw<B>c, B = HeldBlock(C):
// ChannelBlock() when C is a multiple of it, else C itself, which makes
// nChw<C>c channels-last (nhwc), since a padded nChw<B>c would not fit the
// buffer of the plain shape. HeldTag(C) names that layout.
int64_t HeldBlock(int64_t channels);
dnnl::memory::format_tag HeldTag(int64_t channels);
// `t` [N, C, H, W] converted between NCHW and its held layout: element
// (n, c, h, w) of a held buffer is at
// ((n * C/B + c/B) * H * W + h * W + w) * B + c % B. For reference kernels.
Tensor Unblock(const Tensor& t, bool to_blocked);

// Runs a primitive on the shared stream and waits for it. A primitive
// made with UserScratchpad gets its scratchpad from a buffer of the calling
// thread's, which grows to the largest one asked for.
void Execute(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args);

// `attr` with the scratchpad left to Execute: a primitive otherwise holds
// a scratchpad of its own for its life, and a cache of primitives, one per
// input shape, holds them all (a pooling's is as large as its input: 74 MiB
// over a stream of 40 text-line widths).
dnnl::primitive_attr UserScratchpad(dnnl::primitive_attr attr = {});

// The cache: `make` runs once per key and thread count, and the value stays
// while it is among the kCachedPerType values of its type used last (and
// while a caller holds it). Thread-safe. Keys should name the op and
// everything the value depends on. A primitive splits its work for the
// threads there are when it is created, so one made inside a SerialScope
// (parallel.h) is kept apart. The bound keeps a model called on inputs of
// ever new shapes (text lines of every width: a CRNN made 0.7 MiB of
// primitives a width) from growing without end; it is oneDNN's own primitive
// cache's, large enough for every layer of a big model.
inline constexpr size_t kCachedPerType = 1024;
template <class V>
std::shared_ptr<V> Cached(const std::string& key, const std::function<V()>& make) {
  struct Entry {
    std::shared_ptr<V> value;
    std::list<std::string>::iterator at;  // in `order`
  };
  static std::mutex mu;
  static auto* order = new std::list<std::string>();  // the most recently used first
  static auto* cache = new std::unordered_map<std::string, Entry>();
  const int threads = ActiveThreads();
  std::string full = key;
  full += "#threads=" + std::to_string(threads);
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(full); it != cache->end()) {
    order->splice(order->begin(), *order, it->second.at);
    return it->second.value;
  }
  SerialScope serial(threads == 1);
  auto value = std::make_shared<V>(make());
  order->push_front(full);
  cache->emplace(std::move(full), Entry{value, order->begin()});
  while (cache->size() > kCachedPerType) {
    cache->erase(order->back());
    order->pop_back();
  }
  return value;
}

// A oneDNN memory of `desc` valid until this thread's next request for the
// same `slot` (one per operand a kernel call copies into another layout): a
// per-thread buffer grown to the largest request and kept. Taken from the
// memory pool instead, each new input shape of a model left its reorder
// buffers cached in size classes of their own (a text recognizer's stream of
// line widths grew the process with every width).
enum ScratchSlot { kScratchFirstInput, kScratchSecondInput, kScratchOutput, kScratchSlots };
dnnl::memory ScratchMem(const dnnl::memory::desc& desc, ScratchSlot slot);
// Reorders `from` into `to` with a cached reorder primitive keyed by `key`.
void Reorder(const std::string& key, const dnnl::memory& from, const dnnl::memory& to);
// Weights w (described as `from`) reordered into the layout `want` a
// primitive asked for, kept per weight block (and view), layout and version:
// inference reorders each layer's weights once, whatever sizes its inputs
// come in; training, which writes the weights every step, reorders them once
// per step. `reorder_key` keys the reorder primitive. Entries of freed
// weights are dropped whenever a new entry is made.
dnnl::memory PackedWeights(const Tensor& w, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& want, const std::string& reorder_key);
// The same for a layout of singa's own, which `pack` writes into `to` (of
// the desc `want`, which names the layout).
dnnl::memory PackedWeights(const Tensor& w, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& want,
                           const std::function<void(const dnnl::memory& to)>& pack);
// Drops the copies of w packed into `want` (a layout candidate that lost).
void ForgetPackedWeights(const Tensor& w, const dnnl::memory::desc& want);

// Appends shape/strides/dtype of t to a cache key.
void AppendKey(std::string& key, const Tensor& t);
// The exact text of a float (hex) for a cache key, so that nearby parameters
// never share a key.
std::string Exact(float v);

}  // namespace singa::cpu::dnnl_util
