#include "kernels/cpu/dnnl_util.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <vector>

#include "kernels/cpu/scratch.h"
#include "singa/core/error.h"
#include "singa/core/profile.h"

namespace singa::cpu::dnnl_util {

dnnl::engine& Engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);
  return *e;
}

dnnl::stream& Stream() {
  static dnnl::stream* s = new dnnl::stream(Engine());
  return *s;
}

bool Supports(DType dt) {
  switch (dt) {
    case DType::kFloat32:
    case DType::kFloat16:
    case DType::kBFloat16:
    case DType::kInt8:
    case DType::kUInt8:
    case DType::kInt32:
      return true;
    default:
      return false;
  }
}

dnnl::memory::data_type ToDnnl(DType dt) {
  using dt_t = dnnl::memory::data_type;
  switch (dt) {
    case DType::kFloat32:
      return dt_t::f32;
    case DType::kFloat16:
      return dt_t::f16;
    case DType::kBFloat16:
      return dt_t::bf16;
    case DType::kInt8:
      return dt_t::s8;
    case DType::kUInt8:
      return dt_t::u8;
    case DType::kInt32:
      return dt_t::s32;
    default:
      throw DTypeError("oneDNN has no data type for " + std::string(Name(dt)));
  }
}

dnnl::memory::dims Dims(const Shape& shape) {
  return dnnl::memory::dims(shape.begin(), shape.end());
}

dnnl::memory::desc Desc(const Tensor& t) {
  if (t.ndim() == 0) return dnnl::memory::desc({1}, ToDnnl(t.dtype()), dnnl::memory::dims{1});
  return dnnl::memory::desc(Dims(t.shape()), ToDnnl(t.dtype()), Dims(t.strides()));
}

dnnl::memory::desc PlainDesc(const Shape& shape, DType dt) {
  if (shape.empty()) return dnnl::memory::desc({1}, ToDnnl(dt), dnnl::memory::dims{1});
  return dnnl::memory::desc(Dims(shape), ToDnnl(dt), Dims(ContiguousStrides(shape)));
}

dnnl::memory::format_tag BlockedTag(int64_t spatial_dims) {
  using tag = dnnl::memory::format_tag;
  static constexpr tag k16[] = {tag::nCw16c, tag::nChw16c, tag::nCdhw16c};
  static constexpr tag k8[] = {tag::nCw8c, tag::nChw8c, tag::nCdhw8c};
  return (ChannelBlock() == 16 ? k16 : k8)[spatial_dims - 1];
}

int64_t HeldBlock(int64_t channels) {
  return channels % ChannelBlock() == 0 ? ChannelBlock() : channels;
}

dnnl::memory::format_tag HeldTag(int64_t channels) {
  return HeldBlock(channels) == ChannelBlock() ? BlockedTag(2) : dnnl::memory::format_tag::nhwc;
}

Tensor Unblock(const Tensor& t, bool to_blocked) {
  const int64_t n = t.dim(0), c = t.dim(1), hw = t.dim(2) * t.dim(3), bk = HeldBlock(c);
  const Tensor src = t.Contiguous();
  Tensor out(t.shape(), t.dtype(), t.device());
  const float* s = static_cast<const float*>(src.raw_data());
  float* d = static_cast<float*>(out.raw_data());
  for (int64_t i = 0; i < n * c; ++i)
    for (int64_t p = 0; p < hw; ++p) {
      const int64_t plain = i * hw + p, blk = ((i - i % bk) * hw + p * bk) + i % bk;
      if (to_blocked)
        d[blk] = s[plain];
      else
        d[plain] = s[blk];
    }
  return out;
}

dnnl::memory Mem(const Tensor& t) { return dnnl::memory(Desc(t), Engine(), t.raw_data()); }
dnnl::memory Mem(const Tensor& t, const dnnl::memory::desc& desc) {
  return dnnl::memory(desc, Engine(), t.raw_data());
}

void Execute(const dnnl::primitive& p, const std::unordered_map<int, dnnl::memory>& args) {
  if (KernelLogActive()) {
    const char* impl = nullptr;
    if (dnnl_primitive_desc_query(p.get_primitive_desc(), dnnl_query_impl_info_str, 0, &impl) ==
            dnnl_success &&
        impl)
      NoteKernel(impl);
  }
  const_dnnl_memory_desc_t scratch =
      dnnl_primitive_desc_query_md(p.get_primitive_desc(), dnnl_query_scratchpad_md, 0);
  const size_t bytes = scratch ? dnnl_memory_desc_get_size(scratch) : 0;
  if (bytes == 0) {
    p.execute(Stream(), args);
    Stream().wait();
    return;
  }
  thread_local ScratchBuffer buffer;
  void* data = buffer.Get(bytes, "oneDNN scratchpad");
  dnnl_memory_t mem = nullptr;
  dnnl::error::wrap_c_api(dnnl_memory_create(&mem, scratch, Engine().get(), data),
                          "could not create a scratchpad memory");
  auto with = args;
  with[DNNL_ARG_SCRATCHPAD] = dnnl::memory(mem);
  p.execute(Stream(), with);
  Stream().wait();
}

