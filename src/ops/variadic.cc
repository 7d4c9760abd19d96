// Max, Min, Mean, Sum: elementwise over one or more inputs with
// multidirectional broadcasting. Max and Min propagate NaN (as numpy's
// maximum/minimum). 16-bit floats accumulate in float and round once.
// Before opset 8 every input has the same shape (opset 1 also had
// consumed_inputs, an ignored in-place hint).
// https://onnx.ai/onnx/operators/onnx__Max.html (Min, Mean, Sum alike)
#include <cmath>

#include "ops/common.h"
#include "ops/grad_util.h"

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

// Backward: Sum passes dY to every input, Mean dY / n; Max and Min pass it to
// the input holding the extreme (the first one on ties). Each is summed back
// over the input's broadcast.
template <bool kMean>
TensorList SumBackward(const GradCtx& g, const NoAttrs&) {
  Tensor dy = g.grad_output(0);
  if constexpr (kMean) dy = grad::Div(dy, grad::Scalar(g.num_inputs(), dy));
  TensorList d(g.num_inputs());
  for (int i = 0; i < g.num_inputs(); ++i)
    if (g.needs_grad(i)) d[i] = ops::SumToShape(dy, g.input(i).shape());
  return d;
}
TensorList ExtremeBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor &y = g.output(0), &dy = g.grad_output(0);
  TensorList d(g.num_inputs());
  Tensor taken;  // where an earlier input already took the gradient
  for (int i = 0; i < g.num_inputs(); ++i) {
    Tensor hit = Call1("Equal", {g.input(i), y});
    if (taken.defined()) hit = grad::And(hit, grad::Not(taken));
    if (g.needs_grad(i)) d[i] = ops::SumToShape(grad::Masked(hit, dy), g.input(i).shape());
    taken = taken.defined() ? Call1("Or", {taken, hit}) : hit;
  }
  return d;
}

// Opsets 1 and 6: the same ops without broadcasting.
struct Variadic1Attrs {
  std::vector<int64_t> consumed_inputs;
};
SpecList EqualShapesInfer(const InferCtx& c, const Variadic1Attrs&) {
  for (int i = 1; i < c.num_inputs(); ++i)
    SINGA_CHECK(c.shape(i) == c.shape(0), ShapeError,
                c.where() << ": before opset 8 all inputs must have one shape ("
                          << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}
// Versions 1 and 6 take inputs of one shape (1 also the legacy
// consumed_inputs); 8 brought multidirectional broadcasting, and 12 and 13
// only added dtypes (`types8`: the dtypes from 8 on).
void Register(const char* name, const char* output, std::vector<DType> types8,
              void (*kernel)(KernelCtx&, const NoAttrs&),
              TensorList (*backward)(const GradCtx&, const NoAttrs&)) {
  RegisterVersions<Variadic1Attrs>(name, {1, 6}, [&](OpBuilder<Variadic1Attrs>& b, int v) {
    b.inputs({"data_0..."})
        .outputs({output})
        .dtypes(dtypes::kFloats, {0})
        .infer(EqualShapesInfer)
        .kernel([kernel](KernelCtx& k, const Variadic1Attrs&) { kernel(k, NoAttrs{}); })
        .backward(
            [backward](const GradCtx& g, const Variadic1Attrs&) { return backward(g, NoAttrs{}); });
    if (v == 1) b.attr("consumed_inputs", &Variadic1Attrs::consumed_inputs);
  });
  RegisterVersions<NoAttrs>(name, {8}, [&](OpBuilder<NoAttrs>& b, int) {
    b.inputs({"data_0..."})
        .outputs({output})
        .dtypes(types8, {0})
        .infer(Infer)
        .kernel(kernel)
        .backward(backward);
  });
}
[[maybe_unused]] const bool kRegistered = [] {
  Register("Max", "max", dtypes::kNumeric, VariadicForward<MaxOp>, ExtremeBackward);
  Register("Min", "min", dtypes::kNumeric, VariadicForward<MinOp>, ExtremeBackward);
  Register("Mean", "mean", dtypes::kFloats, VariadicForward<SumOp, true>, SumBackward<true>);
  Register("Sum", "sum", dtypes::kFloats, VariadicForward<SumOp>, SumBackward<false>);
  return true;
}();

}  // namespace

}  // namespace singa
