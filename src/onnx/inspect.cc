// InspectModel: the ModelProto read for a report, node by node, with the
// checks the reader makes at Prepare (schema at the model's opset, arity,
// attributes) collected instead of thrown. CountFlops: one run of a prepared
// model with the inputs and outputs of its matrix products kept.
#include "singa/onnx/inspect.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>

#include "onnx/graph.h"
#include "onnx/proto.h"

namespace singa::sonnx {
namespace {

// The report's counts (initializers, parameters, declared inputs and
// outputs, nodes per op, subgraphs' nodes included); whether each node is
// accepted is the reader's business (CheckModel).
class Counter {
 public:
  explicit Counter(ModelInfo& info) : info_(info) {}

  void ReadGraph(const onnx::GraphProto& gp, bool top) {
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
    for (const auto& np : gp.node()) {
      const std::string domain = CanonicalDomain(np.domain());
      ++info_.num_nodes;
      ++info_.op_histogram[domain.empty() ? np.op_type() : domain + ":" + np.op_type()];
      for (const auto& a : np.attribute()) {
        if (a.has_g()) ReadGraph(a.g(), false);
        for (const auto& sub : a.graphs()) ReadGraph(sub, false);
      }
    }
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

  ModelInfo& info_;
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
  for (const auto& o : m.opset_import()) info.opsets[CanonicalDomain(o.domain())] = o.version();
  Counter(info).ReadGraph(m.graph(), true);
  // What Prepare would refuse: the reader, run in collect mode.
  try {
    CheckModel(m, base_dir, info.unsupported);
  } catch (const Error& e) {
    info.model_issues.push_back(e.what());
  }
  return info;
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
  // The values to keep: inputs 0 and 1 and output 0 of every op that counts its FLOPs.
  std::vector<const sonnx::Node*> counted;
  std::vector<std::string> names;
  for (const sonnx::Node& n : g.nodes) {
    if (!n.schema->flops || n.inputs.size() < 2 || n.inputs[0] < 0 || n.inputs[1] < 0 ||
        n.outputs.empty() || n.outputs[0] < 0)
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
    const int64_t flops = counted[i]->schema->flops({a.shape(), b.shape()}, y.shape());
    f.total += flops;
    f.by_op[counted[i]->op_type] += flops;
    ++f.nodes_counted;
  }
  return f;
}

std::map<std::string, int64_t> CpuOnlyOnGpu(const SingaRep& rep, const TensorList& inputs) {
  const auto ops = OpRegistry::All();
  SINGA_CHECK(std::any_of(ops.begin(), ops.end(), [](const OpSchema* s) { return s->cuda_kernel; }),
              UnsupportedOp, "this build has no CUDA device (make setup CUDA=1)");
  const Graph& g = rep.graph();
  // Every node input's value, each asked for once.
  std::vector<std::string> names;
  std::map<int, size_t> index;
  for (const Node& n : g.nodes)
    for (int s : n.inputs)
      if (s >= 0 && index.emplace(s, names.size()).second) names.push_back(g.slot_names[s]);
  const TensorList values = rep.Run(inputs, -1, names);
  const size_t base = values.size() - names.size();
  std::map<std::string, int64_t> cpu;
  for (const Node& n : g.nodes) {
    TensorList in;
    for (int s : n.inputs) in.push_back(s >= 0 ? values[base + index[s]] : Tensor());
    // Views (Reshape, Transpose, ...) and ops without a kernel of their own
    // (control flow: their subgraphs' nodes run) stay where their inputs are.
    const OpSchema& op = *n.schema;
    if (op.alias || !op.kernel) continue;
    const InferCtx c(op, in, static_cast<int>(n.outputs.size()), n.name);
    if (op.CudaTakes(c, n.attrs.get())) continue;
    const std::string domain = CanonicalDomain(n.domain);
    ++cpu[(domain.empty() ? "" : domain + ":") + n.op_type];
  }
  return cpu;
}

}  // namespace singa::sonnx