dnnl::primitive_attr UserScratchpad(dnnl::primitive_attr attr) {
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

dnnl::memory ScratchMem(const dnnl::memory::desc& desc, ScratchSlot slot) {
  thread_local ScratchBuffer buffers[kScratchSlots];
  return dnnl::memory(desc, Engine(), buffers[slot].Get(desc.get_size(), "a reorder's buffer"));
}

void Reorder(const std::string& key, const dnnl::memory& from, const dnnl::memory& to) {
  const auto r = Cached<dnnl::reorder>(key, [&] { return dnnl::reorder(from, to); });
  Execute(*r, {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}});
}

dnnl::memory PackedWeights(const Tensor& w, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& want, const std::string& reorder_key) {
  return PackedWeights(w, from, want, [&](const dnnl::memory& to) {
    Reorder(reorder_key, dnnl::memory(from, Engine(), w.raw_data()), to);
  });
}

namespace {

// PackedWeights' copies, per weight view (its data's address, dtype, shape
// and strides).
struct PackedEntry {
  std::weak_ptr<Block> block;
  uint64_t version = 0;
  dnnl::memory::desc from, want;
  Tensor holder;
};
struct PackedCache {
  std::mutex mu;
  std::unordered_map<std::string, std::vector<PackedEntry>> entries;
};
PackedCache& Packed() {
  static auto* cache = new PackedCache();
  return *cache;
}
std::string PackedKey(const Tensor& w) {
  // The view's data, not only its block: slices of one weight (a recurrent
  // op's directions) are packed apart.
  std::string key = std::to_string(reinterpret_cast<uintptr_t>(w.raw_data())) + "|";
  AppendKey(key, w);
  return key;
}

}  // namespace

dnnl::memory PackedWeights(const Tensor& w, const dnnl::memory::desc& from,
                           const dnnl::memory::desc& want,
                           const std::function<void(const dnnl::memory& to)>& pack) {
  PackedCache& cache = Packed();
  const std::shared_ptr<Block> block = internal::BlockOf(w);
  const std::string key = PackedKey(w);
  std::lock_guard<std::mutex> lock(cache.mu);
  std::vector<PackedEntry>& entries = cache.entries[key];
  // (an entry of a freed block whose address a new one reuses)
  std::erase_if(entries, [&](const PackedEntry& e) { return e.block.lock() != block; });
  auto it = std::find_if(entries.begin(), entries.end(),
                         [&](const PackedEntry& e) { return e.from == from && e.want == want; });
  if (it != entries.end() && it->version == block->version() && it->holder.defined())
    return dnnl::memory(want, Engine(), it->holder.raw_data());
  if (it == entries.end()) {
    // A new entry: first drop the packed copies of freed weights (a plan
    // dropped for another input shape takes its folded weights with it).
    for (auto& [k, v] : cache.entries)
      if (&v != &entries) std::erase_if(v, [](const PackedEntry& e) { return e.block.expired(); });
    std::erase_if(cache.entries,
                  [&](const auto& kv) { return kv.second.empty() && &kv.second != &entries; });
    it = entries.insert(entries.end(), PackedEntry{block, 0, from, want, Tensor()});
  }
  it->holder = Tensor({static_cast<int64_t>(want.get_size())}, DType::kUInt8);
  dnnl::memory packed(want, Engine(), it->holder.raw_data());
  pack(packed);
  it->version = block->version();
  return packed;
}

void ForgetPackedWeights(const Tensor& w, const dnnl::memory::desc& want) {
  PackedCache& cache = Packed();
  std::lock_guard<std::mutex> lock(cache.mu);
  auto it = cache.entries.find(PackedKey(w));
  if (it == cache.entries.end()) return;
  std::erase_if(it->second, [&](const PackedEntry& e) { return e.want == want; });
  if (it->second.empty()) cache.entries.erase(it);
}

void AppendKey(std::string& key, const Tensor& t) {
  key += Name(t.dtype());
  key += ToString(t.shape());
  key += ToString(t.strides());
  key += ';';
}

std::string Exact(float v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%a", static_cast<double>(v));
  return buf;
}

}  // namespace singa::cpu::dnnl_util

namespace singa::cpu {

int64_t ChannelBlock() {
  static const int64_t block = [] {
    const auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
    const auto avx512 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core);
    return (isa & avx512) == avx512 ? 16 : 8;
  }();
  return block;
}

}  // namespace singa::cpu
