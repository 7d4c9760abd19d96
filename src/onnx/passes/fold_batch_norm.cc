// fold_batch_norm: a BatchNormalization (inference) that alone reads a
// float32 Conv's or ConvTranspose's result is folded into its weights and
// bias:
//   s = scale / sqrt(var + epsilon); W' = W * s (per output channel: W's
//   first axis for Conv, its second within each group for ConvTranspose);
//   B' = (B - mean) * s + bias,
// new constants named after the BatchNormalization's output, which the Conv
// now writes (it stays where it was). Repeats while another one follows.
// Leaves the pair alone when the Conv's result has other readers (or is a
// result), when W, B or any BatchNormalization input but X is not a
// parameter, when the BatchNormalization trains (training_mode, spatial = 0,
// running mean/var outputs used), or when a tensor is not float32 or the
// scale does not match W's output channels.
#include <array>
#include <cstdio>
#include <functional>
#include <mutex>
#include <unordered_map>

#include "onnx/passes/pass.h"

namespace singa::sonnx {
namespace {

// The folded weights and bias of the tensors (W, B, scale, bias, mean,
// var) at their versions, kept while the tensors live: a model run on
// inputs of many shapes builds a plan per shape, and its plans share one
// folded W (and so one packed copy of it) instead of folding anew.
std::pair<Tensor, Tensor> FoldedOnce(const std::array<const Tensor*, 6>& in, float eps,
                                     const std::function<std::pair<Tensor, Tensor>()>& fold) {
  struct Entry {
    std::vector<std::pair<std::weak_ptr<Block>, uint64_t>> sources;
    std::pair<Tensor, Tensor> folded;
  };
  static std::mutex mu;
  static auto* cache = new std::unordered_map<std::string, Entry>();
  char eps_hex[32];
  std::snprintf(eps_hex, sizeof(eps_hex), "%a", eps);
  std::string key = eps_hex;
  std::vector<std::pair<std::weak_ptr<Block>, uint64_t>> sources;
  for (const Tensor* t : in) {
    key += ";";
    if (!t->defined()) continue;
    key += std::to_string(reinterpret_cast<uintptr_t>(t->raw_data())) + ToString(t->shape());
    auto block = internal::BlockOf(*t);
    sources.emplace_back(block, block->version());
  }
  auto same = [&](const Entry& e) {
    for (size_t i = 0; i < sources.size(); ++i)
      if (e.sources[i].first.lock() != sources[i].first.lock() ||
          e.sources[i].second != sources[i].second)
        return false;
    return true;
  };
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache->find(key); it != cache->end() && same(it->second)) return it->second.folded;
  std::erase_if(*cache, [](const auto& kv) {
    return std::any_of(kv.second.sources.begin(), kv.second.sources.end(),
                       [](const auto& s) { return s.first.expired(); });
  });
  Entry& e = (*cache)[key];
  e = Entry{std::move(sources), fold()};
  return e.folded;
}

bool Fold(PassCtx& ctx, Node& conv, const Node& bn) {
  const Graph& g = ctx.source;
  if (bn.inputs.size() != 5 || !ctx.IsParam(conv.inputs[1])) return false;
  if (conv.inputs.size() > 2 && conv.inputs[2] >= 0 && !ctx.IsParam(conv.inputs[2])) return false;
  for (int k = 1; k < 5; ++k)
    if (!ctx.IsParam(bn.inputs[k])) return false;
  for (size_t k = 1; k < bn.outputs.size(); ++k)
    if (bn.outputs[k] >= 0) return false;
  if (AttrOf<int64_t>(bn, "training_mode").value_or(0) != 0) return false;
  if (AttrOf<int64_t>(bn, "spatial").value_or(1) != 1) return false;
  const Tensor& w = g.constants[conv.inputs[1]];
  const Tensor b =
      conv.inputs.size() > 2 && conv.inputs[2] >= 0 ? g.constants[conv.inputs[2]] : Tensor();
  const Tensor &scale = g.constants[bn.inputs[1]], &bias = g.constants[bn.inputs[2]],
               &mean = g.constants[bn.inputs[3]], &var = g.constants[bn.inputs[4]];
  for (const Tensor* t : {&w, &b, &scale, &bias, &mean, &var})
    if (t->defined() && t->dtype() != DType::kFloat32) return false;
  const bool transposed = IsOnnx(conv, "ConvTranspose");
  const int64_t group = AttrOf<int64_t>(conv, "group").value_or(1);
  if (w.ndim() < 3 || group < 1 || w.dim(0) % group) return false;
  const int64_t out_channels = transposed ? w.dim(1) * group : w.dim(0);
  if (scale.ndim() != 1 || scale.dim(0) != out_channels) return false;
  const float eps = AttrOf<float>(bn, "epsilon").value_or(1e-5f);
  const Device dev = ctx.graph.device;
  auto [w2, b2] = FoldedOnce({&w, &b, &scale, &bias, &mean, &var}, eps, [&] {
    Tensor s =
        Call1("Div", {scale, Call1("Sqrt", {Call1("Add", {var, Tensor::Scalar(eps, dev)})})});
    // W as [g, C_in/g, C_out/g, rest] for ConvTranspose, [C_out, rest] for Conv.
    const Shape ws =
        transposed ? Shape{group, w.dim(0) / group, w.dim(1), -1} : Shape{w.dim(0), -1};
    const Shape ss = transposed ? Shape{group, 1, w.dim(1), 1} : Shape{w.dim(0), 1};
    Tensor centered = b.defined() ? Call1("Sub", {b, mean}) : Call1("Neg", {mean});
    return std::pair{Call1("Mul", {w.Reshape(ws), s.Reshape(ss)}).Reshape(w.shape()),
                     Call1("Add", {Call1("Mul", {centered, s}), bias})};
  });
  for (const Tensor* t : {&w, &b, &scale, &bias, &mean, &var})
    if (t->defined()) {
      auto block = internal::BlockOf(*t);
      ctx.deps.emplace_back(block, block->version());
    }
  // A copy: AddConstant grows slot_names.
  const std::string out_name = ctx.graph.slot_names[bn.outputs[0]];
  conv.inputs = {conv.inputs[0], ctx.AddConstant(out_name + ":folded_W", std::move(w2)),
                 ctx.AddConstant(out_name + ":folded_B", std::move(b2))};
  conv.outputs = {bn.outputs[0]};
  return true;
}

}  // namespace

void FoldBatchNorm(PassCtx& ctx) {
  const Readers readers(ctx);
  for (auto& conv : ctx.nodes) {
    if (!conv || !(IsOnnx(*conv, "Conv") || IsOnnx(*conv, "ConvTranspose")) ||
        conv->outputs.size() != 1)
      continue;
    const int out = conv->outputs[0];
    if (ctx.specs[out < 0 ? conv->inputs[0] : out].dtype != DType::kFloat32) continue;
    while (true) {
      const int s = conv->outputs[0];
      const int r = readers.Sole(ctx, s);
      if (r < 0) break;
      const Node& bn = *ctx.nodes[r];
      if (!IsOnnx(bn, "BatchNormalization") || bn.inputs[0] != s || !Fold(ctx, *conv, bn)) break;
      ctx.nodes[r].reset();
    }
  }
}

}  // namespace singa::sonnx
