// Add, Sub, Mul, Div: numpy-broadcasting arithmetic for every numeric dtype.
// Integer Div truncates toward zero (C semantics, as the ONNX reference does);
// integer division by zero is an error, not a crash.
// https://onnx.ai/onnx/operators/onnx__Add.html (Sub, Mul, Div alike)
#include "ops/common.h"

namespace singa {
namespace {

template <class Op>
void ArithmeticForward(KernelCtx& k, const NoAttrs&) {
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    cpu::Binary<T, T, T>(k.input(0), k.input(1), k.output(0), [](T a, T b) {
      return static_cast<T>(Op::Apply(static_cast<Acc<T>>(a), static_cast<Acc<T>>(b)));
    });
  });
}

struct AddOp {
  template <class T>
  static T Apply(T a, T b) {
    return a + b;
  }
};
struct SubOp {
  template <class T>
  static T Apply(T a, T b) {
    return a - b;
  }
};
struct MulOp {
  template <class T>
  static T Apply(T a, T b) {
    return a * b;
  }
};
struct DivOp {
  template <class T>
  static T Apply(T a, T b) {
    if constexpr (std::is_integral_v<T>)
      return b == 0 ? T(0) : a / b;
    else
      return a / b;
  }
};

void DivForward(KernelCtx& k, const NoAttrs& a) {
  const Tensor& b = k.input(1);
  if (IsInteger(b.dtype())) {
    VisitNumeric(b.dtype(), [&]<class T>(Tag<T>) {
      for (T v : b.ToVector<T>())
        SINGA_CHECK(v != T(0), ShapeError, "Div: integer division by zero");
    });
  }
  ArithmeticForward<DivOp>(k, a);
}

SpecList Infer(const InferCtx& c, const NoAttrs&) { return ops::BroadcastSpec(c); }

// Backward, with framework ops; each input's gradient is summed back over the
// dimensions it was broadcast along.
Tensor Op(const char* name, const Tensor& a, const Tensor& b) { return CallOp(name, {a, b})[0]; }

TensorList AddBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& dy = g.grad_output(0);
  return {ops::SumToShape(dy, g.input(0).shape()), ops::SumToShape(dy, g.input(1).shape())};
}
TensorList SubBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& dy = g.grad_output(0);
  return {ops::SumToShape(dy, g.input(0).shape()),
          ops::SumToShape(CallOp("Neg", {dy})[0], g.input(1).shape())};
}
TensorList MulBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& dy = g.grad_output(0);
  TensorList d(2);
  if (g.needs_grad(0)) d[0] = ops::SumToShape(Op("Mul", dy, g.input(1)), g.input(0).shape());
  if (g.needs_grad(1)) d[1] = ops::SumToShape(Op("Mul", dy, g.input(0)), g.input(1).shape());
  return d;
}
// d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b
TensorList DivBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& dy = g.grad_output(0);
  const Tensor da = Op("Div", dy, g.input(1));
  TensorList d(2);
  if (g.needs_grad(0)) d[0] = ops::SumToShape(da, g.input(0).shape());
  if (g.needs_grad(1))
    d[1] = ops::SumToShape(CallOp("Neg", {Op("Mul", da, g.output(0))})[0], g.input(1).shape());
  return d;
}

}  // namespace

SINGA_REGISTER_OP(Add, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(ArithmeticForward<AddOp>)
    .backward(AddBackward);
SINGA_REGISTER_OP(Sub, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(ArithmeticForward<SubOp>)
    .backward(SubBackward);
SINGA_REGISTER_OP(Mul, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(ArithmeticForward<MulOp>)
    .backward(MulBackward);
SINGA_REGISTER_OP(Div, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(DivForward)
    .backward(DivBackward);

}  // namespace singa
