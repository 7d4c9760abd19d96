// fuse_gemm_activation: a float32 Gemm whose result only a Relu, LeakyRelu
// or Clip (constant bounds) reads becomes one FusedGemm that applies the
// activation to its result in place, running where the activation ran.
#include "onnx/passes/pass.h"

namespace singa::sonnx {

void FuseGemmActivation(PassCtx& ctx) {
  static const OpSchema& fused = OpRegistry::Get("FusedGemm", kLatestOpset, "ai.singa");
  const Readers readers(ctx);
  for (size_t i = 0; i < ctx.nodes.size(); ++i) {
    if (!ctx.nodes[i] || !IsOnnx(*ctx.nodes[i], "Gemm") || ctx.nodes[i]->outputs.size() != 1)
      continue;
    const int y = ctx.nodes[i]->outputs[0];
    if (y < 0 || ctx.specs[y].dtype != DType::kFloat32) continue;
    const int r = readers.Sole(ctx, y);
    if (r < 0) continue;
    const Node& act = *ctx.nodes[r];
    float alpha = 0, beta = 0;
    if (IsOnnx(act, "LeakyRelu")) {
      alpha = AttrOf<float>(act, "alpha").value_or(0.01f);
    } else if (IsOnnx(act, "Clip")) {
      const auto bounds = ClipBounds(ctx, act);
      if (!bounds) continue;
      std::tie(alpha, beta) = *bounds;
    } else if (!IsOnnx(act, "Relu")) {
      continue;
    }
    Node gemm = std::move(*ctx.nodes[i]);
    AttrMap m = gemm.schema->dump(gemm.attrs.get());
    m.erase("broadcast");
    m["activation"] = act.op_type;
    m["act_alpha"] = alpha;
    m["act_beta"] = beta;
    gemm.op_type = "FusedGemm";
    gemm.domain = "ai.singa";
    gemm.schema = &fused;
    gemm.attrs = fused.ParseAttrs(m, {}, gemm.name);
    gemm.outputs = act.outputs;
    ctx.nodes[i].reset();
    ctx.nodes[r] = std::move(gemm);
  }
}

}  // namespace singa::sonnx
