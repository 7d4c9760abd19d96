// The importer's model of an ONNX graph, free of protobuf types: values are
// numbered slots, nodes name their schema, parsed attributes and slots. The
// reader (reader.cc) builds it once; SingaRep::Run walks it; later
// passes (the static plan, fusions) rewrite it.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "singa/onnx/sonnx.h"
#include "singa/ops/op.h"

namespace singa::sonnx {

struct Graph;

struct Node {
  std::string name;  // the node's name, or "<op_type>#<index>" when it has none
  std::string op_type, domain;
  const OpSchema* schema = nullptr;
  std::shared_ptr<const void> attrs;  // parsed by schema->ParseAttrs
  // Runs on the op's value kernel whatever its inputs (OpSchema::RunsOnValues).
  bool on_values = false;
  std::vector<int> inputs;   // slots; -1 for an absent optional input
  std::vector<int> outputs;  // slots; -1 for an output the model does not use
  // The slots (in this graph) of the values its graph attributes read from
  // enclosing graphs.
  std::vector<int> outer_inputs;
};

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

// A graph attribute as ops see it (singa/ops/value.h): a graph read with
// its node's graph as the enclosing scope, and the slots there of the values
// it reads from outside (`outer`, in the order of graph->outer_names).
struct SubgraphPlans;  // rep.cc

class GraphAttr final : public Subgraph {
 public:
  GraphAttr(std::shared_ptr<const Graph> graph, std::vector<int> outer);
  int num_inputs() const override { return static_cast<int>(graph_->inputs.size()); }
  int num_outputs() const override { return static_cast<int>(graph_->outputs.size()); }
  const std::string& input_name(int i) const override { return graph_->inputs[i].name; }
  DType output_dtype(int i) const override { return graph_->outputs[i].dtype; }
  const Graph& graph() const { return *graph_; }
  const std::vector<int>& outer() const { return outer_; }
  // The graph's plans, by the shapes it runs on (RunSubgraph).
  SubgraphPlans& plans() const { return *plans_; }

 private:
  std::shared_ptr<const Graph> graph_;
  std::vector<int> outer_;
  std::shared_ptr<SubgraphPlans> plans_;
};

// Fills g.release_after: a value is dropped after its last reader runs (or
// right after its producer when nothing reads it); graph outputs and
// constants stay.
void PlanReleases(Graph& g);

// The graph's values before a run: its constants, nothing else bound.
ValueList ConstantValues(const Graph& g);

// A planned run's nodes run inside the plan, unrecorded: its outputs carry
// one record of this internal op instead, which the export expands by
// running the graph again, recording (OpSchema::expand).
struct PlannedRunAttrs {
  std::shared_ptr<Graph> graph;
  int last_layers = -1;
  std::vector<std::string> aux_output;
};
const OpSchema& PlannedRunOp();

}  // namespace singa::sonnx
