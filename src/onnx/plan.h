// The static inference plan of a prepared model for one input signature
// (shapes and dtypes, the cut and the extra outputs). Building it walks the
// model once, node by node, and learns from that walk:
//  - which values are constant for this signature: non-parameter constants,
//    shapes (Shape, Size) and everything computed from them only. Their
//    nodes run and are folded: their values become constants of the plan.
//  - which nodes infer shapes from computed values (NonZero, a Reshape whose
//    shape comes from data, control flow, sequences): those make the plan
//    "dynamic".
// The walk first infers the other nodes' result shapes without running them;
// only when a node's shapes need computed values does it start again and run
// every node (the build run).
// It then rewrites the graph with the passes of src/onnx/passes, in the
// order of PlanPasses(): the folded values become constants, a
// BatchNormalization after a Conv is folded into the Conv's weights and
// bias, a Conv followed by an Add of a same-shaped value and/or a Relu,
// LeakyRelu or Clip becomes one FusedConv (oneDNN post-ops), activations
// between convolutions keep oneDNN's blocked layout, and each value is
// dropped after its last reader. A static plan is captured through Device::Exec once:
// runs replay the recording (no shape inference, no allocation but the
// results': one arena planned from the values' lifetimes), the first run
// included, reading contiguous inputs where they lie and handing the
// results' memory to the caller. A dynamic plan walks the rewritten graph
// node by node.
//
// Folded weights come from parameters, which training may change: the plan
// remembers the version of every block it read them from and is rebuilt
// when one differs (fresh()).
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "onnx/graph.h"

namespace singa::sonnx {

// Runs a node on its inputs (OpSchema::RunValues); `values` are the graph's
// values, which its graph attributes may read. `reads`, when given, logs the
// inputs whose values a tensor op's shape inference read (InferCtx).
ValueList RunNode(const Graph& g, const Node& node, const ValueList& in, const ValueList& values,
                  ValueReads* reads = nullptr);
// Runs a graph attribute's subgraph on `inputs` (its formal inputs) with
// the values it reads from the enclosing graph `parent` taken from
// `parent_values` (attr.outer(): their slots there): through its plan for
// these shapes where the run uses plans, else by walking its nodes.
ValueList RunSubgraph(const GraphAttr& attr, const ValueList& inputs, const Graph& parent,
                      const ValueList& parent_values, const std::string& where);
// Whether the input-less subgraph `attr` (an If branch), run with these
// enclosing values, has a plan that replays its recording.
bool SubgraphReplays(const GraphAttr& attr, const Graph& parent, const ValueList& parent_values);
// What Execute calls around each node: before(node index, its inputs) and
// after(node index).
struct NodeHook {
  std::function<void(int, const ValueList&)> before;
  std::function<void(int)> after;
  // When set and it gives results, they are the node's instead of running it.
  std::function<std::optional<ValueList>(int, const ValueList&)> run;
};
// Sets profile->duration_us to its own lifetime (nothing without a profile).
class ProfileClock {
 public:
  explicit ProfileClock(RunProfile* profile);
  ~ProfileClock();

 private:
  RunProfile* profile_;
  std::chrono::steady_clock::time_point start_;
};

// Profiles a node walk: a hook for Execute that appends each node's
// NodeProfile (times from construction) to `nodes`.
class NodeTimer {
 public:
  NodeTimer(const Graph& g, std::vector<NodeProfile>& nodes);
  ~NodeTimer();
  const NodeHook& hook() const { return hook_; }

 private:
  struct State;
  std::unique_ptr<State> state_;
  NodeHook hook_;
};

// Runs nodes [0, end) over `values`, dropping each value after its last
// reader unless `keep` (when not empty) marks it.
void Execute(const Graph& g, ValueList& values, int end, const std::vector<char>& keep,
             const NodeHook* hook = nullptr);

// A value's dtype and shape as the build run saw it.
struct Spec {
  DType dtype = DType::kUndefined;
  Shape shape;
  friend bool operator==(const Spec&, const Spec&) = default;
};

class Plan {
 public:
  // Builds the plan for running nodes [0, end) of `g` with `values` (the
  // graph's constants with the inputs bound) and returning `result_slots`.
  // `first` receives the results of the first run. A captured plan's
  // values live in `arena`, which the other plans of the model share (one
  // replays at a time).
  Plan(const Graph& g, ValueList values, int end, const std::vector<int>& result_slots,
       SharedArena& arena, ValueList& first);
  // False once a parameter the plan folded, or whose value set a shape, has
  // changed.
  bool fresh() const;
  bool captured() const { return !ops_.empty(); }
  // A captured plan's memory arena (none for a node walk).
  const SharedArena& arena() const { return arena_; }
  // Moves a captured plan's values to `arena`, at least as large as its own
  // (the model's shared one, grown since the plan was placed).
  void MoveTo(const SharedArena& arena);
  // The rewritten graph's op types (after folding and fusion).
  std::vector<std::string> op_types() const;
  // Runs the plan on `inputs` (one per graph input slot, checked by the
  // caller). The results have memory of their own. With `profile`, each
  // node's time, inputs and kernels are appended to it.
  ValueList Run(const ValueList& inputs, std::vector<NodeProfile>* profile = nullptr);

 private:
  void Rewrite(const Graph& g, int end, const ValueList& values, const std::vector<Spec>& specs,
               const std::vector<char>& folded, const std::vector<int>& result_slots);
  void Capture(const TensorList& inputs, SharedArena& arena);

  std::shared_ptr<Graph> graph_;  // the rewritten graph, results as its outputs
  std::vector<std::pair<std::weak_ptr<Block>, uint64_t>> deps_;
  TensorList inputs_, results_;  // a captured plan's placeholders and results
  // Per result: whether a replay hands its memory to the caller
  // (Block::TakeMemory) instead of a copy: a contiguous result in a block of
  // its own that the recording writes, on the CPU (a CUDA graph keeps the
  // addresses it was captured with).
  std::vector<char> handed_;
  // Per input: its placeholder's offset in the arena when a replay reads a
  // contiguous input where it lies (the placeholder moved there for the
  // replay, Block::Move) instead of copying it in; -1 when an op writes the
  // placeholder, or off the CPU.
  std::vector<int64_t> lent_at_;
  std::vector<DeviceRuntime::Op> ops_;
  SharedArena arena_;
  ArenaPlacement placement_;
  // Per node of a captured plan: the end of its ops in ops_ and its inputs
  // as the capture saw them (what a profile reports).
  std::vector<size_t> node_ends_;
  std::vector<std::vector<std::string>> node_inputs_;
  // A walked plan's values between runs: the graph's constants, so that a
  // run binds its inputs into them instead of copying every constant
  // (each Tensor copy allocates its shape and strides).
  ValueList walk_values_;
  // If nodes (by their parsed attributes) the capture records as switches
  // between their branches' plans, with their results' specs.
  std::map<const void*, std::vector<Spec>> switches_;
};

}  // namespace singa::sonnx
