// Elementwise math: Abs Neg Exp Log Sqrt Reciprocal Sin Cos Tan Asin Acos
// Atan Sinh Cosh Tanh Asinh Acosh Atanh Ceil Floor Round Sign Erf, and the
// predicates IsNaN and IsInf. 16-bit floats compute in float and round once.
// Round is half-to-even. Out-of-domain inputs give NaN as in C.
// https://onnx.ai/onnx/operators/onnx__Abs.html (and onnx__<Op>.html alike)
// https://onnx.ai/onnx/operators/onnx__IsInf.html
#include <cmath>

#include "kernels/cpu/float8.h"
#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

// Op::Apply sees Acc<T> (float for 16-bit floats) for float inputs, and the
// integer type itself for integer inputs (only ops claiming integers visit them).
template <class Op, bool kIntegers = false>
void UnaryForward(KernelCtx& k, const NoAttrs&) {
  auto run = [&]<class T>(Tag<T>) {
    cpu::Unary<T, T>(k.input(0), k.output(0),
                     [](T v) { return static_cast<T>(Op::Apply(static_cast<Acc<T>>(v))); });
  };
  if constexpr (kIntegers)
    VisitNumeric(k.input(0).dtype(), run);
  else
    VisitFloat(k.input(0).dtype(), run);
}

#define SINGA_MATH_OP(STRUCT, EXPR) \
  struct STRUCT {                   \
    template <class V>              \
    static V Apply(V v) {           \
      return EXPR;                  \
    }                               \
  }

// Abs and Neg wrap for the most negative integer, as numpy does.
struct AbsOp {
  template <class V>
  static V Apply(V v) {
    if constexpr (std::is_unsigned_v<V>)
      return v;
    else
      return v < V(0) ? V(-v) : v;
  }
};
SINGA_MATH_OP(NegOp, V(-v));
SINGA_MATH_OP(ExpOp, std::exp(v));
SINGA_MATH_OP(LogOp, std::log(v));
SINGA_MATH_OP(SqrtOp, std::sqrt(v));
SINGA_MATH_OP(ReciprocalOp, V(1) / v);
SINGA_MATH_OP(SinOp, std::sin(v));
SINGA_MATH_OP(CosOp, std::cos(v));
SINGA_MATH_OP(TanOp, std::tan(v));
SINGA_MATH_OP(AsinOp, std::asin(v));
SINGA_MATH_OP(AcosOp, std::acos(v));
SINGA_MATH_OP(AtanOp, std::atan(v));
SINGA_MATH_OP(SinhOp, std::sinh(v));
SINGA_MATH_OP(CoshOp, std::cosh(v));
SINGA_MATH_OP(TanhOp, std::tanh(v));
SINGA_MATH_OP(AsinhOp, std::asinh(v));
SINGA_MATH_OP(AcoshOp, std::acosh(v));
SINGA_MATH_OP(AtanhOp, std::atanh(v));
SINGA_MATH_OP(CeilOp, std::ceil(v));
SINGA_MATH_OP(FloorOp, std::floor(v));
// nearbyint rounds in the default mode, to nearest even.
SINGA_MATH_OP(RoundOp, std::nearbyint(v));
// NaN stays NaN (v is returned for 0 and NaN), as numpy's sign does.
struct SignOp {
  template <class V>
  static V Apply(V v) {
    if constexpr (std::is_unsigned_v<V>)
      return v > V(0) ? V(1) : V(0);
    else
      return v > V(0) ? V(1) : (v < V(0) ? V(-1) : v);
  }
};
SINGA_MATH_OP(ErfOp, std::erf(v));
#undef SINGA_MATH_OP

// Calls f(pred) with pred(float-or-double) -> bool over X, decoding float8.
template <class Pred>
void FloatPredicate(KernelCtx& k, Pred pred) {
  const DType dt = k.input(0).dtype();
  if (cpu::IsSmallFloat(dt)) {
    cpu::Unary<uint8_t, bool>(k.input(0), k.output(0),
                              [dt, pred](uint8_t b) { return pred(cpu::DecodeFloat8(dt, b)); });
    return;
  }
  VisitFloat(dt, [&]<class T>(Tag<T>) {
    cpu::Unary<T, bool>(k.input(0), k.output(0),
                        [pred](T v) { return pred(static_cast<Acc<T>>(v)); });
  });
}

