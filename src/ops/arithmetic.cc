// Add, Sub, Mul, Div: numpy-broadcasting arithmetic for every numeric dtype.
// Integer Div truncates toward zero (C semantics, as the ONNX reference does);
// integer division by zero is an error, not a crash. Opsets 1 and 6 have the
// older `broadcast`/`axis` broadcasting (ops/legacy_broadcast.h).
// https://onnx.ai/onnx/operators/onnx__Add.html (Sub, Mul, Div alike)
#include "ops/common.h"
#include "ops/legacy_broadcast.h"

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

// A is NoAttrs (numpy broadcasting) or the legacy attributes (ops::BroadcastB).
template <class A>
TensorList AddBackward(const GradCtx& g, const A& a) {
  const Tensor& dy = g.grad_output(0);
  return {ops::SumToShape(dy, g.input(0).shape()), ops::SumToB(dy, g, a)};
}
template <class A>
TensorList SubBackward(const GradCtx& g, const A& a) {
  const Tensor& dy = g.grad_output(0);
  return {ops::SumToShape(dy, g.input(0).shape()), ops::SumToB(Call1("Neg", {dy}), g, a)};
}
template <class A>
TensorList MulBackward(const GradCtx& g, const A& a) {
  const Tensor& dy = g.grad_output(0);
  TensorList d(2);
  if (g.needs_grad(0))
    d[0] = ops::SumToShape(Call1("Mul", {dy, ops::BroadcastB(g, a)}), g.input(0).shape());
  if (g.needs_grad(1)) d[1] = ops::SumToB(Call1("Mul", {dy, g.input(0)}), g, a);
  return d;
}
// d(a/b)/da = 1/b; d(a/b)/db = -(a/b)/b
template <class A>
TensorList DivBackward(const GradCtx& g, const A& a) {
  const Tensor& dy = g.grad_output(0);
  const Tensor da = Call1("Div", {dy, ops::BroadcastB(g, a)});
  TensorList d(2);
  if (g.needs_grad(0)) d[0] = ops::SumToShape(da, g.input(0).shape());
  if (g.needs_grad(1)) d[1] = ops::SumToB(Call1("Neg", {Call1("Mul", {da, g.output(0)})}), g, a);
  return d;
}

// Opsets 1 and 6 (1 also had consumed_inputs, an ignored in-place hint).
void RegisterLegacy(const char* name, void (*kernel)(KernelCtx&, const NoAttrs&),
                    TensorList (*backward)(const GradCtx&, const ops::LegacyBroadcastAttrs&)) {
  using ops::LegacyBroadcastAttrs;
  RegisterVersions<LegacyBroadcastAttrs>(
      name, {1, 6}, [&](OpBuilder<LegacyBroadcastAttrs>& b, int v) {
        b.inputs({"A", "B"})
            .outputs({"C"})
            .attr("broadcast", &LegacyBroadcastAttrs::broadcast)
            .attr("axis", &LegacyBroadcastAttrs::axis)
            .dtypes(dtypes::kNumeric, {0, 1})
            .infer(ops::LegacyBroadcastInfer)
            .kernel([name, kernel](KernelCtx& k, const LegacyBroadcastAttrs& a) {
              ops::RunLegacyBroadcast(k, a, name, kernel);
            })
            .backward(backward)
            .upgrade(ops::LegacyBroadcastUpgrade);
        if (v == 1) b.attr("consumed_inputs", &LegacyBroadcastAttrs::consumed_inputs);
      });
}

[[maybe_unused]] const bool kLegacyRegistered = [] {
  RegisterLegacy("Add", ArithmeticForward<AddOp>, AddBackward);
  RegisterLegacy("Sub", ArithmeticForward<SubOp>, SubBackward);
  RegisterLegacy("Mul", ArithmeticForward<MulOp>, MulBackward);
  RegisterLegacy("Div", DivForward, DivBackward);
  return true;
}();

}  // namespace

SINGA_REGISTER_OP(Add, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(ArithmeticForward<AddOp>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kAdd, NoAttrs>, ops::kCudaMath)
    .backward(AddBackward<NoAttrs>);
SINGA_REGISTER_OP(Sub, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(ArithmeticForward<SubOp>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kSub, NoAttrs>, ops::kCudaMath)
    .backward(SubBackward<NoAttrs>);
SINGA_REGISTER_OP(Mul, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(ArithmeticForward<MulOp>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kMul, NoAttrs>, ops::kCudaMath)
    .backward(MulBackward<NoAttrs>);
SINGA_REGISTER_OP(Div, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(DivForward)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kDiv, NoAttrs>, ops::kCudaFloats)
    .backward(DivBackward<NoAttrs>);

}  // namespace singa
