// ReverseSequence: for each batch entry b (along batch_axis), the first
// sequence_lens[b] elements along time_axis are reversed; the rest are
// copied. The two axes are 0 and 1 (in either order). The op is its own
// adjoint: the gradient is the same reversal of the output's gradient.
// https://onnx.ai/onnx/operators/onnx__ReverseSequence.html
#include "ops/movement.h"

namespace singa {
namespace {

struct ReverseSequenceAttrs {
  int64_t batch_axis = 1;
  int64_t time_axis = 0;
};

SpecList Infer(const InferCtx& c, const ReverseSequenceAttrs& a) {
  SINGA_CHECK(c.rank(0) >= 2, ShapeError,
              c.where() << ": input must have rank >= 2 (" << c.inputs_string() << ")");
  SINGA_CHECK((a.batch_axis == 0 && a.time_axis == 1) || (a.batch_axis == 1 && a.time_axis == 0),
              ShapeError,
              c.where() << ": batch_axis and time_axis must be 0 and 1, got " << a.batch_axis
                        << " and " << a.time_axis);
  SINGA_CHECK(c.rank(1) == 1 && c.shape(1)[0] == c.shape(0)[a.batch_axis], ShapeError,
              c.where() << ": sequence_lens must be 1-D with one length per batch entry ("
                        << c.inputs_string() << ")");
  const int64_t steps = c.shape(0)[a.time_axis];
  for (int64_t len : c.value(1).ToVector<int64_t>())
    SINGA_CHECK(len >= 0 && len <= steps, ShapeError,
                c.where() << ": sequence length " << len << " is out of range [0, " << steps
                          << "] (" << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}

void Forward(KernelCtx& k, const ReverseSequenceAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const Tensor x = k.input(0).Contiguous();
  const std::vector<int64_t> lens = k.input(1).ToVector<int64_t>();
  const int64_t d0 = y.shape()[0], d1 = y.shape()[1];
  const int64_t inner = y.numel() / (d0 * d1);
  ops::VisitElementSize(
      y.dtype(),
      [&]<class E>(Tag<E>) {
        const E* in = static_cast<const E*>(x.raw_data());
        E* out = static_cast<E*>(y.raw_data());
        for (int64_t i0 = 0; i0 < d0; ++i0)
          for (int64_t i1 = 0; i1 < d1; ++i1) {
            const int64_t b = a.batch_axis == 0 ? i0 : i1;
            const int64_t t = a.batch_axis == 0 ? i1 : i0;
            const int64_t st = t < lens[b] ? lens[b] - 1 - t : t;
            const int64_t s0 = a.batch_axis == 0 ? i0 : st, s1 = a.batch_axis == 0 ? st : i1;
            std::copy(in + (s0 * d1 + s1) * inner, in + (s0 * d1 + s1 + 1) * inner,
                      out + (i0 * d1 + i1) * inner);
          }
      },
      "ReverseSequence");
}

TensorList Backward(const GradCtx& g, const ReverseSequenceAttrs& a) {
  return {Call1("ReverseSequence", {g.grad_output(0), g.input(1)},
                {{"batch_axis", a.batch_axis}, {"time_axis", a.time_axis}}),
          Tensor()};
}

}  // namespace

SINGA_REGISTER_OP(ReverseSequence, ReverseSequenceAttrs)
    .since_opset(10)
    .inputs({"input", "sequence_lens"})
    .outputs({"Y"})
    .attr("batch_axis", &ReverseSequenceAttrs::batch_axis)
    .attr("time_axis", &ReverseSequenceAttrs::time_axis)
    .dtypes(ops::kAllButBFloat16, {0})
    .dtypes({DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);
// 28 added bfloat16.
SINGA_REGISTER_OP(ReverseSequence, ReverseSequenceAttrs)
    .since_opset(28)
    .inputs({"input", "sequence_lens"})
    .outputs({"Y"})
    .attr("batch_axis", &ReverseSequenceAttrs::batch_axis)
    .attr("time_axis", &ReverseSequenceAttrs::time_axis)
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
