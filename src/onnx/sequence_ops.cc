// Sequences and optionals: the Value type and the ai.onnx ops over them,
// which the importer runs itself (the registry's kernels take tensors). The
// tensor work goes through registered ops (Split, Squeeze, Unsqueeze,
// Concat), so a model that routes activations through a sequence still
// records for autograd. SequenceMap, which has a body graph, runs beside
// If and Loop in rep.cc.
// https://onnx.ai/onnx/operators/ (Sequence*, SplitToSequence,
// ConcatFromSequence, Optional, OptionalGetElement, OptionalHasElement)
#include <algorithm>
#include <limits>

#include "onnx/graph.h"

namespace singa::sonnx {

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

const Tensor& TensorInput(const Graph& g, const Node& n, const ValueList& in, size_t i,
                          const char* what) {
  SINGA_CHECK(i < in.size() && !in[i].is_none(), ShapeError,
              g.Where(n) << ": " << what << " is missing");
  SINGA_CHECK(!in[i].is_sequence(), DTypeError,
              g.Where(n) << ": " << what << " must be a tensor, got " << in[i].ToString());
  return in[i].tensor();
}

const TensorList& SequenceInput(const Graph& g, const Node& n, const ValueList& in) {
  SINGA_CHECK(!in.empty() && in[0].is_sequence(), DTypeError,
              g.Where(n) << ": input_sequence must be a sequence, got "
                         << (in.empty() ? std::string("none") : in[0].ToString()));
  return in[0].sequence();
}

// A position input: an int32/int64 scalar in [-n, hi], made non-negative.
int64_t Position(const Graph& g, const Node& n, const Tensor& p, int64_t size, int64_t hi) {
  SINGA_CHECK((p.dtype() == DType::kInt64 || p.dtype() == DType::kInt32) && p.numel() == 1,
              DTypeError,
              g.Where(n) << ": position must be an int32 or int64 scalar, got " << p.ToString());
  int64_t pos = p.Item<int64_t>();
  SINGA_CHECK(pos >= -size && pos <= hi, ShapeError,
              g.Where(n) << ": position " << pos << " is out of range [" << -size << ", " << hi
                         << "] for a sequence of " << size);
  return pos < 0 ? pos + size : pos;
}

void CheckElement(const Graph& g, const Node& n, DType want, const Tensor& t) {
  SINGA_CHECK(want == DType::kUndefined || t.dtype() == want, DTypeError,
              g.Where(n) << ": a " << Name(want) << " sequence cannot hold " << t.ToString());
}

ValueList SequenceEmpty(const Graph& g, const Node& n, const ValueList&) {
  const int64_t code = ValueAttr<int64_t>(n, "dtype", static_cast<int64_t>(DType::kFloat32));
  SINGA_CHECK(code > 0 && code < kNumDTypes, DTypeError,
              g.Where(n) << ": attribute 'dtype' is not a dtype code: " << code);
  return {Value::Sequence({}, static_cast<DType>(code))};
}

ValueList SequenceConstruct(const Graph& g, const Node& n, const ValueList& in) {
  TensorList ts;
  for (size_t i = 0; i < in.size(); ++i) {
    ts.push_back(TensorInput(g, n, in, i, "an input"));
    CheckElement(g, n, ts[0].dtype(), ts.back());
  }
  return {Value::Sequence(std::move(ts))};
}

ValueList SequenceAt(const Graph& g, const Node& n, const ValueList& in) {
  const TensorList& seq = SequenceInput(g, n, in);
  const int64_t size = static_cast<int64_t>(seq.size());
  return {seq[Position(g, n, TensorInput(g, n, in, 1, "position"), size, size - 1)]};
}

ValueList SequenceInsert(const Graph& g, const Node& n, const ValueList& in) {
  TensorList seq = SequenceInput(g, n, in);
  const Tensor& t = TensorInput(g, n, in, 1, "tensor");
  CheckElement(g, n, in[0].element_dtype(), t);
  const int64_t size = static_cast<int64_t>(seq.size());
  const int64_t pos = in.size() > 2 && !in[2].is_none()
                          ? Position(g, n, TensorInput(g, n, in, 2, "position"), size, size)
                          : size;
  seq.insert(seq.begin() + pos, t);
  return {Value::Sequence(std::move(seq), in[0].element_dtype())};
}

ValueList SequenceErase(const Graph& g, const Node& n, const ValueList& in) {
  TensorList seq = SequenceInput(g, n, in);
  const int64_t size = static_cast<int64_t>(seq.size());
  SINGA_CHECK(size > 0, ShapeError, g.Where(n) << ": the sequence is empty");
  const int64_t pos = in.size() > 1 && !in[1].is_none()
                          ? Position(g, n, TensorInput(g, n, in, 1, "position"), size, size - 1)
                          : size - 1;
  seq.erase(seq.begin() + pos);
  return {Value::Sequence(std::move(seq), in[0].element_dtype())};
}

ValueList SequenceLength(const Graph& g, const Node& n, const ValueList& in) {
  const auto size = static_cast<int64_t>(SequenceInput(g, n, in).size());
  return {Tensor::Scalar<int64_t>(size, g.device)};
}

// Splits along `axis` into the sizes `split` gives (a scalar: chunks of that
// size, the last one shorter; none: chunks of 1, squeezed unless keepdims).
ValueList SplitToSequence(const Graph& g, const Node& n, const ValueList& in) {
  const Tensor& x = TensorInput(g, n, in, 0, "input");
  int64_t axis = ValueAttr<int64_t>(n, "axis", 0);
  SINGA_CHECK(axis >= -x.ndim() && axis < x.ndim(), ShapeError,
              g.Where(n) << ": axis " << axis << " is out of range for " << x.ToString());
  if (axis < 0) axis += x.ndim();
  const int64_t length = x.dim(axis);
  std::vector<int64_t> sizes;
  const bool has_split = in.size() > 1 && !in[1].is_none();
  if (!has_split) {
    sizes.assign(length, 1);
  } else {
    const Tensor& split = TensorInput(g, n, in, 1, "split");
    SINGA_CHECK(split.dtype() == DType::kInt64 || split.dtype() == DType::kInt32, DTypeError,
                g.Where(n) << ": split must be int32 or int64, got " << split.ToString());
    SINGA_CHECK(split.ndim() <= 1, ShapeError,
                g.Where(n) << ": split must be a scalar or 1-D, got " << split.ToString());
    sizes = split.ToVector<int64_t>();
    if (split.ndim() == 0) {
      const int64_t chunk = sizes[0];
      SINGA_CHECK(chunk > 0, ShapeError, g.Where(n) << ": split " << chunk << " must be positive");
      sizes.clear();
      for (int64_t at = 0; at < length; at += chunk) sizes.push_back(std::min(chunk, length - at));
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      SINGA_CHECK(s >= 0, ShapeError, g.Where(n) << ": split has a negative size " << s);
      total += s;
    }
    SINGA_CHECK(total == length, ShapeError,
                g.Where(n) << ": split sums to " << total << ", but dim " << axis << " of "
                           << x.ToString() << " is " << length);
  }
  if (sizes.empty()) return {Value::Sequence({}, x.dtype())};
  const Tensor split_t =
      Tensor::FromVector<int64_t>({static_cast<int64_t>(sizes.size())}, sizes, g.device);
  TensorList parts =
      CallOp("Split", {x, split_t}, {{"axis", axis}}, kLatestOpset, static_cast<int>(sizes.size()));
  if (!has_split && ValueAttr<int64_t>(n, "keepdims", 1) == 0) {
    const Tensor axes = Tensor::FromVector<int64_t>({1}, {axis}, g.device);
    for (Tensor& p : parts) p = CallOp("Squeeze", {p, axes})[0];
  }
  return {Value::Sequence(std::move(parts), x.dtype())};
}

// Concatenates the elements along `axis`, or stacks them along a new one
// (new_axis = 1).
ValueList ConcatFromSequence(const Graph& g, const Node& n, const ValueList& in) {
  const TensorList& seq = SequenceInput(g, n, in);
  SINGA_CHECK(!seq.empty(), ShapeError, g.Where(n) << ": the sequence is empty");
  const bool new_axis = ValueAttr<int64_t>(n, "new_axis", 0) != 0;
  const int64_t rank = seq[0].ndim() + (new_axis ? 1 : 0);
  int64_t axis = ValueAttr<int64_t>(n, "axis", 0);
  SINGA_CHECK(axis >= -rank && axis < rank, ShapeError,
              g.Where(n) << ": axis " << ValueAttr<int64_t>(n, "axis", 0)
                         << " is out of range for rank " << rank);
  if (axis < 0) axis += rank;
  TensorList parts = seq;
  if (new_axis) {
    const Tensor axes = Tensor::FromVector<int64_t>({1}, {axis}, g.device);
    for (Tensor& p : parts) p = CallOp("Unsqueeze", {p, axes})[0];
  }
  return {CallOp("Concat", parts, {{"axis", axis}})[0]};
}

// Optional(input?): the input, or an empty optional.
ValueList Optional(const Graph&, const Node&, const ValueList& in) {
  return {in.empty() ? Value() : in[0]};
}

ValueList OptionalHasElement(const Graph& g, const Node&, const ValueList& in) {
  return {Tensor::Scalar<bool>(!in.empty() && !in[0].is_none(), g.device)};
}

ValueList OptionalGetElement(const Graph& g, const Node& n, const ValueList& in) {
  SINGA_CHECK(!in[0].is_none(), ShapeError, g.Where(n) << ": the optional input is empty");
  return {in[0]};
}

constexpr int kAny = std::numeric_limits<int>::max();

constexpr ValueOp kValueOps[] = {
    {"SequenceEmpty", 11, 0, 0, SequenceEmpty},
    {"SequenceConstruct", 11, 1, kAny, SequenceConstruct},
    {"SequenceAt", 11, 2, 2, SequenceAt},
    {"SequenceInsert", 11, 2, 3, SequenceInsert},
    {"SequenceErase", 11, 1, 2, SequenceErase},
    {"SequenceLength", 11, 1, 1, SequenceLength},
    {"SplitToSequence", 11, 1, 2, SplitToSequence},
    {"ConcatFromSequence", 11, 1, 1, ConcatFromSequence},
    {"Optional", 15, 0, 1, Optional},
    {"OptionalHasElement", 15, 0, 1, OptionalHasElement},
    {"OptionalGetElement", 15, 1, 1, OptionalGetElement},
};

}  // namespace

const ValueOp* FindValueOp(std::string_view op_type) {
  for (const ValueOp& op : kValueOps)
    if (op.name == op_type) return &op;
  return nullptr;
}

}  // namespace singa::sonnx
