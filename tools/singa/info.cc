// singa info MODEL.onnx: what the model is and whether singa can run it.
#include <algorithm>
#include <iostream>

#include "cli.h"
#include "singa/onnx/inspect.h"
#include "singa/ops/op.h"

namespace singa::cli {

namespace {

// --device cuda: the ops whose nodes would run on the CPU, with copies, were
// the model on a GPU.
std::string GpuNote(const Args& args, const sonnx::ModelInfo& info, const DimValues& dims) {
  if (!info.unsupported.empty() || !info.model_issues.empty())
    return "n/a (the model does not import)";
  try {
    auto rep = sonnx::Prepare(args.model);
    const auto cpu = sonnx::CpuOnlyOnGpu(*rep, ModelInputs(*rep, args, dims, true));
    if (cpu.empty()) return "every node of the top graph runs on the GPU";
    int64_t nodes = 0;
    std::string ops;
    for (const auto& [op, n] : cpu) {
      nodes += n;
      ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(n);
    }
    return std::to_string(nodes) + " node" + (nodes == 1 ? "" : "s") +
           " would run on the CPU, inputs and outputs copied: " + ops;
  } catch (const UsageError& e) {
    return std::string("n/a (") + e.what() + ")";
  } catch (const Error& e) {
    return "n/a (" + OneLine(e.what()) + ")";
  }
}

}  // namespace

int RunInfo(const Args& args) {
  const std::string device = args.get("--device", "cpu");
  if (device != "cpu" && device != "cuda")
    throw UsageError("--device must be cpu or cuda, not '" + device + "'");
  const sonnx::ModelInfo info = sonnx::InspectModel(args.model);
  const DimValues dims = ParseDims(args, info.inputs);
  std::ostream& os = std::cout;
  os << "model        " << args.model << "\n";
  os << "producer     "
     << (info.producer_name.empty()
             ? "(not recorded)"
             : info.producer_name +
                   (info.producer_version.empty() ? "" : " " + info.producer_version))
     << "\n";
  os << "IR version   " << info.ir_version << "\n";
  os << "opsets       ";
  bool first = true;
  for (const auto& [domain, version] : info.opsets) {
    os << (first ? "" : ", ") << DomainName(domain) << " " << version;
    first = false;
  }
  os << "\n";
  for (size_t i = 0; i < info.inputs.size(); ++i)
    os << (i ? "             " : "inputs       ") << Describe(info.inputs[i]) << "\n";
  if (info.inputs.empty()) os << "inputs       (none)\n";
  for (size_t i = 0; i < info.outputs.size(); ++i)
    os << (i ? "             " : "outputs      ") << Describe(info.outputs[i]) << "\n";
  os << "parameters   " << Grouped(info.num_params) << " (floating-point initializers; "
     << info.num_initializers << " initializers, "
     << Bytes(static_cast<double>(info.initializer_bytes)) << ")\n";
  os << "nodes        " << info.num_nodes << "\n";

  // The histogram, most frequent first.
  std::vector<std::pair<std::string, int64_t>> ops(info.op_histogram.begin(),
                                                   info.op_histogram.end());
  std::stable_sort(ops.begin(), ops.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string line;
  os << "ops         ";
  for (size_t i = 0; i < ops.size(); ++i) {
    const std::string item =
        " " + ops[i].first + " " + std::to_string(ops[i].second) + (i + 1 < ops.size() ? "," : "");
    if (line.size() + item.size() > 86) {
      os << line << "\n            ";
      line.clear();
    }
    line += item;
  }
  os << line << "\n";

  // FLOPs need the shapes of the matrix products: one run with generated inputs.
  std::string flops_note;
  if (!info.unsupported.empty() || !info.model_issues.empty()) {
    flops_note = "n/a (the model does not import)";
  } else {
    try {
      auto rep = sonnx::Prepare(args.model);
      const TensorList inputs = ModelInputs(*rep, args, dims, true);
      const sonnx::FlopCount f = sonnx::CountFlops(*rep, inputs);
      std::string by;
      for (const auto& [op, n] : f.by_op) by += (by.empty() ? "" : ", ") + op + " " + Scaled(n);
      flops_note = Scaled(static_cast<double>(f.total)) + " (" +
                   (by.empty() ? std::string("no Conv, ConvTranspose, Gemm or MatMul node") : by) +
                   "; " + std::to_string(f.nodes_counted) + " nodes)";
    } catch (const UsageError& e) {
      flops_note = std::string("n/a (") + e.what() + ")";
    } catch (const Error& e) {
      flops_note = "n/a (running the model failed: " + OneLine(e.what()) + ")";
    }
  }
  os << "FLOPs        " << flops_note << "\n";
  os << "             2 per multiply-add of Conv, ConvTranspose, Gemm and MatMul, one run with\n"
        "             symbolic dims 1 (or --dim); other ops and subgraphs not counted\n";

  if (device == "cuda") os << "on a GPU     " << GpuNote(args, info, dims) << "\n";

  if (info.unsupported.empty() && info.model_issues.empty()) {
    os << "supported    yes: every node imports\n";
    return 0;
  }
  os << "supported    no\n";
  for (const std::string& issue : info.model_issues) os << "  " << OneLine(issue) << "\n";
  // Unknown ops grouped by op, with their nodes; then nodes refused for other reasons.
  std::map<std::string, std::vector<const sonnx::NodeIssue*>> unknown;
  for (const auto& n : info.unsupported)
    if (n.unknown_op) {
      const std::string domain = CanonicalDomain(n.domain);
      unknown[(domain.empty() ? "" : domain + ":") + n.op_type].push_back(&n);
    }
  for (const auto& [op, nodes] : unknown) {
    os << "  unsupported op " << op << " (" << nodes.size() << " node"
       << (nodes.size() == 1 ? "" : "s") << ": ";
    for (size_t i = 0; i < nodes.size() && i < 8; ++i) os << (i ? ", " : "") << nodes[i]->node;
    if (nodes.size() > 8) os << ", ...";
    os << "): " << OneLine(nodes[0]->reason) << "\n";
  }
  for (const auto& n : info.unsupported)
    if (!n.unknown_op)
      os << "  node '" << n.node << "' (" << n.op_type << "): " << OneLine(n.reason) << "\n";
  return 0;
}

}  // namespace singa::cli
