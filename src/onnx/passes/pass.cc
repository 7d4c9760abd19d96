#include "onnx/passes/pass.h"

#include <cmath>

namespace singa::sonnx {

int PassCtx::AddConstant(const std::string& name, Tensor t) {
  graph.slot_names.push_back(name);
  graph.constants.push_back(std::move(t));
  graph.producer.push_back(-1);
  return static_cast<int>(graph.constants.size()) - 1;
}

bool IsOnnx(const Node& n, std::string_view op) {
  return n.schema && n.op_type == op && CanonicalDomain(n.domain).empty();
}

bool IsConv(const Node& n) {
  return IsOnnx(n, "Conv") || (n.domain == "ai.singa" && n.op_type == "FusedConv");
}

namespace {
const OpSchema& FusedConvSchema() {
  static const OpSchema& s = OpRegistry::Get("FusedConv", kLatestOpset, "ai.singa");
  return s;
}
}  // namespace

std::optional<float> ScalarConstant(const PassCtx& ctx, int s) {
  if (s < 0 || !ctx.graph.constants[s].defined()) return std::nullopt;
  const Tensor& t = ctx.graph.constants[s];
  if (t.numel() != 1 || !IsFloat(t.dtype())) return std::nullopt;
  return t.AsType(DType::kFloat32).Item<float>();
}

std::optional<std::pair<float, float>> ClipBounds(const PassCtx& ctx, const Node& clip) {
  std::pair<float, float> b = {AttrOf<float>(clip, "min").value_or(-INFINITY),
                               AttrOf<float>(clip, "max").value_or(INFINITY)};
  for (size_t k : {1, 2}) {
    if (clip.inputs.size() <= k || clip.inputs[k] < 0) continue;
    const std::optional<float> v = ScalarConstant(ctx, clip.inputs[k]);
    if (!v) return std::nullopt;
    (k == 1 ? b.first : b.second) = *v;
  }
  return b;
}

void MakeFusedConv(Node& conv, int z, const std::string& activation, float alpha, float beta) {
  AttrMap m = conv.schema->dump(conv.attrs.get());
  if (z >= 0) {
    conv.inputs.resize(3, -1);
    conv.inputs.push_back(z);
  }
  if (!activation.empty()) {
    m["activation"] = activation;
    m["alpha"] = alpha;
    m["beta"] = beta;
  }
  const OpSchema& fused = FusedConvSchema();
  conv.op_type = "FusedConv";
  conv.domain = "ai.singa";
  conv.schema = &fused;
  conv.attrs = fused.ParseAttrs(m, {}, conv.name);
}

void SetFusedConvAttr(Node& conv, const std::string& name, AttrValue value) {
  AttrMap m = conv.schema->dump(conv.attrs.get());
  m[name] = std::move(value);
  conv.attrs = FusedConvSchema().ParseAttrs(m, {}, conv.name);
}

Readers::Readers(const PassCtx& ctx) {
  const size_t n_slots = ctx.graph.constants.size();
  count_.assign(n_slots, 0);
  last_.assign(n_slots, -1);
  for (size_t i = 0; i < ctx.nodes.size(); ++i) {
    if (!ctx.nodes[i]) continue;
    const Node& n = *ctx.nodes[i];
    for (int s : n.inputs)
      if (s >= 0) ++count_[s], last_[s] = static_cast<int>(i);
    for (int s : n.outer_inputs) ++count_[s], last_[s] = -1;
  }
  for (int s : ctx.source.output_slots) ++count_[s], last_[s] = -1;
  for (int s : ctx.result_slots) ++count_[s], last_[s] = -1;
}

int Readers::Sole(const PassCtx& ctx, int s) const {
  if (s < 0 || count_[s] != 1 || last_[s] < 0 || !ctx.nodes[last_[s]]) return -1;
  return last_[s];
}

}  // namespace singa::sonnx
