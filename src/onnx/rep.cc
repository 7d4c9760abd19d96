// SingaRep::Run: checks the inputs against the model's declared types, then
// runs the prepared nodes in order through OpSchema::Run (which records for
// autograd when grad mode is on and a parameter requires grad), dropping each
// intermediate value after its last reader.
#include <algorithm>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>

#include "onnx/plan.h"
#include "singa/ops/tape.h"

namespace singa::sonnx {
namespace {

std::string Describe(const ValueInfo& v) {
  std::string s = v.dtype == DType::kUndefined ? "any" : std::string(Name(v.dtype));
  if (v.has_shape) {
    s += "[";
    for (size_t i = 0; i < v.dims.size(); ++i) {
      if (i) s += ",";
      s += v.dims[i] >= 0 ? std::to_string(v.dims[i])
                          : (v.dim_params[i].empty() ? std::string("?") : v.dim_params[i]);
    }
    s += "]";
  }
  if (v.sequence) s = "seq(" + s + ")";
  if (v.optional) s = "optional(" + s + ")";
  return v.name + ": " + s;
}

std::string DescribeAll(const std::vector<ValueInfo>& vs) {
  std::string s;
  for (const ValueInfo& v : vs) s += (s.empty() ? "" : ", ") + Describe(v);
  return s;
}

// Symbolic dims must take one value across all inputs of a run (a
// sequence's elements may differ: their dims are not bound).
void CheckTensor(const ValueInfo& info, const Tensor& t,
                 std::unordered_map<std::string, int64_t>* symbols) {
  SINGA_CHECK(t.defined(), ShapeError, "SingaRep::Run: input '" << info.name << "' is undefined");
  SINGA_CHECK(info.dtype == DType::kUndefined || t.dtype() == info.dtype, DTypeError,
              "SingaRep::Run: input '" << info.name << "' must be " << Describe(info) << ", got "
                                       << t.ToString());
  if (!info.has_shape) return;
  SINGA_CHECK(static_cast<size_t>(t.ndim()) == info.dims.size(), ShapeError,
              "SingaRep::Run: input '" << info.name << "' must be " << Describe(info) << ", got "
                                       << t.ToString() << " (rank " << t.ndim() << ")");
  for (size_t i = 0; i < info.dims.size(); ++i) {
    const int64_t got = t.shape()[i];
    if (info.dims[i] >= 0) {
      SINGA_CHECK(got == info.dims[i], ShapeError,
                  "SingaRep::Run: input '" << info.name << "' must be " << Describe(info)
                                           << ", got " << t.ToString() << " (dim " << i << ")");
    } else if (symbols && !info.dim_params[i].empty()) {
      auto [it, fresh] = symbols->emplace(info.dim_params[i], got);
      SINGA_CHECK(fresh || it->second == got, ShapeError,
                  "SingaRep::Run: dim '" << info.dim_params[i] << "' of input '" << info.name
                                         << "' is " << got << ", but " << it->second
                                         << " in an earlier input");
    }
  }
}

void CheckInput(const ValueInfo& info, const Value& v,
                std::unordered_map<std::string, int64_t>& symbols) {
  if (info.optional && v.is_none()) return;
  SINGA_CHECK(v.is_sequence() == info.sequence, DTypeError,
              "SingaRep::Run: input '" << info.name << "' must be " << Describe(info) << ", got "
                                       << v.ToString());
  if (!v.is_sequence()) return CheckTensor(info, v.tensor(), &symbols);
  for (const Tensor& t : v.sequence()) CheckTensor(info, t, nullptr);
}

// A value that must be a tensor (an op's input, a loop's scan output).
const Tensor& TensorOf(const Value& v, const std::string& where, const std::string& what) {
  SINGA_CHECK(!v.is_sequence(), DTypeError,
              where << ": " << what << " must be a tensor, got " << v.ToString());
  return v.tensor();
}

}  // namespace

ValueList RunSubgraph(const Graph& sub, const ValueList& inputs, const ValueList& parent_values,
                      const std::vector<int>& outer, const std::string& where) {
  SINGA_CHECK(inputs.size() == sub.input_slots.size(), InvalidModel,
              where << ": the subgraph takes " << sub.input_slots.size() << " inputs, "
                    << inputs.size() << " given");
  ValueList values = ConstantValues(sub);
  for (size_t i = 0; i < inputs.size(); ++i) values[sub.input_slots[i]] = inputs[i];
  for (size_t k = 0; k < outer.size(); ++k) values[sub.outer_slots[k]] = parent_values[outer[k]];
  Execute(sub, values, static_cast<int>(sub.nodes.size()), {});
  ValueList out;
  for (int s : sub.output_slots) out.push_back(values[s]);
  return out;
}

namespace {

bool Truth(const Value& v, const std::string& where, const char* what) {
  const Tensor& t = TensorOf(v, where, what);
  SINGA_CHECK(t.defined() && t.numel() == 1, ShapeError,
              where << ": " << what << " must have one element, got "
                    << (t.defined() ? t.ToString() : std::string("none")));
  return t.Item<bool>();
}

// Stacks the scan outputs of a loop (equally shaped tensors) along a new
// axis, through ops (so autograd records it). None: an empty [0] tensor of
// `dtype`.
Tensor Stack(const ValueList& vs, int64_t axis, DType dtype, Device device,
             const std::string& where) {
  if (vs.empty()) return Tensor({0}, dtype == DType::kUndefined ? DType::kFloat32 : dtype, device);
  const int64_t rank = TensorOf(vs[0], where, "a scan output").ndim();
  if (axis < 0) axis += rank + 1;
  Tensor axes = Tensor::FromVector<int64_t>({1}, {axis}, device);
  TensorList parts;
  for (const Value& v : vs)
    parts.push_back(CallOp("Unsqueeze", {TensorOf(v, where, "a scan output"), axes})[0]);
  return CallOp("Concat", parts, {{"axis", axis}})[0];
}

ValueList RunIf(const Graph& g, const Node& node, const ValueList& in, const ValueList& values) {
  const std::string where = g.Where(node);
  const int branch = Truth(in[0], where, "cond") ? 0 : 1;
  ValueList out = RunSubgraph(*node.subgraphs[branch], {}, values, node.outer_inputs[branch],
                              where + (branch == 0 ? " then_branch" : " else_branch"));
  out.resize(node.outputs.size());
  return out;
}

ValueList RunLoop(const Graph& g, const Node& node, ValueList in, const ValueList& values) {
  in.resize(std::max<size_t>(in.size(), 2));  // M and cond may both be absent
  const std::string where = g.Where(node);
  const Graph& body = *node.subgraphs[0];
  const Tensor& trip = TensorOf(in[0], where, "M");
  const int64_t max_trip =
      trip.defined() ? trip.Item<int64_t>() : std::numeric_limits<int64_t>::max();
  bool cond = in[1].is_none() ? true : Truth(in[1], where, "cond");
  ValueList carried(in.begin() + 2, in.end());
  const size_t n_scan = body.outputs.size() - 1 - carried.size();
  std::vector<ValueList> scans(n_scan);
  for (int64_t i = 0; i < max_trip && cond; ++i) {
    ValueList args = {Tensor::Scalar<int64_t>(i, g.device), Tensor::Scalar<bool>(cond, g.device)};
    args.insert(args.end(), carried.begin(), carried.end());
    ValueList out = RunSubgraph(body, args, values, node.outer_inputs[0], where + " body");
    cond = Truth(out[0], where, "the body's cond output");
    for (size_t j = 0; j < carried.size(); ++j) carried[j] = out[1 + j];
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[1 + carried.size() + k]);
  }
  ValueList result = carried;
  for (size_t k = 0; k < n_scan; ++k)
    result.push_back(
        Stack(scans[k], 0, body.outputs[1 + carried.size() + k].dtype, g.device, where));
  result.resize(node.outputs.size());
  return result;
}

// A Scan attribute's entry for input or output i (0 when the list is short).
int64_t attr_at(const std::vector<int64_t>& v, int64_t i) {
  return i < static_cast<int64_t>(v.size()) ? v[i] : 0;
}

// Scan-8: states [batch, ...] and scan inputs [batch, steps, ...]; batch row
// b scans the first sequence_lens[b] steps (all when absent) of its rows,
// and its scan outputs are zero past them.
ValueList RunBatchedScan(const Graph& g, const Node& node, const ValueList& in,
                         const ValueList& values) {
  const std::string where = g.Where(node);
  const Graph& body = *node.subgraphs[0];
  const ScanAttrs& a = node.scan;
  const int64_t m = a.num_scan_inputs;
  const int64_t n_state = static_cast<int64_t>(in.size()) - 1 - m;  // the reader checked >= 0
  TensorList x;
  for (size_t j = 1; j < in.size(); ++j) {
    x.push_back(TensorOf(in[j], where, "input " + std::to_string(j)));
    SINGA_CHECK(x.back().defined() && x.back().ndim() >= (int64_t(j) > n_state ? 2 : 1), ShapeError,
                where << ": input " << j << " needs a batch axis"
                      << (int64_t(j) > n_state ? " and a sequence axis" : "") << ", got "
                      << (x.back().defined() ? x.back().ToString() : std::string("none")));
    SINGA_CHECK(x.back().dim(0) == x[0].dim(0), ShapeError,
                where << ": input " << j << " has batch " << x.back().dim(0) << ", input 1 "
                      << x[0].dim(0));
  }
  const int64_t batch = x[0].dim(0), steps = x[n_state].dim(1);
  for (int64_t j = n_state; j < n_state + m; ++j)
    SINGA_CHECK(x[j].dim(1) == steps, ShapeError,
                where << ": scan inputs have different lengths (" << steps << " and " << x[j].dim(1)
                      << ")");
  std::vector<int64_t> lens(batch, steps);
  if (!in[0].is_none()) {
    const Tensor& l = in[0].tensor();
    SINGA_CHECK(
        l.ndim() == 1 && l.dim(0) == batch && IsInteger(l.dtype()), ShapeError,
        where << ": sequence_lens must be ints of shape [" << batch << "], got " << l.ToString());
    lens = CallOp("Cast", {l}, {{"to", int64_t(DType::kInt64)}})[0].ToVector<int64_t>();
  }
  const size_t n_scan = body.outputs.size() - n_state;
  std::vector<ValueList> state_rows(n_state), scan_rows(n_scan);
  std::vector<std::vector<ValueList>> steps_of(batch, std::vector<ValueList>(n_scan));
  std::vector<std::optional<Shape>> step_shape(n_scan);
  for (int64_t b = 0; b < batch; ++b) {
    SINGA_CHECK(lens[b] >= 0 && lens[b] <= steps, ShapeError,
                where << ": sequence_lens[" << b << "] = " << lens[b] << " is outside [0, " << steps
                      << "]");
    Tensor row = Tensor::Scalar<int64_t>(b, g.device);
    ValueList states;
    for (int64_t j = 0; j < n_state; ++j) states.push_back(CallOp("Gather", {x[j], row})[0]);
    TensorList seqs;
    for (int64_t j = n_state; j < n_state + m; ++j)
      seqs.push_back(CallOp("Gather", {x[j], row})[0]);
    for (int64_t t = 0; t < lens[b]; ++t) {
      ValueList args = states;
      for (int64_t j = 0; j < m; ++j) {
        const int64_t i = attr_at(a.input_directions, j) == 1 ? lens[b] - 1 - t : t;
        args.push_back(CallOp("Gather", {seqs[j], Tensor::Scalar<int64_t>(i, g.device)})[0]);
      }
      ValueList out = RunSubgraph(body, args, values, node.outer_inputs[0], where + " body");
      for (int64_t j = 0; j < n_state; ++j) states[j] = out[j];
      for (size_t k = 0; k < n_scan; ++k) {
        steps_of[b][k].push_back(out[n_state + k]);
        step_shape[k] = TensorOf(out[n_state + k], where, "a scan output").shape();
      }
    }
    for (int64_t j = 0; j < n_state; ++j) state_rows[j].push_back(states[j]);
  }
  ValueList result;
  for (int64_t j = 0; j < n_state; ++j)
    result.push_back(Stack(state_rows[j], 0, body.outputs[j].dtype, g.device, where));
  for (size_t k = 0; k < n_scan; ++k) {
    const DType dtype = body.outputs[n_state + k].dtype;
    for (int64_t b = 0; b < batch; ++b) {
      ValueList& row = steps_of[b][k];
      SINGA_CHECK(static_cast<int64_t>(row.size()) == steps || step_shape[k], UnsupportedOp,
                  where << ": every sequence_lens is 0, so scan output " << k
                        << " has no step to take its shape from");
      while (static_cast<int64_t>(row.size()) < steps)
        row.push_back(Tensor::Zeros(*step_shape[k], dtype, g.device));
      scan_rows[k].push_back(Stack(row, 0, dtype, g.device, where));
    }
    result.push_back(Stack(scan_rows[k], 0, dtype, g.device, where));
  }
  result.resize(node.outputs.size());
  return result;
}

ValueList RunScan(const Graph& g, const Node& node, const ValueList& in, const ValueList& values) {
  if (node.scan.batched) return RunBatchedScan(g, node, in, values);
  const std::string where = g.Where(node);
  const Graph& body = *node.subgraphs[0];
  const ScanAttrs& a = node.scan;
  const int64_t m = a.num_scan_inputs;
  const int64_t n_state = static_cast<int64_t>(in.size()) - m;
  int64_t steps = -1;
  std::vector<int64_t> axes(m);
  for (int64_t j = 0; j < m; ++j) {
    const Tensor& x = TensorOf(in[n_state + j], where, "a scan input");
    SINGA_CHECK(x.defined(), ShapeError, where << ": scan input " << j << " is missing");
    int64_t axis = attr_at(a.input_axes, j);
    if (axis < 0) axis += x.ndim();
    SINGA_CHECK(
        axis >= 0 && axis < x.ndim(), ShapeError,
        where << ": scan axis " << attr_at(a.input_axes, j) << " for input " << x.ToString());
    axes[j] = axis;
    SINGA_CHECK(steps < 0 || x.dim(axis) == steps, ShapeError,
                where << ": scan inputs have different lengths (" << steps << " and " << x.dim(axis)
                      << ")");
    steps = x.dim(axis);
  }
  ValueList states(in.begin(), in.begin() + n_state);
  const size_t n_scan = body.outputs.size() - n_state;
  std::vector<ValueList> scans(n_scan);
  for (int64_t t = 0; t < steps; ++t) {
    ValueList args = states;
    for (int64_t j = 0; j < m; ++j) {
      const int64_t i = attr_at(a.input_directions, j) == 1 ? steps - 1 - t : t;
      Tensor index = Tensor::Scalar<int64_t>(i, g.device);
      args.push_back(CallOp("Gather", {in[n_state + j].tensor(), index}, {{"axis", axes[j]}})[0]);
    }
    ValueList out = RunSubgraph(body, args, values, node.outer_inputs[0], where + " body");
    for (int64_t j = 0; j < n_state; ++j) states[j] = out[j];
    for (size_t k = 0; k < n_scan; ++k) scans[k].push_back(out[n_state + k]);
  }
  ValueList result = states;
  for (size_t k = 0; k < n_scan; ++k) {
    if (attr_at(a.output_directions, k) == 1) std::reverse(scans[k].begin(), scans[k].end());
    result.push_back(Stack(scans[k], attr_at(a.output_axes, k), body.outputs[n_state + k].dtype,
                           g.device, where));
  }
  result.resize(node.outputs.size());
  return result;
}

// SequenceMap: the body runs once per element of the first input; other
// sequence inputs give it their element at the same position, tensors give
// themselves. Each body output becomes a sequence.
ValueList RunSequenceMap(const Graph& g, const Node& node, const ValueList& in,
                         const ValueList& values) {
  const std::string where = g.Where(node);
  const Graph& body = *node.subgraphs[0];
  SINGA_CHECK(in[0].is_sequence(), DTypeError,
              where << ": input_sequence must be a sequence, got " << in[0].ToString());
  const size_t n = in[0].sequence().size();
  for (size_t j = 1; j < in.size(); ++j)
    SINGA_CHECK(!in[j].is_sequence() || in[j].sequence().size() == n, ShapeError,
                where << ": input " << j << " has " << in[j].sequence().size()
                      << " elements, input_sequence " << n);
  std::vector<TensorList> outs(body.outputs.size());
  for (size_t i = 0; i < n; ++i) {
    ValueList args;
    for (const Value& v : in) args.push_back(v.is_sequence() ? Value(v.sequence()[i]) : v);
    ValueList out = RunSubgraph(body, args, values, node.outer_inputs[0], where + " body");
    for (size_t k = 0; k < outs.size(); ++k)
      outs[k].push_back(TensorOf(out[k], where, "a body output"));
  }
  ValueList result;
  for (size_t k = 0; k < outs.size(); ++k)
    result.push_back(Value::Sequence(std::move(outs[k]), body.outputs[k].dtype));
  result.resize(node.outputs.size());
  return result;
}

// A registry op takes tensors. Identity (whose later versions take any
// type) passes a sequence or an empty optional through.
ValueList RunRegistryOp(const Graph& g, const Node& node, const ValueList& in, ValueReads* reads) {
  if (node.op_type == "Identity" && in.size() == 1 && (in[0].is_sequence() || in[0].is_none()))
    return in;
  TensorList tensors;
  for (size_t k = 0; k < in.size(); ++k)
    tensors.push_back(TensorOf(in[k], g.Where(node), "input " + std::to_string(k)));
  TensorList out = node.schema->Run(tensors, node.attrs, static_cast<int>(node.outputs.size()),
                                    node.name, reads);
  return ValueList(out.begin(), out.end());
}

}  // namespace

