// Max, Min, Mean, Sum: elementwise over one or more inputs with
// multidirectional broadcasting. Max and Min propagate NaN (as numpy's
// maximum/minimum). 16-bit floats accumulate in float and round once.
// https://onnx.ai/onnx/operators/onnx__Max.html (Min, Mean, Sum alike)
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct MaxOp {
  template <class V>
  static V Apply(V a, V b) {
    if constexpr (std::is_floating_point_v<V>)
      if (std::isnan(a) || std::isnan(b)) return a + b;
    return a < b ? b : a;
  }
};
struct MinOp {
  template <class V>
  static V Apply(V a, V b) {
    if constexpr (std::is_floating_point_v<V>)
      if (std::isnan(a) || std::isnan(b)) return a + b;
    return b < a ? b : a;
  }
};
struct SumOp {
  template <class V>
  static V Apply(V a, V b) {
    return a + b;
  }
};

// Folds every input into an accumulator of the output's shape, in Acc<T>
// (the output itself unless T is a 16-bit float), then Mean divides.
template <class Op, bool kMean = false>
void VariadicForward(KernelCtx& k, const NoAttrs&) {
  VisitNumeric(k.output(0).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const Tensor& y = k.output(0);
    Tensor acc = std::is_same_v<A, T> ? y : Tensor(y.shape(), DTypeOf<A>(), y.device());
    cpu::ConvertCopy(k.input(0), acc);
    for (int i = 1; i < k.num_inputs(); ++i)
      cpu::Binary<A, T, A>(acc, k.input(i), acc,
                           [](A a, T b) { return Op::Apply(a, static_cast<A>(b)); });
    if constexpr (kMean) {
      const A n = static_cast<A>(k.num_inputs());
      cpu::Unary<A, A>(acc, acc, [n](A v) { return v / n; });
    }
    if (!std::is_same_v<A, T>) cpu::ConvertCopy(acc, y);
  });
}

SpecList Infer(const InferCtx& c, const NoAttrs&) { return ops::BroadcastSpec(c); }

}  // namespace

// Version 8 brought multidirectional broadcasting; 12 and 13 only added dtypes.
SINGA_REGISTER_OP(Max, NoAttrs)
    .since_opset(8)
    .inputs({"data_0..."})
    .outputs({"max"})
    .dtypes(dtypes::kNumeric, {0})
    .infer(Infer)
    .kernel(VariadicForward<MaxOp>);
SINGA_REGISTER_OP(Min, NoAttrs)
    .since_opset(8)
    .inputs({"data_0..."})
    .outputs({"min"})
    .dtypes(dtypes::kNumeric, {0})
    .infer(Infer)
    .kernel(VariadicForward<MinOp>);
SINGA_REGISTER_OP(Mean, NoAttrs)
    .since_opset(8)
    .inputs({"data_0..."})
    .outputs({"mean"})
    .dtypes(dtypes::kFloats, {0})
    .infer(Infer)
    .kernel(VariadicForward<SumOp, true>);
SINGA_REGISTER_OP(Sum, NoAttrs)
    .since_opset(8)
    .inputs({"data_0..."})
    .outputs({"sum"})
    .dtypes(dtypes::kFloats, {0})
    .infer(Infer)
    .kernel(VariadicForward<SumOp>);

}  // namespace singa
