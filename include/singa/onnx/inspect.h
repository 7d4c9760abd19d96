// Looking at an ONNX model without preparing it: what `singa info` prints.
// Prepare stops at the first node it cannot import; InspectModel reads the
// whole file and reports every such node (with its name and why), so a user
// sees at once what a model needs. CountFlops runs a prepared model once and
// adds up the multiply-adds of its matrix products; CpuOnlyOnGpu says which
// of its ops would leave a GPU.
//
//   sonnx::ModelInfo info = sonnx::InspectModel("resnet18.onnx");
//   for (auto& n : info.unsupported) std::cout << n.node << ": " << n.reason << "\n";
//   if (info.unsupported.empty()) {
//     auto rep = sonnx::Prepare("resnet18.onnx");
//     sonnx::FlopCount f = sonnx::CountFlops(*rep, {x});   // f.total: 2 x multiply-adds
//   }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "singa/onnx/sonnx.h"

namespace singa::sonnx {

// A node that Prepare would refuse, and why (the importer's message).
struct NodeIssue {
  // The node's name, or "<op_type>#<index>" when it has none; a subgraph's
  // nodes are prefixed with their node and attribute: "if1/else_branch/neg".
  std::string node;
  std::string op_type, domain;
  std::string reason;
  bool unknown_op = false;  // no schema for the op at the model's opset (else: attributes, arity)
};

struct ModelInfo {
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer_name, producer_version, graph_name;
  std::vector<ValueInfo> inputs;  // graph inputs without an initializer
  std::vector<ValueInfo> outputs;
  int64_t num_initializers = 0;
  int64_t num_params = 0;         // elements of the floating-point initializers (the weights)
  int64_t initializer_bytes = 0;  // all initializers, at their element size
  int64_t num_nodes = 0;          // every node, those of subgraphs included
  // Node count per op: "Conv", or "domain:Op" outside ai.onnx.
  std::map<std::string, int64_t> op_histogram;
  std::vector<NodeIssue> unsupported;
  // Problems outside nodes (graph inputs of sequence type, a bad IR version).
  std::vector<std::string> model_issues;
};

// Reads `path`; throws IOError / InvalidModel when the file cannot be read
// or is not an ONNX model. Unsupported nodes are reported, not thrown.
ModelInfo InspectModel(const std::string& path);
ModelInfo InspectModelBytes(std::string_view bytes, const std::string& base_dir = "");

// FLOPs of one run: 2 per multiply-add of the ops that count theirs
// (OpSchema::flops: Conv, ConvTranspose, Gemm, MatMul), nodes of the top
// graph only (subgraphs are not counted, nor elementwise, pooling or
// normalization ops).
struct FlopCount {
  int64_t total = 0;
  std::map<std::string, int64_t> by_op;
  int64_t nodes_counted = 0;
};
FlopCount CountFlops(const SingaRep& rep, const TensorList& inputs);

// The nodes of the top graph whose ops would run their CPU kernel (inputs
// and outputs copied) were the model on a GPU, counted per op ("Conv", or
// "domain:Op" outside ai.onnx): one run with `inputs` gives each node's input
// shapes and dtypes, which the GPU kernels' conditions read. No GPU needed;
// UnsupportedOp in a build without the CUDA device.
std::map<std::string, int64_t> CpuOnlyOnGpu(const SingaRep& rep, const TensorList& inputs);

}  // namespace singa::sonnx
