// fuse_conv_epilogue: a float32 Conv followed by an Add of a value of its
// result's dtype and shape (as Z), then a Relu, LeakyRelu or Clip, becomes
// one FusedConv (oneDNN post-ops): either part may be missing, the Add comes
// first. The FusedConv runs where the last node it absorbed ran (its other
// inputs are ready there). The chain stops at a value with other readers (or
// that is a result), at an Add that broadcasts, at a Clip whose bounds are
// not constants, and at any other op.
#include <cmath>

#include "onnx/passes/pass.h"

namespace singa::sonnx {

void FuseConvEpilogue(PassCtx& ctx) {
  const Readers readers(ctx);
  const auto float_at = [&](int s, float fallback) {
    return s >= 0 && ctx.graph.constants[s].defined()
               ? ctx.graph.constants[s].AsType(DType::kFloat32).Item<float>()
               : fallback;
  };
  const auto not_constant = [&](const Node& n, size_t k) {
    return n.inputs.size() > k && n.inputs[k] >= 0 && !ctx.graph.constants[n.inputs[k]].defined();
  };
  for (size_t i = 0; i < ctx.nodes.size(); ++i) {
    if (!ctx.nodes[i] || !IsOnnx(*ctx.nodes[i], "Conv") || ctx.nodes[i]->outputs.size() != 1)
      continue;
    Node conv = *ctx.nodes[i];
    size_t at = i;
    const DType dt = ctx.specs[conv.outputs[0] < 0 ? conv.inputs[0] : conv.outputs[0]].dtype;
    if (dt != DType::kFloat32) continue;
    bool has_z = false;
    while (true) {
      const int s = conv.outputs[0];
      const int r = readers.Sole(ctx, s);
      if (r < 0) break;
      const Node& next = *ctx.nodes[r];
      if (IsOnnx(next, "Add") && !has_z && conv.op_type == "Conv" && next.inputs.size() == 2) {
        const int z = next.inputs[0] == s ? next.inputs[1] : next.inputs[0];
        if (z == s || z < 0 || ctx.specs[z].dtype != dt || ctx.specs[z] != ctx.specs[s]) break;
        MakeFusedConv(conv, z, "", 0, 0);
        has_z = true;
      } else if (IsOnnx(next, "Relu")) {
        MakeFusedConv(conv, -1, "Relu", 0, 0);
      } else if (IsOnnx(next, "LeakyRelu")) {
        MakeFusedConv(conv, -1, "LeakyRelu", AttrOf<float>(next, "alpha").value_or(0.01f), 0);
      } else if (IsOnnx(next, "Clip")) {
        float lo = AttrOf<float>(next, "min").value_or(-INFINITY),
              hi = AttrOf<float>(next, "max").value_or(INFINITY);
        if (next.inputs.size() > 1) lo = float_at(next.inputs[1], lo);
        if (next.inputs.size() > 2) hi = float_at(next.inputs[2], hi);
        if (not_constant(next, 1) || not_constant(next, 2)) break;
        MakeFusedConv(conv, -1, "Clip", lo, hi);
      } else {
        break;
      }
      conv.outputs = next.outputs;
      ctx.nodes[at].reset();
      at = r;
      ctx.nodes[at].reset();
      if (conv.domain == "ai.singa" && !AttrOf<std::string>(conv, "activation")->empty()) break;
    }
    ctx.nodes[at] = std::move(conv);
  }
}

}  // namespace singa::sonnx
