// The passes that rewrite a plan's graph (src/onnx/plan.h), one per file in
// this folder. Each is a function over a PassCtx: the graph being rewritten,
// its nodes in their original order, and what the plan's build run learned
// (values, dtypes and shapes, folded values). Plan runs them in the order
// of PlanPasses():
//
//   for (const Pass& p : PlanPasses()) p.run(ctx);
//
// A pass may remove nodes (reset their entry), rewrite them in place or move
// one to another node's position (an entry's position is where it runs), and
// add constants; it never adds a value that is not a constant.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "onnx/graph.h"
#include "onnx/plan.h"

namespace singa::sonnx {

struct PassCtx {
  const Graph& source;  // the prepared model's graph
  Graph& graph;         // the rewritten graph: its constants, slot names and nodes
  // Nodes [0, end) of `source` as rewritten so far, each at the position it
  // runs at; empty where a node was removed.
  std::vector<std::optional<Node>> nodes;
  const ValueList& values;               // the build run's values, by source slot
  const std::vector<Spec>& specs;        // each source slot's dtype and shape
  const std::vector<char>& folded;       // source slots the build run folded
  const std::vector<int>& result_slots;  // what the plan returns
  // The parameter blocks (and their versions) that folded constants came
  // from: the plan is rebuilt when one changes.
  std::vector<std::pair<std::weak_ptr<Block>, uint64_t>>& deps;

  // Appends a constant slot named `name` holding `t`; returns its slot.
  int AddConstant(const std::string& name, Tensor t);
  // Whether slot `s` is a constant of the source graph: an initializer
  // (which training may change) or a Constant node's value.
  bool IsParam(int s) const { return s >= 0 && source.constants[s].defined(); }
};

using PassFn = void (*)(PassCtx&);
struct Pass {
  std::string_view name;
  PassFn run;
  // It rewrites into ops that only the CPU runs fast (oneDNN's fused
  // convolutions and its blocked layouts): a plan on a GPU skips it.
  bool cpu_only = false;
};
// The plan's passes, in the order they run (src/onnx/plan.cc).
std::span<const Pass> PlanPasses();

// fold_constants.cc
void FoldConstants(PassCtx& ctx);
// fold_batch_norm.cc
void FoldBatchNorm(PassCtx& ctx);
// fuse_conv_epilogue.cc
void FuseConvEpilogue(PassCtx& ctx);
// choose_layouts.cc
void ChooseLayouts(PassCtx& ctx);
// fuse_elementwise.cc
void FuseElementwise(PassCtx& ctx);
// plan_releases.cc
void PlanValueReleases(PassCtx& ctx);

// fuse_gemm_activation.cc
void FuseGemmActivation(PassCtx& ctx);

// ---- helpers shared by the passes (pass.cc) ----------------------------

bool IsOnnx(const Node& n, std::string_view op);
// A Conv, or a FusedConv a pass made of one.
bool IsConv(const Node& n);

// A node's attribute `name` of type T from its parsed attributes; nullopt
// when the op has no such attribute or it has another type.
template <class T>
std::optional<T> AttrOf(const Node& n, std::string_view name) {
  if (!n.schema || !n.schema->dump) return std::nullopt;
  const AttrMap m = n.schema->dump(n.attrs.get());
  auto it = m.find(name);
  if (it == m.end() || !std::holds_alternative<T>(it->second)) return std::nullopt;
  return std::get<T>(it->second);
}

// The value of a one-element floating-point constant slot.
std::optional<float> ScalarConstant(const PassCtx& ctx, int s);
// A Clip node's bounds (min, max) when both are constants or absent (then
// -inf or +inf); nullopt when either is computed.
std::optional<std::pair<float, float>> ClipBounds(const PassCtx& ctx, const Node& clip);

// Makes Conv or FusedConv `conv` a FusedConv, adding `z` as its Z input
// (when >= 0) and `activation` with its alpha and beta (when not empty).
void MakeFusedConv(Node& conv, int z, const std::string& activation, float alpha, float beta);
// Sets a FusedConv's attribute `name` to `value`.
void SetFusedConvAttr(Node& conv, const std::string& name, AttrValue value);

// Who reads each value among the nodes still in `ctx.nodes`; graph
// outputs, the plan's results and subgraphs count as readers no pass can
// absorb a value into.
class Readers {
 public:
  explicit Readers(const PassCtx& ctx);
  // The position of the one node that reads slot `s`, when exactly one
  // still-present node does and nothing else does; else -1.
  int Sole(const PassCtx& ctx, int s) const;
  // How many readers slot `s` has (nodes, outputs, results, subgraphs).
  int Count(int s) const { return s < 0 ? 0 : count_[s]; }

 private:
  std::vector<int> count_, last_;  // last_: -1 for an output or a subgraph
};

}  // namespace singa::sonnx
