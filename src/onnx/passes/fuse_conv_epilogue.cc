// fuse_conv_epilogue: a float32 Conv followed by an Add of a value of its
// result's dtype and shape (as Z), then an activation, becomes one FusedConv
// (oneDNN post-ops): either part may be missing, the Add comes first. The
// activations: Relu, LeakyRelu, Clip, HardSwish, and the gated forms
// exporters spell out, where the Conv's result x has two readers:
//   SiLU:      Mul(x, Sigmoid(x))                          -> Swish
//   HardSwish: Div(Mul(x, Clip(Add(x, 3), 0, 6)), 6)       -> HardSwish
//              (or Mul by 1/6 last), Mul(x, HardSigmoid(x)) with
//              alpha 1/6 and beta 0.5
// The FusedConv runs where the last node it absorbed ran (its other inputs
// are ready there). The chain stops at a value with other readers (or that
// is a result), at an Add that broadcasts, at a Clip whose bounds are not
// constants, and at any other op.
#include <algorithm>
#include <cmath>

#include "onnx/passes/pass.h"

namespace singa::sonnx {
namespace {

// The input of a two-input node that is not x (-1 when both are or neither).
int Other(const Node& n, int x) {
  if (n.inputs.size() != 2 || (n.inputs[0] == x) == (n.inputs[1] == x)) return -1;
  return n.inputs[0] == x ? n.inputs[1] : n.inputs[0];
}

int Out(const PassCtx& ctx, int node) {
  const Node& n = *ctx.nodes[node];
  return n.outputs.size() == 1 ? n.outputs[0] : -1;
}

bool Near(std::optional<float> v, float want) {
  return v && std::abs(*v - want) <= 1e-6f * std::max(1.f, std::abs(want));
}

// Whether Clip node c has constant bounds lo and hi.
bool ClipsTo(const PassCtx& ctx, const Node& c, float lo, float hi) {
  const auto b = ClipBounds(ctx, c);
  return b && Near(b->first, lo) && Near(b->second, hi);
}

// Whether node n computes v * f: a Mul by f (either side) or a Div by 1 / f.
bool Scales(const PassCtx& ctx, const Node& n, int v, float f) {
  if (IsOnnx(n, "Div") && n.inputs.size() == 2 && n.inputs[0] == v && n.inputs[1] != v) {
    auto d = ScalarConstant(ctx, n.inputs[1]);
    return d && Near(1.f / *d, f);
  }
  return IsOnnx(n, "Mul") && Near(ScalarConstant(ctx, Other(n, v)), f);
}

// An activation x * g(x) on value x, which exactly two nodes read: the
// first node of g and the Mul. Its name and the positions of the nodes it
// absorbs, in order (the last holds the result); each value between them
// has that one reader.
struct Gated {
  std::string activation;
  std::vector<int> nodes;
};

std::optional<Gated> MatchGated(const PassCtx& ctx, const Readers& readers, int x) {
  if (readers.Count(x) != 2) return std::nullopt;
  std::vector<int> rs;
  for (size_t i = 0; i < ctx.nodes.size(); ++i)
    if (ctx.nodes[i] && std::count(ctx.nodes[i]->inputs.begin(), ctx.nodes[i]->inputs.end(), x))
      rs.push_back(static_cast<int>(i));
  if (rs.size() != 2) return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    const int mul = rs[1 - k];
    if (!IsOnnx(*ctx.nodes[mul], "Mul")) continue;
    Gated m{"", {rs[k]}};
    const Node& g = *ctx.nodes[rs[k]];
    if (Out(ctx, rs[k]) < 0) continue;
    if (IsOnnx(g, "Sigmoid")) {
      m.activation = "Swish";
    } else if (IsOnnx(g, "HardSigmoid") && Near(AttrOf<float>(g, "alpha"), 1.f / 6) &&
               Near(AttrOf<float>(g, "beta"), 0.5f)) {
      m.activation = "HardSwish";
    } else if (IsOnnx(g, "Add") && Near(ScalarConstant(ctx, Other(g, x)), 3.f)) {
      const int c = readers.Sole(ctx, Out(ctx, rs[k]));
      if (c < 0 || !IsOnnx(*ctx.nodes[c], "Clip") || !ClipsTo(ctx, *ctx.nodes[c], 0.f, 6.f))
        continue;
      m.nodes.push_back(c);
      m.activation = "HardSwish";  // once divided by 6, below
    } else {
      continue;
    }
    const int gate = Out(ctx, m.nodes.back());
    if (Other(*ctx.nodes[mul], x) != gate || readers.Sole(ctx, gate) != mul) continue;
    m.nodes.push_back(mul);
    if (m.nodes.size() == 3) {  // x * Clip(x + 3, 0, 6) / 6
      const int d = readers.Sole(ctx, Out(ctx, mul));
      if (d < 0 || !Scales(ctx, *ctx.nodes[d], Out(ctx, mul), 1.f / 6)) continue;
      m.nodes.push_back(d);
    }
    // (a constant of higher rank would broadcast x into another shape)
    if (ctx.specs[Out(ctx, m.nodes.back())] != ctx.specs[x]) continue;
    return m;
  }
  return std::nullopt;
}

}  // namespace

void FuseConvEpilogue(PassCtx& ctx) {
  const Readers readers(ctx);
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
      if (r < 0) {
        const std::optional<Gated> gated = MatchGated(ctx, readers, s);
        if (!gated) break;
        MakeFusedConv(conv, -1, gated->activation, 0, 0);
        conv.outputs = ctx.nodes[gated->nodes.back()]->outputs;
        ctx.nodes[at].reset();
        for (int n : gated->nodes) ctx.nodes[n].reset();
        at = gated->nodes.back();
        break;
      }
      const Node& next = *ctx.nodes[r];
      if (IsOnnx(next, "HardSwish")) {
        MakeFusedConv(conv, -1, "HardSwish", 0, 0);
      } else if (IsOnnx(next, "Add") && !has_z && conv.op_type == "Conv" &&
                 next.inputs.size() == 2) {
        const int z = next.inputs[0] == s ? next.inputs[1] : next.inputs[0];
        if (z == s || z < 0 || ctx.specs[z].dtype != dt || ctx.specs[z] != ctx.specs[s]) break;
        MakeFusedConv(conv, z, "", 0, 0);
        has_z = true;
      } else if (IsOnnx(next, "Relu")) {
        MakeFusedConv(conv, -1, "Relu", 0, 0);
      } else if (IsOnnx(next, "LeakyRelu")) {
        MakeFusedConv(conv, -1, "LeakyRelu", AttrOf<float>(next, "alpha").value_or(0.01f), 0);
      } else if (IsOnnx(next, "Clip")) {
        const auto bounds = ClipBounds(ctx, next);
        if (!bounds) break;
        MakeFusedConv(conv, -1, "Clip", bounds->first, bounds->second);
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
