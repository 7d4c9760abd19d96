// ONNX export ("the sonnx frontend"): the computation that produced some
// tensors, traced back through the op records, written as an ONNX model that
// other runtimes run.
//
//   Tensor y = model.Forward({x})[0];               // in any mode
//   std::string bytes = singa::sonnx::ToOnnx({x}, {y}, {.model_name = "cnn"});
//   singa::sonnx::SaveOnnx("cnn.onnx", {x}, {y});   // written atomically
//
// Where the graph comes from: every op application records a node with its
// schema, parsed attributes and inputs (singa/ops/tape.h), in inference as
// in training; an imported model's planned run records one node for the
// run, which the export expands by running its graph again. The trace walks
// these from the outputs and stops at the given inputs. Leaves
// it reaches are parameters (stores_grad: initializers named by
// Tensor::name(), the dotted path) or constants (initializers too).
// Every recorded op becomes a node of its own ONNX name, attributes taken
// from its parsed form (those that differ from the default); an op whose
// form differs registers a hook, OpBuilder::to_onnx, that writes the node(s)
// through singa::ExportCtx (singa/ops/export_ctx.h; writer.cc implements it).
// Ops of the internal domain ai.singa have no ONNX form.
//
// Opsets: by default the newest opset (not above kLatestOpset, unless a
// recorded op exists only in a newer one) at which every recorded op keeps
// its recorded form; an explicit older target (>= 11) works
// where each op's registered version is also the one in effect there.
//
// Errors (singa exceptions naming the tensor or op): an output with no
// recorded history (computed with recording off), an input the outputs do
// not depend on, a value computed from an input without a recorded op, an
// op without an ONNX form (UnsupportedOp), two tensors with one name.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "singa/core/tensor.h"
#include "singa/ops/op.h"

namespace singa::sonnx {

struct ExportOptions {
  std::string model_name = "sonnx";
  // Target ai.onnx opset; 0 picks the newest one every op allows.
  int opset = 0;
  // Marks dimension 0 of every graph input and output as the symbol "batch".
  bool dynamic_batch = false;
  // false (as torch's export): ops recorded in training form are written in
  // their inference form (BatchNormalization uses the running statistics,
  // Dropout passes through). true: as recorded.
  bool training = false;
  // Graph input/output names; empty: the tensor's name, else input_<i> / output_<i>.
  std::vector<std::string> input_names, output_names;
};

// Serialized onnx.ModelProto of the graph from `inputs` to `outputs`.
std::string ToOnnx(const TensorList& inputs, const TensorList& outputs,
                   const ExportOptions& options = {});

// Exports to `path` through a temporary file in the same folder renamed into
// place: on any error the file at `path` is left as it was (IOError for
// write failures).
void SaveOnnx(const std::string& path, const TensorList& inputs, const TensorList& outputs,
              const ExportOptions& options = {});

}  // namespace singa::sonnx
