// ONNX import ("the sonnx backend"): an ONNX model becomes a SingaRep that
// runs the model's nodes through the op registry, so the same model runs for
// inference and, with grad mode on, records for autograd and trains: the
// initializers are parameters (stores_grad) named by their ONNX names.
//
//   auto rep = singa::sonnx::Prepare("resnet18.onnx");
//   TensorList y = rep->Run({x});                    // the graph's outputs
//   TensorList f = rep->Run({x}, -3);                // cut after the 3rd-last node
//   TensorList z = rep->Run({x}, -1, {"conv1_out"}); // outputs, then named extras
//   for (auto& [name, w] : rep->params()) optimizer.Register(w);
//
// Prepare does the work once: IR and opset checks, topological order,
// initializers, Constant nodes, external data, each node's schema (looked up
// with the model's opset for its domain) and its attributes parsed into the
// op's typed form. Run only executes. Dimensions that the model leaves
// symbolic are taken from the inputs at run time (shape inference runs per op).
// Every node is a registered op, control flow and the ops over sequences and
// optionals included: graph attributes (If's branches, Loop's body, ...) are
// read and prepared the same way and handed to the op, which runs them
// through its value kernel; a subgraph may read the values of the graphs
// around it.
//
// A "layer" (for last_layers) is a node of the graph in the topological order
// Prepare computes (the file's order when it is already topological);
// Constant nodes are folded at Prepare and are not layers.
//
// Errors are singa exceptions naming the node, op and what is wrong:
// UnsupportedOp (an op, domain or attribute kind we do not implement),
// InvalidModel (a malformed graph: cycle, missing input, bad IR version),
// IOError (unreadable or truncated file, external data outside the model's
// folder), ShapeError / DTypeError (Run inputs that do not fit the model).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "singa/core/cancel.h"
#include "singa/core/device.h"
#include "singa/core/tensor.h"
#include "singa/ops/value.h"

namespace singa::sonnx {

// The importer's model: nodes with their schemas and parsed attributes, and
// value slots (src/onnx/graph.h). Kept opaque here so that the protobuf
// types never appear in a public header.
struct Graph;

// A graph input or output as the model declares it: dims < 0 are symbolic
// (dim_param) or unknown; `has_shape` is false when no shape is declared.
// A sequence (seq(tensor)) or an optional (optional(tensor) or
// optional(seq(tensor))) is marked so; dtype and dims then describe the
// tensors inside.
struct ValueInfo {
  std::string name;
  DType dtype = DType::kUndefined;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;  // the symbol of each symbolic dim, else ""
  bool has_shape = false;
  bool sequence = false;
  bool optional = false;
};

// A value of a model's graph: a tensor, a sequence of tensors or none
// (singa/ops/value.h).
using singa::Value;
using singa::ValueList;

// One node's share of a profiled run (SingaRep::Profile).
struct NodeProfile {
  std::string op_type;  // as the run executed it: a plan's fused ops (FusedConv) included
  std::string name;
  std::vector<std::string> inputs;   // each input's dtype and shape, "none" for an absent one
  std::vector<std::string> kernels;  // the oneDNN implementations the node ran, if any
  double start_us = 0;               // from the start of the run
  double duration_us = 0;
};

struct RunProfile {
  ValueList outputs;
  double duration_us = 0;  // the whole run: inputs copied in and results out included
  bool planned = false;    // the static plan ran (else the run walked the nodes)
  bool replayed = false;   // the plan replayed its recorded ops (else it walked its nodes)
  std::vector<NodeProfile> nodes;
  // The run as a trace in the Chrome trace format (chrome://tracing,
  // Perfetto; onnxruntime's profiler writes the same): one complete event
  // per node, with its op, inputs and kernels, and one for the whole run.
  std::string ChromeTrace() const;
  // Those events alone, on trace row `row` (to join several runs' events
  // into one trace list).
  std::string TraceEvents(int row = 1) const;
};

class SingaRep {
 public:
  explicit SingaRep(std::shared_ptr<Graph> graph);
  ~SingaRep();

