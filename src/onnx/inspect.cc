// InspectModel: the ModelProto read for a report, node by node, with the
// checks the reader makes at Prepare (schema at the model's opset, arity,
// attributes) collected instead of thrown. CountFlops: one run of a prepared
// model with the inputs and outputs of its matrix products kept.
#include "singa/onnx/inspect.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "onnx/graph.h"
#include "onnx/proto.h"

namespace singa::sonnx {
namespace {

std::string DomainKey(const std::string& d) { return d == "ai.onnx" ? std::string() : d; }
class Inspector {
 public:
  Inspector(ModelInfo& info, std::string base_dir) : info_(info), base_dir_(std::move(base_dir)) {}

  // `prefix` names the node and attribute a subgraph belongs to ("loop1/body/").
  void ReadGraph(const onnx::GraphProto& gp, bool top, const std::string& prefix = "") {
    for (const auto& init : gp.initializer()) {
      int64_t n = 1;
      for (int64_t d : init.dims()) n *= d;
      const int code = init.data_type();
      const DType dt = code > 0 && code < kNumDTypes ? static_cast<DType>(code) : DType::kUndefined;
      ++info_.num_initializers;
      if (IsFloat(dt)) info_.num_params += n;
      if (dt != DType::kUndefined && dt != DType::kString)
        info_.initializer_bytes += n * static_cast<int64_t>(SizeOf(dt));
    }
    if (top) {
      std::set<std::string> inits;
      for (const auto& init : gp.initializer()) inits.insert(init.name());
      for (const auto& in : gp.input())
        if (!inits.count(in.name())) Declared(in, "graph input", info_.inputs);
      for (const auto& out : gp.output()) Declared(out, "graph output", info_.outputs);
    }
    for (int i = 0; i < gp.node_size(); ++i) ReadNode(gp.node(i), i, prefix);
  }

 private:
  void Declared(const onnx::ValueInfoProto& v, const char* what, std::vector<ValueInfo>& out) {
    try {
      out.push_back(ValueInfoFromProto(v, what));
    } catch (const Error& e) {
      info_.model_issues.push_back(e.what());
      ValueInfo unknown;
      unknown.name = v.name();
      out.push_back(unknown);
    }
  }

  void Issue(const onnx::NodeProto& np, const std::string& name, std::string reason,
             bool unknown_op) {
    info_.unsupported.push_back(
        {name, np.op_type(), DomainName(DomainKey(np.domain())), std::move(reason), unknown_op});
  }

  void ReadNode(const onnx::NodeProto& np, int index, const std::string& prefix) {
    const std::string domain = DomainKey(np.domain());
    const std::string name =
        prefix + (np.name().empty() ? np.op_type() + "#" + std::to_string(index) : np.name());
    ++info_.num_nodes;
    ++info_.op_histogram[domain.empty() ? np.op_type() : domain + ":" + np.op_type()];

    const bool control =
        (domain.empty() && (np.op_type() == "If" || np.op_type() == "Loop" ||
                            np.op_type() == "Scan" || np.op_type() == "SequenceMap")) ||
        (domain == "ai.onnx.preview.training" && np.op_type() == "Gradient");
    if (control) {
      // The importer runs these itself; their subgraphs' nodes are checked here.
      for (const auto& a : np.attribute()) {
        if (a.has_g()) ReadGraph(a.g(), false, name + "/" + a.name() + "/");
        for (const auto& sub : a.graphs()) ReadGraph(sub, false, name + "/" + a.name() + "/");
      }
      return;
    }
    if (domain.empty() && np.op_type() == "Constant") {
      static const std::set<std::string> kinds = {"value",        "value_float", "value_int",
                                                  "value_floats", "value_ints",  "value_string",
                                                  "value_strings"};
      for (const auto& a : np.attribute())
        if (!kinds.count(a.name()))
          Issue(np, name, "Constant attribute '" + a.name() + "' is not supported", false);
      return;
    }

    auto opset = info_.opsets.find(domain);
    if (const ValueOp* op = domain.empty() ? FindValueOp(np.op_type()) : nullptr) {
      if (DefaultOpset() < op->since_version)
        Issue(np, name,
              "implemented from opset " + std::to_string(op->since_version) +
                  "; the model imports ai.onnx " + std::to_string(DefaultOpset()),
              true);
      return;
    }
    if (opset == info_.opsets.end()) {
      Issue(np, name, "domain '" + DomainName(domain) + "' is not in the model's opset_import",
            !OpRegistry::Find(np.op_type(), kLatestOpset, domain));
      return;
    }
    const OpSchema* s = OpRegistry::Find(np.op_type(), static_cast<int>(opset->second), domain);
    if (!s) {
      const OpSchema* later = OpRegistry::Find(np.op_type(), kLatestOpset, domain);
      Issue(np, name,
            later ? "implemented from opset " + std::to_string(later->since_version) +
                        "; the model imports " + DomainName(domain) + " " +
                        std::to_string(opset->second)
                  : "op " + np.op_type() + " of domain '" + DomainName(domain) +
                        "' is not implemented",
            true);
      return;
    }
    int num_inputs = np.input_size(), num_outputs = np.output_size();
    while (num_inputs > 0 && np.input(num_inputs - 1).empty()) --num_inputs;
    while (num_outputs > 0 && np.output(num_outputs - 1).empty()) --num_outputs;
    if (num_inputs > s->max_inputs() || num_outputs > s->max_outputs() ||
        num_outputs < s->min_outputs()) {
      Issue(np, name,
            std::to_string(num_inputs) + " inputs and " + std::to_string(num_outputs) +
                " outputs do not fit the op's signature",
            false);
      return;
    }
    try {
      AttrMap attrs;
      const std::string where = "node '" + name + "' (" + np.op_type() + ")";
      const bool flex = domain == "ai.onnx.preview" && np.op_type() == "FlexAttention";
      for (const auto& a : np.attribute()) {
        if (flex && a.has_g() && (a.name() == "score_mod" || a.name() == "prob_mod")) {
          ReadGraph(a.g(), false, name + "/" + a.name() + "/");  // the importer runs them
          continue;
        }
        attrs[a.name()] = AttrFromProto(a, base_dir_, Device::Cpu(), where);
      }
      s->ParseAttrs(attrs, {}, name);
    } catch (const Error& e) {
      Issue(np, name, e.what(), false);
    }
  }

