// The ai.onnx ops that make, read and edit sequences: SequenceEmpty,
// SequenceConstruct, SequenceAt, SequenceInsert, SequenceErase and
// SequenceLength. A sequence is a Value (singa/ops/value.h) holding its
// tensors, which are shared, never copied.
// https://onnx.ai/onnx/operators/onnx__SequenceAt.html (and the others)
#include "singa/ops/op.h"

namespace singa {
namespace {

struct SequenceEmptyAttrs {
  DType dtype = DType::kFloat32;
};
struct NoSequenceAttrs {};

// A position input: an int32/int64 scalar in [-size, hi], made non-negative.
int64_t Position(const ValueCtx& c, int i, int64_t size, int64_t hi) {
  const Tensor& p = c.tensor(i);
  SINGA_CHECK((p.dtype() == DType::kInt64 || p.dtype() == DType::kInt32) && p.numel() == 1,
              DTypeError,
              c.where() << ": position must be an int32 or int64 scalar, got " << p.ToString());
  const int64_t pos = p.Item<int64_t>();
  SINGA_CHECK(pos >= -size && pos <= hi, ShapeError,
              c.where() << ": position " << pos << " is out of range [" << -size << ", " << hi
                        << "] for a sequence of " << size);
  return pos < 0 ? pos + size : pos;
}

void CheckElement(const ValueCtx& c, DType want, const Tensor& t) {
  SINGA_CHECK(want == DType::kUndefined || t.dtype() == want, DTypeError,
              c.where() << ": a " << Name(want) << " sequence cannot hold " << t.ToString());
}

ValueList SequenceConstruct(const ValueCtx& c, const NoSequenceAttrs&) {
  TensorList ts;
  for (int i = 0; i < c.num_inputs(); ++i) {
    ts.push_back(c.tensor(i));
    CheckElement(c, ts[0].dtype(), ts.back());
  }
  return {Value::Sequence(std::move(ts))};
}

ValueList SequenceAt(const ValueCtx& c, const NoSequenceAttrs&) {
  const TensorList& seq = c.sequence(0);
  const int64_t size = static_cast<int64_t>(seq.size());
  return {seq[Position(c, 1, size, size - 1)]};
}

ValueList SequenceInsert(const ValueCtx& c, const NoSequenceAttrs&) {
  TensorList seq = c.sequence(0);
  const Tensor& t = c.tensor(1);
  const DType dtype = c.input(0).element_dtype();
  CheckElement(c, dtype, t);
  const int64_t size = static_cast<int64_t>(seq.size());
  const int64_t pos = c.has_input(2) ? Position(c, 2, size, size) : size;
  seq.insert(seq.begin() + pos, t);
  return {Value::Sequence(std::move(seq), dtype)};
}

ValueList SequenceErase(const ValueCtx& c, const NoSequenceAttrs&) {
  TensorList seq = c.sequence(0);
  const int64_t size = static_cast<int64_t>(seq.size());
  SINGA_CHECK(size > 0, ShapeError, c.where() << ": the sequence is empty");
  const int64_t pos = c.has_input(1) ? Position(c, 1, size, size - 1) : size - 1;
  seq.erase(seq.begin() + pos);
  return {Value::Sequence(std::move(seq), c.input(0).element_dtype())};
}

ValueList SequenceLength(const ValueCtx& c, const NoSequenceAttrs&) {
  return {Tensor::Scalar<int64_t>(static_cast<int64_t>(c.sequence(0).size()), c.device())};
}

}  // namespace

SINGA_REGISTER_OP(SequenceEmpty, SequenceEmptyAttrs)
    .since_opset(11)
    .inputs({})
    .outputs({"output"})
    .attr("dtype", &SequenceEmptyAttrs::dtype)
    .value_kernel([](const ValueCtx&, const SequenceEmptyAttrs& a) -> ValueList {
      return {Value::Sequence({}, a.dtype)};
    });

SINGA_REGISTER_OP(SequenceConstruct, NoSequenceAttrs)
    .since_opset(11)
    .inputs({"inputs..."})
    .outputs({"output_sequence"})
    .value_kernel(SequenceConstruct);

SINGA_REGISTER_OP(SequenceAt, NoSequenceAttrs)
    .since_opset(11)
    .inputs({"input_sequence", "position"})
    .outputs({"tensor"})
    .value_kernel(SequenceAt);

SINGA_REGISTER_OP(SequenceInsert, NoSequenceAttrs)
    .since_opset(11)
    .inputs({"input_sequence", "tensor", "position?"})
    .outputs({"output_sequence"})
    .value_kernel(SequenceInsert);

SINGA_REGISTER_OP(SequenceErase, NoSequenceAttrs)
    .since_opset(11)
    .inputs({"input_sequence", "position?"})
    .outputs({"output_sequence"})
    .value_kernel(SequenceErase);

SINGA_REGISTER_OP(SequenceLength, NoSequenceAttrs)
    .since_opset(11)
    .inputs({"input_sequence"})
    .outputs({"length"})
    .value_kernel(SequenceLength);

}  // namespace singa