  // Runs the model on `inputs`, one per graph input without an initializer
  // (or one per graph input: values for inputs with an initializer then
  // replace it for this run). last_layers: -1 runs every node and returns
  // the graph outputs; -N (N > 1) stops after the N-th last node and returns
  // that node's outputs. aux_output names extra values (any node output,
  // input or initializer) returned after those.
  // The results must be tensors (DTypeError names one that is not).
  TensorList Run(const TensorList& inputs, int last_layers = -1,
                 const std::vector<std::string>& aux_output = {}) const;
  // Run for models whose inputs or results include sequences or optionals.
  ValueList RunValues(const ValueList& inputs, int last_layers = -1,
                      const std::vector<std::string>& aux_output = {}) const;
  // RunValues with the time of every node it runs, its inputs and the
  // kernels it chose. A run that would use the static plan times the plan
  // (built first if this signature has none: the profile is of a run after
  // the first).
  RunProfile Profile(const ValueList& inputs, int last_layers = -1,
                     const std::vector<std::string>& aux_output = {}) const;

  // Initializers by ONNX name. Floating-point ones are marked stores_grad:
  // they are the model's trainable parameters.
  const std::map<std::string, Tensor>& params() const;
  // Graph inputs that Run takes (those without an initializer), in order.
  const std::vector<ValueInfo>& inputs() const;
  // Declares `batch` as the first dimension of every graph input that has
  // a shape (SINGA's placeholder batch size): later runs take inputs of
  // that batch, and shapes downstream follow. A graph that hard-codes the
  // old batch (a Reshape to [1, ...]) then fails naming that node.
  void SetBatchSize(int64_t batch);
  // The same from example inputs (placeholders): each input's first
  // dimension becomes the declared one where its rank matches.
  void AdoptBatchSize(const TensorList& inputs);
  const std::vector<ValueInfo>& outputs() const;
  // Number of layers (non-Constant nodes) and their op types in run order.
  int num_nodes() const;
  std::vector<std::string> node_op_types() const;
  // The names of each layer's outputs the model uses, in run order.
  std::vector<std::vector<std::string>> node_output_names() const;
  // The model's opset for a domain ("" and "ai.onnx" are the default one);
  // 0 when the model does not import the domain.
  int opset(std::string_view domain = "") const;
  int64_t ir_version() const;
  Device device() const;

  // The prepared graph, for passes that build on it (the static plan).
  const Graph& graph() const { return *graph_; }

  // Inference runs (grad mode off, training mode off, no graph capture in
  // progress, no initializer overridden) use a static plan built once per
  // input signature, cut and aux_output (src/onnx/plan.h): constants and
  // shapes folded, BatchNormalization folded into Conv, Conv fused with a
  // following Add and activation, and the run captured and replayed with
  // one memory plan. Off, every run walks the prepared nodes. On by default.
  void set_use_plan(bool on);
  bool use_plan() const;
  // How many plans exist (one per signature), the bytes of the memory
  // arenas they hold (they share one; a plan placed before it grew holds
  // an older one), and the op types of the latest one's nodes after
  // folding and fusion: for tests and tools.
  size_t num_plans() const;
  size_t plan_arena_bytes() const;
  std::vector<std::string> planned_op_types() const;

  // Stops the runs in progress on this model, from any thread: they throw
  // Cancelled at the next point that checks (each iteration of a Loop, Scan
  // or SequenceMap), so even a Loop without bound ends. Later runs are not
  // affected.
  void Cancel() const { canceller_.Cancel(); }

 private:
  ValueList RunOnce(const ValueList& inputs, int last_layers,
                    const std::vector<std::string>& aux_output, RunProfile* profile) const;
  ValueList RunChecked(const ValueList& inputs, int last_layers,
                       const std::vector<std::string>& aux_output, RunProfile* profile) const;
  struct Plans;
  std::shared_ptr<Graph> graph_;
  std::unique_ptr<Plans> plans_;
  mutable Canceller canceller_;
};

// Reads an ONNX file. External data is read relative to the file's folder.
std::shared_ptr<SingaRep> Prepare(const std::string& path, Device device = Device::Cpu());
// Reads a serialized ModelProto. External data, if the model has any, is read
// relative to `base_dir`; without one such a model is refused.
std::shared_ptr<SingaRep> PrepareFromBytes(std::string_view bytes, Device device = Device::Cpu(),
                                           const std::string& base_dir = "");

}  // namespace singa::sonnx
