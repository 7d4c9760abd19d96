// Values and graph attributes: what ops that are not plain tensor functions
// take and give. A Value is a tensor, a sequence of tensors (ONNX
// seq(tensor)) or none (an empty ONNX optional, or an absent input). A
// Subgraph is a graph attribute (If's branches, Loop's body, ...): the
// importer reads it and hands the op an opaque handle, which the op runs
// through its ValueCtx (singa/ops/op.h) with the values of the enclosing
// graphs bound. Ops never see a subgraph's nodes.
//
//   Value v = Value::Sequence({a, b});           // seq(float32)
//   if (v.is_sequence()) n = v.sequence().size();
//   ValueList out = ctx.RunGraph(*attrs.body, {i, cond, state}, "body");
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "singa/core/tensor.h"

namespace singa {

// A Tensor converts to a Value; an undefined Tensor is none. Copies share the
// tensors.
class Value {
 public:
  Value() = default;
  Value(Tensor t) : tensor_(std::move(t)) {}  // NOLINT(google-explicit-constructor)
  // A sequence; `dtype` is its element type (needed when it is empty).
  static Value Sequence(TensorList elements, DType dtype = DType::kUndefined);

  bool is_sequence() const { return seq_ != nullptr; }
  bool is_none() const { return !seq_ && !tensor_.defined(); }
  // The tensor (undefined when none). Throws DTypeError for a sequence.
  const Tensor& tensor() const;
  // The elements. Throws DTypeError unless a sequence.
  const TensorList& sequence() const;
  // A sequence's element type: its declared one, else its first element's.
  DType element_dtype() const;
  // "float32[2,3]", "seq(float32)[2]" or "none": for messages.
  std::string ToString() const;

 private:
  Tensor tensor_;
  std::shared_ptr<const TensorList> seq_;
  DType seq_dtype_ = DType::kUndefined;
};
using ValueList = std::vector<Value>;

// A graph attribute of a node. Its inputs and outputs are those the graph
// declares; the values it reads from enclosing graphs are bound when it runs.
class Subgraph {
 public:
  virtual ~Subgraph() = default;
  virtual int num_inputs() const = 0;
  virtual int num_outputs() const = 0;
  // The declared name of input i, and the declared element type of output i
  // (kUndefined when the graph does not say).
  virtual const std::string& input_name(int i) const = 0;
  virtual DType output_dtype(int i) const = 0;
};
using SubgraphPtr = std::shared_ptr<const Subgraph>;

// What a value kernel gets from the model it runs in, which the importer
// implements: its subgraphs run with the values of the graphs around the
// node bound, and the autograd engine (a layer above the ops) for an op that
// differentiates (Gradient).
class GraphScope {
 public:
  virtual ~GraphScope() = default;
  // `where` names the graph for messages ("node 'loop' (Loop) body").
  virtual ValueList Run(const Subgraph& graph, const ValueList& inputs,
                        const std::string& where) const = 0;
  // The gradients of y (seeded with ones) for the tensors that store grads
  // and lead to it, as (tensor, gradient) pairs.
  virtual std::vector<std::pair<Tensor, Tensor>> Gradients(const Tensor& y) const = 0;
};

}  // namespace singa
