// The importer's model of an ONNX graph, free of protobuf types: values are
// numbered slots, nodes name their schema, parsed attributes and slots. The
// reader (reader.cc) builds it once; SingaRep::Run walks it; later
// passes (the static plan, fusions) rewrite it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <variant>
#include <vector>

#include "singa/onnx/sonnx.h"
#include "singa/ops/op.h"

namespace singa::sonnx {

// "ai.onnx" for the default domain (written "" in models), for messages.
inline std::string DomainName(const std::string& d) { return d.empty() ? "ai.onnx" : d; }

struct Graph;
struct Node;

// Ops with graph attributes run their subgraphs in the importer (the op
// registry has no notion of a graph). kFlexAttention: ai.onnx.preview's
// FlexAttention with score_mod and/or prob_mod (src/onnx/flex_attention.cc;
// without them the registered op runs). kGradient: ai.onnx.preview.training's
// Gradient, whose subgraph (read from its xs, zs and y) computes y.
enum class ControlFlow { kNone, kIf, kLoop, kScan, kSequenceMap, kFlexAttention, kGradient };

// Ops over sequences and optionals run in the importer too (the registry's
// kernels take tensors): src/onnx/sequence_ops.cc. Their inputs are checked
// against min/max_inputs at Prepare; `run` gets them with absent ones none.
struct ValueOp {
  std::string_view name;
  int since_version, min_inputs, max_inputs;
  ValueList (*run)(const Graph& g, const Node& node, const ValueList& in);
};
// The ai.onnx ValueOp named `op_type`; null when none.
const ValueOp* FindValueOp(std::string_view op_type);

struct ScanAttrs {
  // Scan-8: a leading batch axis on every state and scan input, and a first
  // input sequence_lens; `directions` is read into input_directions.
  bool batched = false;
  int64_t num_scan_inputs = 0;
  std::vector<int64_t> input_axes, input_directions, output_axes, output_directions;
};

struct Node {
  std::string name;  // the node's name, or "<op_type>#<index>" when it has none
  std::string op_type, domain;
  const OpSchema* schema = nullptr;   // null for control flow and value ops
  std::shared_ptr<const void> attrs;  // parsed by schema->ParseAttrs
  const ValueOp* value_op = nullptr;
  AttrMap value_attrs;       // a value op's attributes
  std::vector<int> inputs;   // slots; -1 for an absent optional input
  std::vector<int> outputs;  // slots; -1 for an output the model does not use

  ControlFlow control = ControlFlow::kNone;
  // If: then_branch, else_branch; Loop, Scan and SequenceMap: body;
  // FlexAttention: score_mod, prob_mod (null when absent); Gradient: the
  // graph from its xs and zs (its inputs, in that order) to y.
  std::vector<std::shared_ptr<const Graph>> subgraphs;
  // For each subgraph, the slots (in this graph) of the values it reads from
  // enclosing graphs, in the order of its outer_names.
  std::vector<std::vector<int>> outer_inputs;
  ScanAttrs scan;
  int num_xs = 0;  // Gradient: its first num_xs inputs are the xs
};

// A value op's or graph-attribute node's attribute (Node::value_attrs), or
// `fallback` when the node has none; InvalidModel when it has another type.
template <class T>
T ValueAttr(const Node& n, std::string_view name, T fallback) {
  auto it = n.value_attrs.find(name);
  if (it == n.value_attrs.end()) return fallback;
  const T* v = std::get_if<T>(&it->second);
  SINGA_CHECK(v, InvalidModel,
              "node '" << n.name << "' (" << n.op_type << "): attribute '" << name << "' must be "
                       << (std::is_same_v<T, float> ? "a float" : "an int"));
  return *v;
}

struct Graph {
  int64_t ir_version = 0;
  std::map<std::string, int> opsets;  // domain ("" = ai.onnx) -> version
  Device device;

  std::vector<std::string> slot_names;           // slot -> value name
  std::unordered_map<std::string, int> slot_of;  // value name -> slot
  std::vector<Tensor> constants;                 // slot -> initializer/Constant value
  std::map<std::string, Tensor> params;          // initializers by name
  std::vector<int> producer;                     // slot -> node index, -1 if none

  std::vector<ValueInfo> inputs;           // the inputs Run takes (no initializer)
  std::vector<int> input_slots;            // their slots
  std::vector<ValueInfo> shadowed_inputs;  // graph inputs that have an initializer
  std::vector<int> shadowed_slots;
  std::vector<ValueInfo> outputs;
  std::vector<int> output_slots;

  // A subgraph's values that come from enclosing graphs, and their slots here.
  std::vector<std::string> outer_names;
  std::vector<int> outer_slots;

  std::vector<Node> nodes;  // topological order, Constant nodes folded
  // For each node, the slots whose last reader it is (dropped after it runs).
  std::vector<std::vector<int>> release_after;

  // "node 'conv1' (Conv)": for error messages.
  std::string Where(const Node& n) const { return "node '" + n.name + "' (" + n.op_type + ")"; }
};

// Fills g.release_after: a value is dropped after its last reader runs (or
// right after its producer when nothing reads it); graph outputs and
// constants stay.
void PlanReleases(Graph& g);

// The graph's values before a run: its constants, nothing else bound.
ValueList ConstantValues(const Graph& g);

}  // namespace singa::sonnx
