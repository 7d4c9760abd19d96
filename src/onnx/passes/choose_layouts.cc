// choose_layouts: activations between convolutions stay in oneDNN's
// channel-blocked layout (FusedConv's `blocked`) instead of being reordered
// to NCHW and back at every layer: nChw<B>c when a value's channels are a
// multiple of the CPU's channel block B (16 or 8, see cpu::ChannelBlock),
// channels-last (nhwc) otherwise, never both around one convolution
// (du::HeldBlock). A 4-D float32 value qualifies when a convolution or one
// of the ops below makes it and only those read it (as a convolution's X,
// or as Z where its result is blocked too). The ops a blocked value flows
// through, each with all its 4-D values blocked or none:
//  - elementwise ops whose other inputs are single elements or of the
//    result's shape: the same function of each element in any order;
//  - Concat and Split along the channels, when every part has whole blocks:
//    a part is then one run of each image's buffer in either layout, so
//    their own kernels copy blocked parts as they are;
//  - 2-D MaxPool (without Indices) and AveragePool, which become
//    BlockedMaxPool and BlockedAveragePool.
// Results, graph outputs, subgraph inputs and anything another op reads
// stay NCHW, and so do the convolutions that touch only those.
#include <algorithm>
#include <string_view>

#include "kernels/cpu/dnnl_util.h"
#include "onnx/passes/pass.h"
#include "singa/ops/fused_conv.h"

