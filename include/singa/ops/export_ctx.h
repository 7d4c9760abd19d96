// What an op's ONNX export hook sees. An op whose ONNX form differs from the
// recorded one registers a hook (OpBuilder::to_onnx) in its own file; the
// hook writes the node(s) through this interface. The interface lives at the
// ops layer so that op files need nothing from the exporter (src/onnx, a
// layer above), which implements it (singa/onnx/export.h, writer.cc).
//
//   // split.cc: opset 18 wants num_outputs where ours splits equally.
//   void Export18(ExportCtx& c, const SplitAttrs& a) {
//     if (a.num_outputs) return c.AddDefault();        // the op as recorded
//     AttrMap attrs = c.attrs();
//     attrs["num_outputs"] = static_cast<int64_t>(c.num_outputs());
//     c.AddNode("Split", {c.input_name(0)}, {c.output_name(0), c.output_name(1)}, attrs);
//   }
//   SINGA_REGISTER_OP(Split, SplitAttrs)...to_onnx(Export18);
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "singa/core/tensor.h"
#include "singa/ops/op.h"

namespace singa {

// One recorded op application being exported: its inputs' values and names
// in the exported graph, the names its outputs must get, and ways to add
// nodes and constants.
class ExportCtx {
 public:
  virtual ~ExportCtx() = default;
  virtual const OpSchema& op() const = 0;
  virtual int opset() const = 0;  // the target ai.onnx opset
  virtual bool training() const = 0;
  virtual int num_inputs() const = 0;
  // The recorded value of input i (undefined when absent) and its name ("" when absent).
  virtual const Tensor& input(int i) const = 0;
  virtual const std::string& input_name(int i) const = 0;
  virtual int num_outputs() const = 0;
  // The name output i must get; "" when nothing in the graph reads it.
  virtual const std::string& output_name(int i) const = 0;
  // The op's attributes that differ from their defaults (its parsed form).
  virtual AttrMap attrs() const = 0;
  // Adds an initializer holding `value`; returns its name.
  virtual std::string AddConstant(const Tensor& value, std::string_view hint) = 0;
  // A fresh value name for an intermediate result of a hook's nodes.
  virtual std::string FreshName(std::string_view hint) = 0;
  // Adds a node; attribute values as in AttrMap (ints, floats, strings, tensors, lists).
  virtual void AddNode(const std::string& op_type, const std::vector<std::string>& inputs,
                       const std::vector<std::string>& outputs, const AttrMap& attrs,
                       const std::string& domain = "") = 0;
  // The identity export: the op as recorded, with attrs() (checks that the
  // target opset has the recorded form).
  virtual void AddDefault() = 0;
  // "BatchNormalization (making float32[2,3])" for error messages.
  virtual std::string where() const = 0;
};

}  // namespace singa
