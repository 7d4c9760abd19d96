// Values (singa/ops/value.h) and the dispatcher of value kernels: ops over
// sequences and optionals, and ops with graph attributes (control flow).
#include <algorithm>
#include <climits>

#include "singa/ops/op.h"

namespace singa {

Value Value::Sequence(TensorList elements, DType dtype) {
  Value v;
  v.seq_ = std::make_shared<const TensorList>(std::move(elements));
  v.seq_dtype_ = dtype;
  return v;
}

const Tensor& Value::tensor() const {
  SINGA_CHECK(!seq_, DTypeError, "a sequence (" << ToString() << ") where a tensor is expected");
  return tensor_;
}

const TensorList& Value::sequence() const {
  SINGA_CHECK(seq_, DTypeError, "a " << ToString() << " where a sequence is expected");
  return *seq_;
}

DType Value::element_dtype() const {
  if (seq_dtype_ != DType::kUndefined || sequence().empty()) return seq_dtype_;
  return sequence()[0].dtype();
}

std::string Value::ToString() const {
  if (!seq_) return tensor_.defined() ? tensor_.ToString() : "none";
  std::string s = "seq(";
  for (size_t i = 0; i < seq_->size(); ++i) s += (i ? ", " : "") + (*seq_)[i].ToString();
  if (seq_->empty()) s += std::string(Name(seq_dtype_));
  return s + ")";
}

namespace {

// "node 'at' (SequenceAt)", or the op's name for a call outside a model.
std::string NodeWhere(const OpSchema& op, std::string_view node) {
  if (node.empty()) return op.name;
  return "node '" + std::string(node) + "' (" + op.name + ")";
}

// The spec's name of input i ("input_sequence"), without its marks.
std::string InputName(const OpSchema& op, int i) {
  if (op.input_names.empty()) return "input " + std::to_string(i);
  std::string name = op.input_names[std::min<size_t>(i, op.input_names.size() - 1)];
  while (!name.empty() && (name.back() == '?' || name.back() == '.')) name.pop_back();
  return name;
}

}  // namespace

const Value& ValueCtx::input(int i) const {
  static const Value kNone;
  return i < num_inputs() ? inputs_[i] : kNone;
}

const Tensor& ValueCtx::tensor(int i) const {
  SINGA_CHECK(has_input(i), ShapeError, where() << ": " << InputName(op_, i) << " is missing");
  SINGA_CHECK(
      !inputs_[i].is_sequence(), DTypeError,
      where() << ": " << InputName(op_, i) << " must be a tensor, got " << inputs_[i].ToString());
  return inputs_[i].tensor();
}

const TensorList& ValueCtx::sequence(int i) const {
  SINGA_CHECK(i < num_inputs() && inputs_[i].is_sequence(), DTypeError,
              where() << ": " << InputName(op_, i) << " must be a sequence, got "
                      << (i < num_inputs() ? inputs_[i].ToString() : std::string("none")));
  return inputs_[i].sequence();
}

std::string ValueCtx::where() const { return NodeWhere(op_, node_); }

ValueList ValueCtx::RunGraph(const Subgraph& graph, const ValueList& inputs,
                             std::string_view what) const {
  SINGA_CHECK(scope_, UnsupportedOp,
              where() << ": its graph attributes run inside a model (sonnx.prepare)");
  SINGA_CHECK(static_cast<int>(inputs.size()) == graph.num_inputs(), InvalidModel,
              where() << " " << what << ": the graph takes " << graph.num_inputs() << " inputs, "
                      << inputs.size() << " given");
  return scope_->Run(graph, inputs, where() + " " + std::string(what));
}

bool OpSchema::RunsOnValues(const AttrMap& attrs) const {
  if (!value_kernel) return false;
  if (!kernel && !alias) return true;
  return std::any_of(attrs.begin(), attrs.end(), [&](const auto& kv) {
    return std::holds_alternative<SubgraphPtr>(kv.second);
  });
}

ValueList OpSchema::RunValues(const ValueList& inputs, const std::shared_ptr<const void>& attrs,
                              bool on_values, int num_outputs, std::string_view node,
                              const GraphScope* scope, Device device) const {
  const int n = static_cast<int>(inputs.size());
  // A sequence, or none where the op requires a tensor, is not for the tensor kernel.
  auto not_a_tensor = [&](int i) {
    return inputs[i].is_sequence() || (inputs[i].is_none() && i < min_inputs());
  };
  bool values = on_values;
  for (int i = 0; i < n && !values; ++i) values = value_kernel && not_a_tensor(i);
  if (values) {
    SINGA_CHECK(n <= max_inputs(), InvalidModel,
                NodeWhere(*this, node)
                    << ": " << n << " inputs; the op takes at most " << max_inputs());
    ValueCtx ctx(*this, inputs, num_outputs < 0 ? std::max(min_outputs(), 1) : num_outputs, node,
                 scope, device);
    ValueList out = value_kernel(ctx, attrs.get());
    out.resize(ctx.num_outputs());
    return out;
  }
  TensorList tensors;
  tensors.reserve(n);
  for (int i = 0; i < n; ++i) {
    SINGA_CHECK(!inputs[i].is_sequence(), DTypeError,
                NodeWhere(*this, node)
                    << ": input " << i << " must be a tensor, got " << inputs[i].ToString());
    tensors.push_back(inputs[i].tensor());
  }
  TensorList out = Run(tensors, attrs, num_outputs, node);
  return ValueList(out.begin(), out.end());
}

}  // namespace singa