void IsNaNForward(KernelCtx& k, const NoAttrs&) {
  FloatPredicate(k, [](auto v) { return std::isnan(v); });
}

struct IsInfAttrs {
  bool detect_negative = true;
  bool detect_positive = true;
};

void IsInfForward(KernelCtx& k, const IsInfAttrs& a) {
  const bool neg = a.detect_negative, pos = a.detect_positive;
  FloatPredicate(k, [neg, pos](auto v) { return std::isinf(v) && (v > 0 ? pos : neg); });
}

SpecList BoolLikeInput(const InferCtx& c, const auto&) { return {{DType::kBool, c.shape(0)}}; }

const std::vector<DType>& FloatsAndFloat8() {
  static const std::vector<DType> types = [] {
    std::vector<DType> t = dtypes::kFloats;
    for (DType d :
         {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ})
      t.push_back(d);
    return t;
  }();
  return types;
}

// ---- Backward -----------------------------------------------------------------
// dL/dX = dY * f'(x), written with framework ops from x, y = f(x) and dY.
using grad::Add, grad::Sub, grad::Mul, grad::Div, grad::Scalar;
using GradFn = Tensor (*)(const Tensor& x, const Tensor& y, const Tensor& dy);

template <GradFn F>
TensorList UnaryBackward(const GradCtx& g, const NoAttrs&) {
  return {F(g.input(0), g.output(0), g.grad_output(0))};
}
// 1 - x^2 (Asin, Acos, Atanh)
Tensor OneMinusSquare(const Tensor& x) { return Sub(Scalar(1, x), Mul(x, x)); }

Tensor AbsGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Mul(dy, Call1("Sign", {x}));
}
Tensor NegGrad(const Tensor&, const Tensor&, const Tensor& dy) { return Call1("Neg", {dy}); }
Tensor ExpGrad(const Tensor&, const Tensor& y, const Tensor& dy) { return Mul(dy, y); }
Tensor LogGrad(const Tensor& x, const Tensor&, const Tensor& dy) { return Div(dy, x); }
Tensor SqrtGrad(const Tensor&, const Tensor& y, const Tensor& dy) {
  return Div(dy, Mul(Scalar(2, y), y));
}
Tensor ReciprocalGrad(const Tensor&, const Tensor& y, const Tensor& dy) {
  return Call1("Neg", {Mul(dy, Mul(y, y))});
}
Tensor SinGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Mul(dy, Call1("Cos", {x}));
}
Tensor CosGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Call1("Neg", {Mul(dy, Call1("Sin", {x}))});
}
Tensor TanGrad(const Tensor&, const Tensor& y, const Tensor& dy) {
  return Mul(dy, Add(Scalar(1, y), Mul(y, y)));
}
Tensor AsinGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Div(dy, Call1("Sqrt", {OneMinusSquare(x)}));
}
Tensor AcosGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Call1("Neg", {Div(dy, Call1("Sqrt", {OneMinusSquare(x)}))});
}
Tensor AtanGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Div(dy, Add(Scalar(1, x), Mul(x, x)));
}
Tensor SinhGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Mul(dy, Call1("Cosh", {x}));
}
Tensor CoshGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Mul(dy, Call1("Sinh", {x}));
}
Tensor TanhGrad(const Tensor&, const Tensor& y, const Tensor& dy) {
  return Mul(dy, OneMinusSquare(y));
}
Tensor AsinhGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Div(dy, Call1("Sqrt", {Add(Mul(x, x), Scalar(1, x))}));
}
Tensor AcoshGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Div(dy, Call1("Sqrt", {Sub(Mul(x, x), Scalar(1, x))}));
}
Tensor AtanhGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Div(dy, OneMinusSquare(x));
}
// d/dx erf(x) = 2 / sqrt(pi) * e^(-x^2)
Tensor ErfGrad(const Tensor& x, const Tensor&, const Tensor& dy) {
  return Mul(dy, Mul(Scalar(M_2_SQRTPI, x), Call1("Exp", {Call1("Neg", {Mul(x, x)})})));
}
// Piecewise constant (Ceil, Floor, Round, Sign): zero almost everywhere.
Tensor ZeroGrad(const Tensor& x, const Tensor&, const Tensor&) { return grad::ZerosLike(x); }

}  // namespace

