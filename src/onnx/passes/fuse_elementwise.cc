// fuse_elementwise: a connected group of float32 elementwise nodes becomes
// one FusedElementwise (src/ops/fused_elementwise.cc), which runs the group
// as one pass over memory instead of one pass (and one buffer) per node:
// HardSwish, HardSigmoid, SiLU and GELU spelled out in their parts, a
// squeeze-excitation block's scale, a box decoder's arithmetic. A group
// grows from its last node towards the nodes that make its operands, taking
// a node when every reader of its result is in the group and the result is
// not a graph output, a plan result or read by a subgraph; the fused node
// runs where the last node ran. Steps: Add, Sub, Mul, Div, Max and Min of
// two inputs (numpy broadcasting), Abs, Clip with constant bounds, Erf,
// Exp, HardSigmoid, LeakyRelu, Neg, Reciprocal, Relu, Sigmoid, Sqrt, Tanh.
// It runs after the convolutions took their epilogues (fuse_conv_epilogue)
// and the layouts were chosen (a group of elementwise ops on blocked values
// computes the same in any element order).
#include <algorithm>
#include <string_view>

#include "onnx/passes/pass.h"
#include "singa/ops/fused_elementwise.h"

namespace singa::sonnx {
namespace {

using fused_elementwise::kMaxOperands, fused_elementwise::kMaxSteps;

struct StepOf {
  std::string op;
  int arity = 1;
  float alpha = 0, beta = 0;
};

DType DTypeOf(const PassCtx& ctx, int s) {
  if (s < static_cast<int>(ctx.specs.size()) && ctx.specs[s].dtype != DType::kUndefined)
    return ctx.specs[s].dtype;
  const Tensor& c = ctx.graph.constants[s];
  return c.defined() ? c.dtype() : DType::kUndefined;
}

// The step node n runs as, when it is one on float32 values.
std::optional<StepOf> AsStep(const PassCtx& ctx, const Node& n) {
  static constexpr std::string_view kBinary = " Add Sub Mul Div Max Min ";
  static constexpr std::string_view kUnary =
      " Abs Clip Erf Exp HardSigmoid LeakyRelu Neg Reciprocal Relu Sigmoid Sqrt Tanh ";
  if (!n.schema || !CanonicalDomain(n.domain).empty() || n.outputs.size() != 1 ||
      n.outputs[0] < 0 || !n.outer_inputs.empty())
    return std::nullopt;
  const std::string padded = " " + n.op_type + " ";
  StepOf s{n.op_type};
  if (kBinary.find(padded) != std::string_view::npos) {
    // Opset 1-6 Add/Sub/Mul/Div broadcast by their attributes instead.
    if (n.inputs.size() != 2 || AttrOf<int64_t>(n, "broadcast")) return std::nullopt;
    s.arity = 2;
  } else if (kUnary.find(padded) == std::string_view::npos || n.inputs.empty()) {
    return std::nullopt;
  } else if (n.op_type == "Clip") {
    const auto bounds = ClipBounds(ctx, n);
    if (!bounds) return std::nullopt;
    std::tie(s.alpha, s.beta) = *bounds;
  } else if (n.op_type == "LeakyRelu") {
    s.alpha = AttrOf<float>(n, "alpha").value_or(0.01f);
  } else if (n.op_type == "HardSigmoid") {
    s.alpha = AttrOf<float>(n, "alpha").value_or(0.2f);
    s.beta = AttrOf<float>(n, "beta").value_or(0.5f);
  } else if (n.inputs.size() != 1) {
    return std::nullopt;
  }
  for (int k = 0; k < s.arity; ++k)
    if (n.inputs[k] < 0 || DTypeOf(ctx, n.inputs[k]) != DType::kFloat32) return std::nullopt;
  if (DTypeOf(ctx, n.outputs[0]) != DType::kFloat32) return std::nullopt;
  return s;
}

}  // namespace

void FuseElementwise(PassCtx& ctx) {
  static const OpSchema& fused = OpRegistry::Get("FusedElementwise", kLatestOpset, "ai.singa");
  const Readers readers(ctx);
  const size_t n_slots = ctx.graph.constants.size();
  std::vector<std::vector<int>> read_by(n_slots);
  std::vector<int> made_by(n_slots, -1);
  std::vector<std::optional<StepOf>> steps(ctx.nodes.size());
  for (size_t i = 0; i < ctx.nodes.size(); ++i) {
    if (!ctx.nodes[i]) continue;
    const Node& n = *ctx.nodes[i];
    for (int s : n.inputs)
      if (s >= 0) read_by[s].push_back(static_cast<int>(i));
    for (int s : n.outputs)
      if (s >= 0) made_by[s] = static_cast<int>(i);
    steps[i] = AsStep(ctx, n);
  }
  // Per node: the root of the group that took it, -1 while none has.
  std::vector<int> group_of(ctx.nodes.size(), -1);
  for (size_t root = ctx.nodes.size(); root-- > 0;) {
    if (!steps[root] || group_of[root] >= 0) continue;
    const int id = static_cast<int>(root);
    const auto in_group = [&](int node) { return group_of[node] == id; };
    std::vector<int> group = {id};
    group_of[root] = id;
    // Takes the makers of the group's operands whose results only the
    // group reads, until none is left.
    for (bool grew = true; grew && group.size() < kMaxSteps;) {
      grew = false;
      for (size_t g = 0; g < group.size() && group.size() < kMaxSteps; ++g) {
        const Node& n = *ctx.nodes[group[g]];
        for (int k = 0; k < steps[group[g]]->arity; ++k) {
          const int s = n.inputs[k], p = made_by[s];
          if (p < 0 || group_of[p] >= 0 || !steps[p] ||
              readers.Count(s) != static_cast<int>(read_by[s].size()) ||
              !std::all_of(read_by[s].begin(), read_by[s].end(), in_group))
            continue;
          group.push_back(p);
          group_of[p] = id;
          grew = true;
        }
      }
    }
    if (group.size() < 2) continue;
    std::sort(group.begin(), group.end());
    // The operands from outside the group, then each step's result.
    std::vector<int> inputs;
    for (int g : group)
      for (int k = 0; k < steps[g]->arity; ++k) {
        const int s = ctx.nodes[g]->inputs[k];
        if ((made_by[s] < 0 || !in_group(made_by[s])) &&
            std::find(inputs.begin(), inputs.end(), s) == inputs.end())
          inputs.push_back(s);
      }
    if (inputs.size() + group.size() > kMaxOperands) {
      for (int g : group)
        if (g != id) group_of[g] = -1;
      continue;
    }
    const auto operand = [&](int s) {
      const auto it = std::find(inputs.begin(), inputs.end(), s);
      if (it != inputs.end()) return static_cast<int64_t>(it - inputs.begin());
      return static_cast<int64_t>(
          inputs.size() + (std::find(group.begin(), group.end(), made_by[s]) - group.begin()));
    };
    std::vector<std::string> ops;
    std::vector<int64_t> args;
    std::vector<float> alphas, betas;
    for (int g : group) {
      const StepOf& st = *steps[g];
      const Node& n = *ctx.nodes[g];
      ops.push_back(st.op);
      args.push_back(operand(n.inputs[0]));
      args.push_back(st.arity == 2 ? operand(n.inputs[1]) : -1);
      alphas.push_back(st.alpha);
      betas.push_back(st.beta);
    }
    Node f;
    f.name = ctx.nodes[root]->name;
    f.op_type = "FusedElementwise";
    f.domain = "ai.singa";
    f.schema = &fused;
    f.attrs = fused.ParseAttrs(
        AttrMap{{"ops", ops}, {"args", args}, {"alphas", alphas}, {"betas", betas}}, {}, f.name);
    f.inputs = inputs;
    f.outputs = ctx.nodes[root]->outputs;
    for (int g : group) ctx.nodes[g].reset();
    ctx.nodes[root] = std::move(f);
  }
}

}  // namespace singa::sonnx