ValueList ConstantValues(const Graph& g) {
  return ValueList(g.constants.begin(), g.constants.end());
}

ValueList RunNode(const Graph& g, const Node& node, const ValueList& in, const ValueList& values,
                  ValueReads* reads) {
  switch (node.control) {
    case ControlFlow::kIf:
      return RunIf(g, node, in, values);
    case ControlFlow::kLoop:
      return RunLoop(g, node, in, values);
    case ControlFlow::kScan:
      return RunScan(g, node, in, values);
    case ControlFlow::kFlexAttention:
      return RunFlexAttention(g, node, in, values);
    case ControlFlow::kGradient:
      return RunGradient(g, node, in, values);
    case ControlFlow::kSequenceMap:
      return RunSequenceMap(g, node, in, values);
    case ControlFlow::kNone:
      break;
  }
  if (node.value_op) return node.value_op->run(g, node, in);
  return RunRegistryOp(g, node, in, reads);
}

void Execute(const Graph& g, ValueList& values, int end, const std::vector<char>& keep) {
  ValueList in;
  for (int i = 0; i < end; ++i) {
    const Node& node = g.nodes[i];
    in.clear();
    for (int s : node.inputs) in.push_back(s >= 0 ? values[s] : Value());
    ValueList out = RunNode(g, node, in, values);
    for (size_t k = 0; k < node.outputs.size() && k < out.size(); ++k)
      if (node.outputs[k] >= 0) values[node.outputs[k]] = std::move(out[k]);
    for (int s : g.release_after[i])
      if (keep.empty() || !keep[s]) values[s] = Value();
  }
}

