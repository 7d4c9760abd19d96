// SingaRep::Run: checks the inputs against the model's declared types, then
// runs the prepared nodes in order through OpSchema::Run (which records for
// autograd when grad mode is on and a parameter requires grad), dropping each
// intermediate value after its last reader.
#include <unordered_map>

#include "onnx/graph.h"

namespace singa::sonnx {
namespace {

std::string Describe(const ValueInfo& v) {
  std::string s =
      v.name + ": " + (v.dtype == DType::kUndefined ? "any" : std::string(Name(v.dtype)));
  if (!v.has_shape) return s;
  s += "[";
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (i) s += ",";
    s += v.dims[i] >= 0 ? std::to_string(v.dims[i])
                        : (v.dim_params[i].empty() ? std::string("?") : v.dim_params[i]);
  }
  return s + "]";
}

std::string DescribeAll(const std::vector<ValueInfo>& vs) {
  std::string s;
  for (const ValueInfo& v : vs) s += (s.empty() ? "" : ", ") + Describe(v);
  return s;
}

// Symbolic dims must take one value across all inputs of a run.
void CheckInput(const ValueInfo& info, const Tensor& t,
                std::unordered_map<std::string, int64_t>& symbols) {
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
    } else if (!info.dim_params[i].empty()) {
      auto [it, fresh] = symbols.emplace(info.dim_params[i], got);
      SINGA_CHECK(fresh || it->second == got, ShapeError,
                  "SingaRep::Run: dim '" << info.dim_params[i] << "' of input '" << info.name
                                         << "' is " << got << ", but " << it->second
                                         << " in an earlier input");
    }
  }
}

}  // namespace

SingaRep::SingaRep(std::shared_ptr<Graph> graph) : graph_(std::move(graph)) {}
SingaRep::~SingaRep() = default;

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
  const Graph& g = *graph_;
  const int num_nodes = static_cast<int>(g.nodes.size());
  SINGA_CHECK(last_layers < 0 && -last_layers <= std::max(num_nodes, 1), ShapeError,
              "SingaRep::Run: last_layers must be in [-" << std::max(num_nodes, 1)
                                                         << ", -1] for this model of " << num_nodes
                                                         << " nodes, got " << last_layers);
  // Nodes [0, end) run; with a cut, node end-1's outputs are the result.
  const int end = num_nodes + last_layers + 1;
  const bool cut = last_layers != -1;

  std::vector<Tensor> values = g.constants;
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
  std::vector<int> aux_slots;
  for (const std::string& name : aux_output) {
    auto it = g.slot_of.find(name);
    SINGA_CHECK(it != g.slot_of.end(), ShapeError,
                "SingaRep::Run: aux_output '" << name << "' is not a value of the model");
    const int producer = g.producer[it->second];
    SINGA_CHECK(producer < end, ShapeError,
                "SingaRep::Run: aux_output '"
                    << name << "' is computed by " << g.Where(g.nodes[producer])
                    << ", which last_layers=" << last_layers << " does not run");
    keep[it->second] = 1;
    aux_slots.push_back(it->second);
  }
  if (cut)
    for (int s : g.nodes[end - 1].outputs)
      if (s >= 0) keep[s] = 1;

  std::vector<Tensor> in;
  for (int i = 0; i < end; ++i) {
    const Node& node = g.nodes[i];
    in.clear();
    for (int s : node.inputs) in.push_back(s >= 0 ? values[s] : Tensor());
    TensorList out =
        node.schema->Run(in, node.attrs, static_cast<int>(node.outputs.size()), node.name);
    for (size_t k = 0; k < node.outputs.size() && k < out.size(); ++k)
      if (node.outputs[k] >= 0) values[node.outputs[k]] = std::move(out[k]);
    for (int s : g.release_after[i])
      if (!keep[s]) values[s] = Tensor();
  }

  TensorList result;
  if (cut) {
    for (int s : g.nodes[end - 1].outputs)
      if (s >= 0) result.push_back(values[s]);
  } else {
    for (int s : g.output_slots) result.push_back(values[s]);
  }
  for (int s : aux_slots) result.push_back(values[s]);
  return result;
}

}  // namespace singa::sonnx