  int64_t DefaultOpset() const {
    auto it = info_.opsets.find("");
    return it == info_.opsets.end() ? 0 : it->second;
  }

  ModelInfo& info_;
  std::string base_dir_;
};

ModelInfo Inspect(std::string_view bytes, const std::string& base_dir, const std::string& source) {
  onnx::ModelProto m;
  SINGA_CHECK(bytes.size() <= static_cast<size_t>(INT32_MAX), IOError,
              source << ": " << bytes.size() << " bytes; protobuf reads at most 2 GiB");
  SINGA_CHECK(m.ParseFromArray(bytes.data(), static_cast<int>(bytes.size())), InvalidModel,
              source << " is not a valid ONNX model (the protobuf does not parse: truncated or "
                        "corrupt)");
  SINGA_CHECK(m.has_graph(), InvalidModel, source << " has no graph");
  ModelInfo info;
  info.ir_version = m.ir_version();
  info.producer_name = m.producer_name();
  info.producer_version = m.producer_version();
  info.graph_name = m.graph().name();
  for (const auto& o : m.opset_import()) info.opsets[DomainKey(o.domain())] = o.version();
  // Same bound as the reader's (IR 3 introduced opset_import).
  if (info.ir_version < 3)
    info.model_issues.push_back("IR version " + std::to_string(info.ir_version) +
                                "; at least 3 (ONNX 1.0) is required");
  Inspector(info, base_dir).ReadGraph(m.graph(), true);
  return info;
}

// Element count of a dims list; the product of an empty list is 1 (a scalar).
int64_t Prod(const Shape& s, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t n = 1;
  for (size_t i = from; i < s.size() && i < to; ++i) n *= s[i];
  return n;
}

// 2 x multiply-adds of one node, from its input and output shapes.
int64_t NodeFlops(const std::string& op, const std::vector<Shape>& in, const Shape& out) {
  if (op == "Conv") {
    // Each output element: C/group x kernel multiply-adds (W is [M, C/group, k...]).
    return 2 * Prod(out) * Prod(in[1], 1);
  }
  if (op == "ConvTranspose") {
    // Each input element is scattered to M/group x kernel outputs (W is [C, M/group, k...]).
    return 2 * Prod(in[0]) * Prod(in[1], 1);
  }
  if (op == "MatMul") {
    const int64_t k = in[0].empty() ? 1 : in[0].back();
    return 2 * Prod(out) * k;
  }
  if (op == "Gemm") {
    // A is [M, K] or (transA) [K, M]; Y is [M, N].
    const int64_t m = out.empty() ? 1 : out[0];
    const int64_t k = m == 0 ? 0 : Prod(in[0]) / m;
    return 2 * Prod(out) * k;
  }
  return 0;
}

}  // namespace

ModelInfo InspectModel(const std::string& path) {
  std::error_code ec;
  SINGA_CHECK(!std::filesystem::is_directory(path, ec), IOError,
              "cannot read ONNX model '" << path << "': it is a directory");
  std::ifstream in(path, std::ios::binary);
  SINGA_CHECK(in, IOError, "cannot open ONNX model '" << path << "': " << std::strerror(errno));
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  SINGA_CHECK(!in.bad(), IOError, "reading ONNX model '" << path << "' failed");
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  return Inspect(bytes, dir.empty() ? "." : dir.string(), "ONNX model '" + path + "'");
}

ModelInfo InspectModelBytes(std::string_view bytes, const std::string& base_dir) {
  return Inspect(bytes, base_dir, "the ONNX model bytes");
}

FlopCount CountFlops(const SingaRep& rep, const TensorList& inputs) {
  const sonnx::Graph& g = rep.graph();
  // The values to keep: inputs 0 and 1 and output 0 of every counted node.
  std::vector<const sonnx::Node*> counted;
  std::vector<std::string> names;
  for (const sonnx::Node& n : g.nodes) {
    if (!n.domain.empty() || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0 ||
        n.outputs.empty() || n.outputs[0] < 0)
      continue;
    if (n.op_type != "Conv" && n.op_type != "ConvTranspose" && n.op_type != "MatMul" &&
        n.op_type != "Gemm")
      continue;
    counted.push_back(&n);
    for (int s : {n.inputs[0], n.inputs[1], n.outputs[0]}) names.push_back(g.slot_names[s]);
  }
  FlopCount f;
  if (counted.empty()) return f;
  const TensorList values = rep.Run(inputs, -1, names);
  const size_t base = values.size() - names.size();
  for (size_t i = 0; i < counted.size(); ++i) {
    const Tensor& a = values[base + 3 * i];
    const Tensor& b = values[base + 3 * i + 1];
    const Tensor& y = values[base + 3 * i + 2];
    const int64_t flops = NodeFlops(counted[i]->op_type, {a.shape(), b.shape()}, y.shape());
    f.total += flops;
    f.by_op[counted[i]->op_type] += flops;
    ++f.nodes_counted;
  }
  return f;
}

}  // namespace singa::sonnx