struct SingaRep::Plans {
  std::mutex mu;
  bool enabled = true;
  std::map<std::string, std::unique_ptr<Plan>> by_key;
  std::vector<std::string> latest_op_types;
};

SingaRep::SingaRep(std::shared_ptr<Graph> graph)
    : graph_(std::move(graph)), plans_(std::make_unique<Plans>()) {}
SingaRep::~SingaRep() = default;

void SingaRep::set_use_plan(bool on) {
  std::lock_guard<std::mutex> lock(plans_->mu);
  plans_->enabled = on;
  plans_->by_key.clear();
}
bool SingaRep::use_plan() const { return plans_->enabled; }
size_t SingaRep::num_plans() const {
  std::lock_guard<std::mutex> lock(plans_->mu);
  return plans_->by_key.size();
}
std::vector<std::string> SingaRep::planned_op_types() const {
  std::lock_guard<std::mutex> lock(plans_->mu);
  return plans_->latest_op_types;
}

const std::map<std::string, Tensor>& SingaRep::params() const { return graph_->params; }
const std::vector<ValueInfo>& SingaRep::inputs() const { return graph_->inputs; }
const std::vector<ValueInfo>& SingaRep::outputs() const { return graph_->outputs; }
int SingaRep::num_nodes() const { return static_cast<int>(graph_->nodes.size()); }
std::vector<std::string> SingaRep::node_op_types() const {
  std::vector<std::string> v;
  for (const Node& n : graph_->nodes) v.push_back(n.op_type);
  return v;
}
int SingaRep::opset(std::string_view domain) const {
  auto it = graph_->opsets.find(domain == "ai.onnx" ? std::string() : std::string(domain));
  return it == graph_->opsets.end() ? 0 : it->second;
}
int64_t SingaRep::ir_version() const { return graph_->ir_version; }
Device SingaRep::device() const { return graph_->device; }

