// GroupNormalization (opset 18: scale and bias per group; 21: per channel,
// with stash_type): X (N, C, spatial...) is normalized over each group of
// C / num_groups channels of each instance, then scaled and shifted:
//   Y = scale * (X - mean) / sqrt(var + epsilon) + bias
// NOTE: statistics are computed in stash_type: float (1, the default) or
// double (11); 16-bit float X computes them in float either way.
// https://onnx.ai/onnx/operators/onnx__GroupNormalization.html
#include "ops/group_norm.h"

namespace singa {
namespace {

struct GroupNormAttrs {
  float epsilon = 1e-5f;
  int64_t num_groups = 0;
  int64_t stash_type = 1;
};

template <bool kPerChannel>
SpecList Infer(const InferCtx& c, const GroupNormAttrs& a) {
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() >= 2, ShapeError,
              c.where() << ": X must be (N, C, ...) (" << c.inputs_string() << ")");
  SINGA_CHECK(a.num_groups > 0 && x[1] % a.num_groups == 0, ShapeError,
              c.where() << ": num_groups (" << a.num_groups << ") must divide the channels ("
                        << x[1] << ")");
  const int64_t want = kPerChannel ? x[1] : a.num_groups;
  SINGA_CHECK(
      c.shape(1) == Shape{want} && c.shape(2) == Shape{want}, ShapeError,
      c.where() << ": scale and bias must be (" << want << ",) (" << c.inputs_string() << ")");
  SINGA_CHECK(a.stash_type == 1 || a.stash_type == 11, DTypeError,
              c.where() << ": stash_type must be 1 (float) or 11 (double), got " << a.stash_type);
  return {{c.dtype(0), x}};
}

// Opset 18 has no stash_type: statistics in X's precision.
template <bool kPerChannel>
void Forward(KernelCtx& k, const GroupNormAttrs& a) {
  ops::GroupNormLoop(k.input(0), k.input(1), k.input(2), k.output(0), a.num_groups, kPerChannel,
                     a.epsilon, kPerChannel && a.stash_type == 1);
}

template <bool kPerChannel>
TensorList Backward(const GradCtx& g, const GroupNormAttrs& a) {
  return ops::GroupNormBackward(g, a.num_groups, kPerChannel, a.epsilon);
}

}  // namespace

SINGA_REGISTER_OP(GroupNormalization, GroupNormAttrs)
    .since_opset(18)
    .inputs({"X", "scale", "bias"})
    .outputs({"Y"})
    .attr("epsilon", &GroupNormAttrs::epsilon)
    .attr("num_groups", &GroupNormAttrs::num_groups, true)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(Infer<false>)
    .kernel(Forward<false>)
    .backward(Backward<false>);
SINGA_REGISTER_OP(GroupNormalization, GroupNormAttrs)
    .since_opset(21)
    .inputs({"X", "scale", "bias"})
    .outputs({"Y"})
    .attr("epsilon", &GroupNormAttrs::epsilon)
    .attr("num_groups", &GroupNormAttrs::num_groups, true)
    .attr("stash_type", &GroupNormAttrs::stash_type)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(Infer<true>)
    .kernel(Forward<true>)
    .backward(Backward<true>)
    // Scale and bias per channel, where 18's were per group: an opset-18
    // record has no opset-21 form without new weights.
    .changes_meaning();

}  // namespace singa
