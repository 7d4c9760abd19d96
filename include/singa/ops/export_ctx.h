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

  // Every input's (output's) name, in order.
  std::vector<std::string> input_names() const {
    std::vector<std::string> v;
    for (int i = 0; i < num_inputs(); ++i) v.push_back(input_name(i));
    return v;
  }
  std::vector<std::string> output_names() const {
    std::vector<std::string> v;
    for (int i = 0; i < num_outputs(); ++i) v.push_back(output_name(i));
    return v;
  }
  // A constant input holding `values` (int64, 1-d).
  std::string AddInts(const std::vector<int64_t>& values, std::string_view hint) {
    return AddConstant(Tensor::FromVector<int64_t>({static_cast<int64_t>(values.size())}, values),
                       hint);
  }
  // A constant input holding `value`, a scalar of input i's dtype.
  std::string AddScalarLike(double value, int i, std::string_view hint) {
    return AddConstant(Tensor::Scalar<double>(value).AsType(input(i).dtype()), hint);
  }
};

// Upgrades (OpSchema::upgrade) where attributes became inputs: the op under
// its own name with the recorded inputs, then `moved` (constant inputs' names,
// "" for absent ones), and the recorded attributes but those in `dropped`.
inline void AddWithInputs(ExportCtx& c, const std::vector<std::string>& moved,
                          const std::vector<std::string>& dropped) {
  std::vector<std::string> in = c.input_names();
  in.insert(in.end(), moved.begin(), moved.end());
  AttrMap attrs = c.attrs();
  for (const std::string& a : dropped) attrs.erase(a);
  c.AddNode(c.op().name, in, c.output_names(), attrs, c.op().domain);
}

}  // namespace singa