TensorList SingaRep::Run(const TensorList& inputs, int last_layers,
                         const std::vector<std::string>& aux_output) const {
  const ValueList out = RunValues(ValueList(inputs.begin(), inputs.end()), last_layers, aux_output);
  TensorList result;
  for (size_t i = 0; i < out.size(); ++i) {
    SINGA_CHECK(!out[i].is_sequence(), DTypeError,
                "SingaRep::Run: result " << i << " is a sequence (" << out[i].ToString()
                                         << "): RunValues returns sequences");
    result.push_back(out[i].tensor());
  }
  return result;
}

ValueList SingaRep::RunValues(const ValueList& inputs, int last_layers,
                              const std::vector<std::string>& aux_output) const {
  const Graph& g = *graph_;
  const int num_nodes = static_cast<int>(g.nodes.size());
  SINGA_CHECK(last_layers < 0 && -last_layers <= std::max(num_nodes, 1), ShapeError,
              "SingaRep::Run: last_layers must be in [-" << std::max(num_nodes, 1)
                                                         << ", -1] for this model of " << num_nodes
                                                         << " nodes, got " << last_layers);
  // Nodes [0, end) run; with a cut, node end-1's outputs are the result.
  const int end = num_nodes + last_layers + 1;
  const bool cut = last_layers != -1;

  ValueList values = ConstantValues(g);
  const size_t n_plain = g.inputs.size(), n_all = n_plain + g.shadowed_inputs.size();
  std::unordered_map<std::string, int64_t> symbols;
  if (inputs.size() == n_plain) {
    for (size_t i = 0; i < n_plain; ++i) {
      CheckInput(g.inputs[i], inputs[i], symbols);
      values[g.input_slots[i]] = inputs[i];
    }
  } else {
    SINGA_CHECK(inputs.size() == n_all && n_all > n_plain, ShapeError,
                "SingaRep::Run: the model takes "
                    << n_plain << " input" << (n_plain == 1 ? "" : "s") << " ("
                    << DescribeAll(g.inputs) << "), got " << inputs.size());
    // Values for every graph input, in the order inputs() then the inputs
    // with initializers: the given values replace the initializers.
    for (size_t i = 0; i < n_all; ++i) {
      const bool plain = i < n_plain;
      const ValueInfo& info = plain ? g.inputs[i] : g.shadowed_inputs[i - n_plain];
      CheckInput(info, inputs[i], symbols);
      values[plain ? g.input_slots[i] : g.shadowed_slots[i - n_plain]] = inputs[i];
    }
  }

  std::vector<char> keep(values.size(), 0);
  std::vector<int> result_slots;
  if (cut) {
    for (int s : g.nodes[end - 1].outputs)
      if (s >= 0) result_slots.push_back(s);
  } else {
    result_slots = g.output_slots;
  }
  for (const std::string& name : aux_output) {
    auto it = g.slot_of.find(name);
    SINGA_CHECK(it != g.slot_of.end(), ShapeError,
                "SingaRep::Run: aux_output '" << name << "' is not a value of the model");
    const int producer = g.producer[it->second];
    SINGA_CHECK(producer < end, ShapeError,
                "SingaRep::Run: aux_output '"
                    << name << "' is computed by " << g.Where(g.nodes[producer])
                    << ", which last_layers=" << last_layers << " does not run");
    result_slots.push_back(it->second);
  }

  if (plans_->enabled && !GradEnabled() && !TrainingMode() && !g.device.graph_enabled() &&
      inputs.size() == n_plain) {
    std::string key = std::to_string(last_layers);
    for (const Value& x : inputs) key += ";" + x.ToString();
    for (const std::string& name : aux_output) key += ";" + name;
    std::lock_guard<std::mutex> lock(plans_->mu);
    std::unique_ptr<Plan>& plan = plans_->by_key[key];
    if (plan && plan->fresh()) return plan->Run(inputs);
    ValueList first;
    plan = std::make_unique<Plan>(g, std::move(values), end, result_slots, first);
    plans_->latest_op_types = plan->op_types();
    return first;
  }

  for (int s : result_slots) keep[s] = 1;
  Execute(g, values, end, keep);
  ValueList result;
  for (int s : result_slots) result.push_back(values[s]);
  return result;
}

}  // namespace singa::sonnx