// Each registration is the oldest version with today's meaning (version 6
// dropped consumed_inputs; later versions only added dtypes).
// On a GPU every one runs the float kernel of cuda::Unary::kNAME.
#define SINGA_UNARY_OP(NAME, SINCE, IN, OUT, TYPES, GRAD, ...)                               \
  SINGA_REGISTER_OP(NAME, NoAttrs)                                                           \
      .since_opset(SINCE)                                                                    \
      .inputs({IN})                                                                          \
      .outputs({OUT})                                                                        \
      .dtypes(TYPES)                                                                         \
      .infer(SameAsInput(0))                                                                 \
      .kernel(UnaryForward<__VA_ARGS__>)                                                     \
          SINGA_CUDA_KERNEL(ops::CudaUnary<cuda::Unary::k##NAME, NoAttrs>, ops::kCudaFloats) \
      .backward(UnaryBackward<GRAD>)

SINGA_UNARY_OP(Abs, 6, "X", "Y", dtypes::kNumeric, AbsGrad, AbsOp, true);
SINGA_UNARY_OP(Neg, 6, "X", "Y", dtypes::kSignedNumeric, NegGrad, NegOp, true);
SINGA_UNARY_OP(Exp, 6, "input", "output", dtypes::kFloats, ExpGrad, ExpOp);
SINGA_UNARY_OP(Log, 6, "input", "output", dtypes::kFloats, LogGrad, LogOp);
SINGA_UNARY_OP(Sqrt, 6, "X", "Y", dtypes::kFloats, SqrtGrad, SqrtOp);
SINGA_UNARY_OP(Reciprocal, 6, "X", "Y", dtypes::kFloats, ReciprocalGrad, ReciprocalOp);
SINGA_UNARY_OP(Sin, 7, "input", "output", dtypes::kFloats, SinGrad, SinOp);
SINGA_UNARY_OP(Cos, 7, "input", "output", dtypes::kFloats, CosGrad, CosOp);
SINGA_UNARY_OP(Tan, 7, "input", "output", dtypes::kFloats, TanGrad, TanOp);
SINGA_UNARY_OP(Asin, 7, "input", "output", dtypes::kFloats, AsinGrad, AsinOp);
SINGA_UNARY_OP(Acos, 7, "input", "output", dtypes::kFloats, AcosGrad, AcosOp);
SINGA_UNARY_OP(Atan, 7, "input", "output", dtypes::kFloats, AtanGrad, AtanOp);
SINGA_UNARY_OP(Sinh, 9, "input", "output", dtypes::kFloats, SinhGrad, SinhOp);
SINGA_UNARY_OP(Cosh, 9, "input", "output", dtypes::kFloats, CoshGrad, CoshOp);
SINGA_UNARY_OP(Tanh, 6, "input", "output", dtypes::kFloats, TanhGrad, TanhOp);
SINGA_UNARY_OP(Asinh, 9, "input", "output", dtypes::kFloats, AsinhGrad, AsinhOp);
SINGA_UNARY_OP(Acosh, 9, "input", "output", dtypes::kFloats, AcoshGrad, AcoshOp);
SINGA_UNARY_OP(Atanh, 9, "input", "output", dtypes::kFloats, AtanhGrad, AtanhOp);
SINGA_UNARY_OP(Ceil, 6, "X", "Y", dtypes::kFloats, ZeroGrad, CeilOp);
SINGA_UNARY_OP(Floor, 6, "X", "Y", dtypes::kFloats, ZeroGrad, FloorOp);
SINGA_UNARY_OP(Round, 11, "X", "Y", dtypes::kFloats, ZeroGrad, RoundOp);
SINGA_UNARY_OP(Sign, 9, "input", "output", dtypes::kNumeric, ZeroGrad, SignOp, true);
SINGA_UNARY_OP(Erf, 9, "input", "output", dtypes::kFloats, ErfGrad, ErfOp);
#undef SINGA_UNARY_OP

SINGA_REGISTER_OP(IsNaN, NoAttrs)
    .since_opset(9)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(FloatsAndFloat8())
    .infer(BoolLikeInput<NoAttrs>)
    .kernel(IsNaNForward);
SINGA_REGISTER_OP(IsInf, IsInfAttrs)
    .since_opset(10)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("detect_negative", &IsInfAttrs::detect_negative)
    .attr("detect_positive", &IsInfAttrs::detect_positive)
    .dtypes(FloatsAndFloat8())
    .infer(BoolLikeInput<IsInfAttrs>)
    .kernel(IsInfForward);

}  // namespace singa