namespace singa::sonnx {
namespace {

bool IsElementwise(const Node& n) {
  static constexpr std::string_view kOps =
      " Abs Add Ceil Celu Clip Cos Div Elu Erf Exp Floor Gelu HardSigmoid HardSwish Identity"
      " LeakyRelu Log Max Mean Min Mish Mul Neg Pow Reciprocal Relu Round Selu Sigmoid Sign Sin"
      " Softplus Softsign Sqrt Sub Sum Tanh ThresholdedRelu ";
  return n.schema && CanonicalDomain(n.domain).empty() &&
         kOps.find(" " + n.op_type + " ") != std::string_view::npos;
}

// The 4-D values of node n that must share one layout when n does not
// change them: empty when n cannot take blocked values. `whole_blocks`:
// each of them needs channels that are a multiple of the block.
std::vector<int> LayoutGroup(const PassCtx& ctx, const Node& n, bool& whole_blocks) {
  whole_blocks = false;
  const auto rank4 = [&](int s) { return s >= 0 && ctx.specs[s].shape.size() == 4; };
  std::vector<int> group;
  if (n.outputs.empty() || !rank4(n.outputs[0])) return group;
  const Shape& out = ctx.specs[n.outputs[0]].shape;
  if (IsElementwise(n) && n.outputs.size() == 1) {
    for (int s : n.inputs) {
      if (s < 0) continue;
      if (ctx.specs[s].shape == out)
        group.push_back(s);
      else if (NumElements(ctx.specs[s].shape) != 1)
        return {};
    }
  } else if ((IsOnnx(n, "Concat") || IsOnnx(n, "Split")) &&
             (AttrOf<int64_t>(n, "axis") == 1 || AttrOf<int64_t>(n, "axis") == -3)) {
    // Parts of sizes computed at run time could stop being whole blocks.
    if (IsOnnx(n, "Split") && n.inputs.size() > 1 && n.inputs[1] >= 0 &&
        !ctx.graph.constants[n.inputs[1]].defined())
      return {};
    whole_blocks = true;
    group.push_back(n.inputs[0]);
    if (IsOnnx(n, "Concat")) group.assign(n.inputs.begin(), n.inputs.end());
  } else if ((IsOnnx(n, "MaxPool") && (n.outputs.size() == 1 || n.outputs[1] < 0)) ||
             IsOnnx(n, "AveragePool")) {
    group.push_back(n.inputs[0]);
  } else {
    return group;
  }
  for (int s : n.outputs)
    if (s >= 0) group.push_back(s);
  if (!std::all_of(group.begin(), group.end(), rank4)) return {};
  return group;
}

// Makes MaxPool or AveragePool `pool` its blocked form.
void MakeBlockedPool(Node& pool) {
  const OpSchema& blocked = OpRegistry::Get("Blocked" + pool.op_type, kLatestOpset, "ai.singa");
  AttrMap m = pool.schema->dump(pool.attrs.get());
  m.erase("storage_order");
  pool.op_type = blocked.name;
  pool.domain = "ai.singa";
  pool.schema = &blocked;
  pool.attrs = blocked.ParseAttrs(m, {}, pool.name);
  pool.outputs.resize(1);
}

}  // namespace

void ChooseLayouts(PassCtx& ctx) {
  auto& nodes = ctx.nodes;
  const int end = static_cast<int>(nodes.size());
  const size_t n_all = ctx.graph.constants.size();
  std::vector<std::vector<std::pair<int, int>>> uses(n_all);  // a convolution's (node, input)
  std::vector<char> opaque(n_all, 0), read(n_all, 0), blocked(n_all, 0);
  struct Group {
    int node;
    std::vector<int> slots;
    bool whole_blocks;
  };
  std::vector<Group> groups;
  for (int i = 0; i < end; ++i) {
    if (!nodes[i]) continue;
    const Node& n = *nodes[i];
    bool whole = false;
    std::vector<int> group = IsConv(n) ? std::vector<int>{} : LayoutGroup(ctx, n, whole);
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int s = n.inputs[k];
      if (s < 0) continue;
      if (IsConv(n) && (k == 0 || k == 3)) {
        uses[s].emplace_back(i, static_cast<int>(k));
        read[s] = 1;
      } else if (std::count(group.begin(), group.end(), s)) {
        read[s] = 1;
      } else if (!IsOnnx(n, "Shape")) {
        opaque[s] = 1;
      }
    }
    for (int s : n.outer_inputs) opaque[s] = 1;
    if (!group.empty()) groups.push_back({i, std::move(group), whole});
  }
  for (int s : ctx.source.output_slots) opaque[s] = 1;
  for (int s : ctx.result_slots) opaque[s] = 1;
  const auto candidate = [&](int s) {
    if (s < 0 || opaque[s] || !read[s]) return;
    const Spec& spec = ctx.specs[s];
    blocked[s] = spec.dtype == DType::kFloat32 && spec.shape.size() == 4 && spec.shape[1] > 0;
  };
  for (int i = 0; i < end; ++i)
    if (nodes[i] && IsConv(*nodes[i]) && nodes[i]->outputs.size() == 1)
      candidate(nodes[i]->outputs[0]);
  for (const Group& g : groups)
    for (int s : nodes[g.node]->outputs) candidate(s);
  // A value read as Z stays blocked only where the reader's result does. A
  // convolution whose held tensors would mix nChw<B>c and channels-last
  // (MobileNet-V2's 24 -> 144 channels with B = 16) has only oneDNN's
  // reference implementation, 10-100x slower: its tensors stay NCHW. A
  // group is blocked whole or not at all.
  const int64_t block = cpu::ChannelBlock();
  const auto full_blocks = [&](int s) { return ctx.specs[s].shape[1] % block == 0; };
  const auto unblock = [&](const std::vector<int>& slots) {
    bool changed = false;
    for (int s : slots) changed |= blocked[s] != 0, blocked[s] = 0;
    return changed;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t s = 0; s < n_all; ++s)
      for (const auto& [i, k] : uses[s])
        if (blocked[s] && k == 3 && !blocked[nodes[i]->outputs[0]]) blocked[s] = 0, changed = true;
    for (int i = 0; i < end; ++i) {
      if (!nodes[i] || !IsConv(*nodes[i]) || nodes[i]->outputs.size() != 1) continue;
      const Node& n = *nodes[i];
      std::vector<int> held;
      for (int s : {n.inputs[0], n.outputs[0], n.inputs.size() > 3 ? n.inputs[3] : -1})
        if (s >= 0 && blocked[s]) held.push_back(s);
      const bool mixed = std::any_of(held.begin(), held.end(), full_blocks) &&
                         !std::all_of(held.begin(), held.end(), full_blocks);
      if (mixed) changed |= unblock(held);
    }
    for (const Group& g : groups) {
      const auto is_blocked = [&](int s) { return blocked[s] != 0; };
      const bool all =
          std::all_of(g.slots.begin(), g.slots.end(), is_blocked) &&
          (!g.whole_blocks || std::all_of(g.slots.begin(), g.slots.end(), full_blocks));
      if (!all) changed |= unblock(g.slots);
    }
  }
  for (int i = 0; i < end; ++i) {
    if (!nodes[i] || !IsConv(*nodes[i]) || nodes[i]->outputs.size() != 1) continue;
    Node& n = *nodes[i];
    const auto at = [&](size_t k) {
      return k < n.inputs.size() && n.inputs[k] >= 0 && blocked[n.inputs[k]];
    };
    using namespace fused_conv;
    const int64_t bits = (at(0) ? kBlockedX : 0) |
                         (n.outputs[0] >= 0 && blocked[n.outputs[0]] ? kBlockedY : 0) |
                         (at(3) ? kBlockedZ : 0);
    if (!bits) continue;
    if (n.op_type == "Conv") MakeFusedConv(n, -1, "", 0, 0);
    SetFusedConvAttr(n, "blocked", bits);
  }
  for (const Group& g : groups) {
    Node& n = *nodes[g.node];
    if ((IsOnnx(n, "MaxPool") || IsOnnx(n, "AveragePool")) && blocked[g.slots[0]])
      MakeBlockedPool(n);
  }
}

}  // namespace singa::sonnx
