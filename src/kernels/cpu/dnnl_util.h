// oneDNN glue shared by the op files: one engine and stream, Tensor <-> memory
// descriptors, and a cache so that each primitive is created once per key
// (shapes, dtypes, attributes) and reused on every later call.
//
//   auto& conv = dnnl_util::Cached<dnnl::convolution_forward::primitive_desc>(
//       key, [&] { return dnnl::convolution_forward::primitive_desc(...); });
//   dnnl_util::Execute(prim, {{DNNL_ARG_SRC, dnnl_util::Mem(x)}, ...});
#pragma once

#include <dnnl.hpp>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

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

// Runs a primitive on the shared stream and waits for it.
void Execute(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args);

// The cache: `make` runs once per key; the value lives for the process.
// Thread-safe. Keys should name the op and everything the value depends on.
template <class V>
V& Cached(const std::string& key, const std::function<V()>& make) {
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, std::unique_ptr<V>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache->find(key);
  if (it == cache->end()) it = cache->emplace(key, std::make_unique<V>(make())).first;
  return *it->second;
}

// Appends shape/strides/dtype of t to a cache key.
void AppendKey(std::string& key, const Tensor& t);
// The exact text of a float (hex) for a cache key, so that nearby parameters
// never share a key.
std::string Exact(float v);

}  // namespace singa::cpu::dnnl_util
