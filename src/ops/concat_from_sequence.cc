// ConcatFromSequence: concatenates a sequence's tensors along `axis`, or
// stacks them along a new one (new_axis = 1), through Concat and Unsqueeze.
// https://onnx.ai/onnx/operators/onnx__ConcatFromSequence.html
#include "singa/ops/op.h"

namespace singa {
namespace {

struct ConcatFromSequenceAttrs {
  int64_t axis = 0;
  int64_t new_axis = 0;
};

ValueList ConcatFromSequence(const ValueCtx& c, const ConcatFromSequenceAttrs& a) {
  const TensorList& seq = c.sequence(0);
  SINGA_CHECK(!seq.empty(), ShapeError, c.where() << ": the sequence is empty");
  const bool new_axis = a.new_axis != 0;
  const int64_t rank = seq[0].ndim() + (new_axis ? 1 : 0);
  int64_t axis = a.axis;
  SINGA_CHECK(axis >= -rank && axis < rank, ShapeError,
              c.where() << ": axis " << a.axis << " is out of range for rank " << rank);
  if (axis < 0) axis += rank;
  TensorList parts = seq;
  if (new_axis) {
    const Tensor axes = Tensor::FromVector<int64_t>({1}, {axis}, seq[0].device());
    for (Tensor& p : parts) p = Call1("Unsqueeze", {p, axes});
  }
  return {Call1("Concat", parts, {{"axis", axis}})};
}

}  // namespace

SINGA_REGISTER_OP(ConcatFromSequence, ConcatFromSequenceAttrs)
    .since_opset(11)
    .inputs({"input_sequence"})
    .outputs({"concat_result"})
    .attr("axis", &ConcatFromSequenceAttrs::axis, /*required=*/true)
    .attr("new_axis", &ConcatFromSequenceAttrs::new_axis)
    .value_kernel(ConcatFromSequence);

}  // namespace singa
