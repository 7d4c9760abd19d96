// choose_layouts: activations between convolutions stay in oneDNN's
// channel-blocked layout (FusedConv's `blocked`) instead of being reordered
// to NCHW and back at every layer: nChw<B>c when a value's channels are a
// multiple of the CPU's channel block B (16 or 8, see cpu::ChannelBlock),
// channels-last (nhwc) otherwise, never both around one convolution. A value
// qualifies when a 2-D float32 convolution makes it and only convolutions
// read it: as X, or as Z where their own result is blocked too. A Conv that
// reads or writes a blocked value becomes a FusedConv with those bits.
// Results, graph outputs, subgraph inputs and anything another op reads
// stay NCHW, and so do the convolutions that touch only those.
#include <algorithm>

#include "onnx/passes/pass.h"
#include "singa/kernels/cpu.h"
#include "singa/ops/fused_conv.h"

namespace singa::sonnx {

void ChooseLayouts(PassCtx& ctx) {
  auto& nodes = ctx.nodes;
  const int end = static_cast<int>(nodes.size());
  const size_t n_all = ctx.graph.constants.size();
  std::vector<std::vector<std::pair<int, int>>> uses(n_all);  // (node, input position)
  std::vector<char> opaque(n_all, 0), blocked(n_all, 0);
  for (int i = 0; i < end; ++i) {
    if (!nodes[i]) continue;
    const Node& n = *nodes[i];
    for (size_t k = 0; k < n.inputs.size(); ++k) {
      const int s = n.inputs[k];
      if (s < 0) continue;
      if (IsConv(n) && (k == 0 || k == 3))
        uses[s].emplace_back(i, static_cast<int>(k));
      else
        opaque[s] = 1;
    }
    for (int s : n.outer_inputs) opaque[s] = 1;
  }
  for (int s : ctx.source.output_slots) opaque[s] = 1;
  for (int s : ctx.result_slots) opaque[s] = 1;
  for (int i = 0; i < end; ++i) {
    if (!nodes[i] || !IsConv(*nodes[i]) || nodes[i]->outputs.size() != 1) continue;
    const int s = nodes[i]->outputs[0];
    if (s < 0 || opaque[s] || uses[s].empty()) continue;
    const Spec& spec = ctx.specs[s];
    blocked[s] = spec.dtype == DType::kFloat32 && spec.shape.size() == 4 && spec.shape[1] > 0;
  }
  // A value read as Z stays blocked only where the reader's result does. A
  // convolution whose held tensors would mix nChw<B>c and channels-last
  // (MobileNet-V2's 24 -> 144 channels with B = 16) has only oneDNN's
  // reference implementation, 10-100x slower: its tensors stay NCHW.
  const int64_t block = cpu::ChannelBlock();
  const auto full_blocks = [&](int s) { return ctx.specs[s].shape[1] % block == 0; };
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
      if (!mixed) continue;
      for (int s : held) blocked[s] = 0;
      changed = true;
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
}

}  // namespace singa::sonnx
