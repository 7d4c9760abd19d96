// InstanceNormalization (opsets 1, 6; 22 adds bfloat16): each channel of each
// instance of X (N, C, spatial...) is normalized over its spatial dimensions,
// then Y = scale[c] * x_hat + B[c]. Group normalization with one channel per
// group (ops/group_norm.h).
// https://onnx.ai/onnx/operators/onnx__InstanceNormalization.html
#include "ops/group_norm.h"

namespace singa {
namespace {

struct InstanceNormAttrs {
  float epsilon = 1e-5f;
};
// Opset 1 also had a legacy optimization hint, accepted and ignored.
struct InstanceNorm1Attrs {
  float epsilon = 1e-5f;
  std::vector<int64_t> consumed_inputs;
};

template <class A>
SpecList Infer(const InferCtx& c, const A&) {
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() >= 2, ShapeError,
              c.where() << ": input must be (N, C, ...) (" << c.inputs_string() << ")");
  SINGA_CHECK(
      c.shape(1) == Shape{x[1]} && c.shape(2) == Shape{x[1]}, ShapeError,
      c.where() << ": scale and B must be (C,) = (" << x[1] << ",) (" << c.inputs_string() << ")");
  return {{c.dtype(0), x}};
}

template <class A>
void Forward(KernelCtx& k, const A& a) {
  const Tensor& x = k.input(0);
  ops::GroupNormLoop(x, k.input(1), k.input(2), k.output(0), x.shape()[1], true, a.epsilon, false);
}

template <class A>
TensorList Backward(const GradCtx& g, const A& a) {
  return ops::GroupNormBackward(g, g.input(0).shape()[1], true, a.epsilon);
}

const std::vector<DType> kNoBFloat16 = {DType::kFloat16, DType::kFloat32, DType::kFloat64};

}  // namespace

SINGA_REGISTER_OP(InstanceNormalization, InstanceNorm1Attrs)
    .since_opset(1)
    .inputs({"input", "scale", "B"})
    .outputs({"output"})
    .attr("epsilon", &InstanceNorm1Attrs::epsilon)
    .attr("consumed_inputs", &InstanceNorm1Attrs::consumed_inputs)
    .dtypes(kNoBFloat16, {0, 1, 2})
    .infer(Infer<InstanceNorm1Attrs>)
    .kernel(Forward<InstanceNorm1Attrs>)
    .backward(Backward<InstanceNorm1Attrs>);
SINGA_REGISTER_OP(InstanceNormalization, InstanceNormAttrs)
    .since_opset(6)
    .inputs({"input", "scale", "B"})
    .outputs({"output"})
    .attr("epsilon", &InstanceNormAttrs::epsilon)
    .dtypes(kNoBFloat16, {0, 1, 2})
    .infer(Infer<InstanceNormAttrs>)
    .kernel(Forward<InstanceNormAttrs>)
    .backward(Backward<InstanceNormAttrs>);
SINGA_REGISTER_OP(InstanceNormalization, InstanceNormAttrs)
    .since_opset(22)
    .inputs({"input", "scale", "B"})
    .outputs({"output"})
    .attr("epsilon", &InstanceNormAttrs::epsilon)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(Infer<InstanceNormAttrs>)
    .kernel(Forward<InstanceNormAttrs>)
    .backward(Backward<InstanceNormAttrs>);

}  // namespace singa
