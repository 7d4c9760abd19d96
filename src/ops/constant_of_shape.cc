// ConstantOfShape: a tensor of the shape given by the input, every element
// equal to the one element of `value` (default: float32 0).
// https://onnx.ai/onnx/operators/onnx__ConstantOfShape.html
#include "ops/movement.h"

namespace singa {
namespace {

struct ConstantOfShapeAttrs {
  std::optional<Tensor> value;
};

bool ValueDTypeAllowed(DType dt) {
  const auto& any = ops::AnyDType();
  return dt != DType::kString && std::find(any.begin(), any.end(), dt) != any.end();
}

SpecList Infer(const InferCtx& c, const ConstantOfShapeAttrs& a) {
  Shape shape = ops::ReadInts(c, 0);
  for (int64_t d : shape)
    SINGA_CHECK(d >= 0, ShapeError,
                c.where() << ": shape " << ToString(shape) << " has a negative dimension ("
                          << c.inputs_string() << ")");
  DType dt = DType::kFloat32;
  if (a.value) {
    SINGA_CHECK(a.value->defined() && a.value->numel() == 1, ShapeError,
                c.where() << ": value must have one element, got "
                          << (a.value->defined() ? a.value->ToString() : "an undefined tensor"));
    dt = a.value->dtype();
    SINGA_CHECK(ValueDTypeAllowed(dt), DTypeError,
                c.where() << ": value of dtype " << Name(dt) << " is not supported");
  }
  return {{dt, shape}};
}

void Forward(KernelCtx& k, const ConstantOfShapeAttrs& a) {
  const Tensor& y = k.output(0);
  if (a.value) {
    cpu::ConvertCopy(a.value->Reshape({}), y);
  } else {
    float* out = y.data<float>();
    std::fill(out, out + y.numel(), 0.0f);
  }
}

}  // namespace

SINGA_REGISTER_OP(ConstantOfShape, ConstantOfShapeAttrs)
    .since_opset(9)
    .inputs({"input"})
    .outputs({"output"})
    .attr("value", &ConstantOfShapeAttrs::value)
    .dtypes({DType::kInt64}, {0})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
