// Pow: Z = X ^ Y elementwise with numpy broadcasting; Z has X's dtype, Y may
// be any numeric dtype. Integer ^ integer is exact (repeated squaring,
// wrapping like C unsigned arithmetic); a negative integer exponent gives
// 1 / x^|y| truncated (0 unless |x| == 1). Other pairs compute in float
// (or double when either side is double or an integer meets a float) and
// round once. Opset 1 has the older `broadcast`/`axis` broadcasting
// (ops/legacy_broadcast.h).
// https://onnx.ai/onnx/operators/onnx__Pow.html
#include <cmath>

#include "ops/common.h"
#include "ops/grad_util.h"
#include "ops/legacy_broadcast.h"

namespace singa {
namespace {

int64_t IntPow(int64_t base, int64_t exp) {
  if (exp < 0) {
    if (base == 1) return 1;
    if (base == -1) return exp % 2 == 0 ? 1 : -1;
    return 0;
  }
  uint64_t result = 1, b = static_cast<uint64_t>(base);
  for (uint64_t e = static_cast<uint64_t>(exp); e; e >>= 1) {
    if (e & 1) result *= b;
    b *= b;
  }
  return static_cast<int64_t>(result);
}

template <class TX, class TY>
TX PowValue(TX x, TY y) {
  if constexpr (std::is_integral_v<TX> && std::is_integral_v<TY>) {
    int64_t e = static_cast<int64_t>(y);
    // A uint64 exponent above INT64_MAX keeps its parity (all that matters then).
    if constexpr (std::is_same_v<TY, uint64_t>)
      if (y > uint64_t(INT64_MAX)) e = INT64_MAX - 1 + static_cast<int64_t>(y & 1);
    return static_cast<TX>(IntPow(static_cast<int64_t>(x), e));
  } else if constexpr (std::is_same_v<Acc<TX>, float> && std::is_same_v<Acc<TY>, float>) {
    return static_cast<TX>(std::pow(static_cast<float>(x), static_cast<float>(y)));
  } else {
    return static_cast<TX>(std::pow(static_cast<double>(static_cast<Acc<TX>>(x)),
                                    static_cast<double>(static_cast<Acc<TY>>(y))));
  }
}

void PowForward(KernelCtx& k, const NoAttrs&) {
  VisitNumeric(k.input(0).dtype(), [&]<class TX>(Tag<TX>) {
    VisitNumeric(k.input(1).dtype(), [&]<class TY>(Tag<TY>) {
      cpu::Binary<TX, TY, TX>(k.input(0), k.input(1), k.output(0),
                              [](TX x, TY y) { return PowValue(x, y); });
    });
  });
}

SpecList Infer(const InferCtx& c, const NoAttrs&) { return ops::BroadcastSpec(c); }

const std::vector<DType> kBaseTypes = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                       DType::kFloat64, DType::kInt32,    DType::kInt64};

// Backward: dX = dZ * Y * X^(Y-1) (0 where Y == 0, also at X == 0);
// dY = dZ * Z * ln X (0 where X == 0, the limit for Y > 0).
// A is NoAttrs (numpy broadcasting) or the legacy attributes (ops::BroadcastB).
template <class A>
TensorList PowBackward(const GradCtx& g, const A& a) {
  using grad::Mul, grad::Sub, grad::Where, grad::Scalar;
  const Tensor &x = g.input(0), &dz = g.grad_output(0);
  TensorList d(2);
  if (g.needs_grad(0)) {
    const Tensor y = Call1("CastLike", {ops::BroadcastB(g, a), x});
    const Tensor slope = Mul(y, Call1("Pow", {x, Sub(y, Scalar(1, y))}));
    const Tensor zero = Scalar(0, x);
    d[0] = ops::SumToShape(Mul(dz, Where(Call1("Equal", {y, zero}), zero, slope)), x.shape());
  }
  if (g.needs_grad(1)) {
    const Tensor& y = g.input(1);
    const Tensor zero = Scalar(0, x);
    const Tensor dy =
        Where(Call1("Equal", {x, zero}), zero, Mul(Mul(dz, g.output(0)), Call1("Log", {x})));
    d[1] = ops::SumToB(Call1("CastLike", {dy, y}), g, a);
  }
  return d;
}

}  // namespace

// Version 7 brought broadcasting; 12 let Y's dtype differ from X's, which
// this registration accepts for every version (13 and 15 only added dtypes).
SINGA_REGISTER_OP(Pow, NoAttrs)
    .since_opset(7)
    .inputs({"X", "Y"})
    .outputs({"Z"})
    .dtypes(kBaseTypes, {0})
    .dtypes(dtypes::kNumeric, {1})
    .infer(Infer)
    .kernel(PowForward)
    .backward(PowBackward<NoAttrs>);
SINGA_REGISTER_OP(Pow, ops::LegacyBroadcastAttrs)
    .since_opset(1)
    .inputs({"X", "Y"})
    .outputs({"Z"})
    .attr("broadcast", &ops::LegacyBroadcastAttrs::broadcast)
    .attr("axis", &ops::LegacyBroadcastAttrs::axis)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(ops::LegacyBroadcastInfer)
    .kernel([](KernelCtx& k, const ops::LegacyBroadcastAttrs& a) {
      ops::RunLegacyBroadcast(k, a, "Pow", PowForward);
    })
    .backward(PowBackward<ops::LegacyBroadcastAttrs>)
    .upgrade(ops::LegacyBroadcastUpgrade);

}  // namespace singa
