// Elementwise activations: Relu LeakyRelu PRelu Elu Selu Celu Sigmoid
// HardSigmoid HardSwish Softplus Softsign ThresholdedRelu Clip Gelu Mish Shrink.
// Float dtypes compute in Acc<T> and round once. Where a oneDNN eltwise
// algorithm computes exactly the ONNX formula, the fast kernel runs it for
// float32/bfloat16/float16 and falls back to the loop (the registered
// reference kernel) otherwise.
// https://onnx.ai/onnx/operators/onnx__Relu.html (and onnx__<Op>.html for each)
#include <cmath>
#include <limits>

#include "kernels/cpu/dnnl_eltwise.h"
#include "ops/common.h"

namespace singa {
namespace {

using dnnl::algorithm;

// y = f(x) for a float x, computed in Acc<T>; f takes float or double.
template <class F>
void FloatMap(const Tensor& x, const Tensor& y, F f) {
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    cpu::Unary<T, T>(x, y, [&](T v) { return static_cast<T>(f(static_cast<Acc<T>>(v))); });
  });
}

// y = f(x) for any numeric x (integers compute in their own type).
template <class F>
void NumericMap(const Tensor& x, const Tensor& y, F f) {
  VisitNumeric(x.dtype(), [&]<class T>(Tag<T>) {
    cpu::Unary<T, T>(x, y, [&](T v) { return static_cast<T>(f(static_cast<Acc<T>>(v))); });
  });
}

// The fast kernel of an op whose ONNX formula is oneDNN's `alg`.
template <class A>
void EltwiseOr(KernelCtx& k, const A& a, algorithm alg, float alpha, float beta,
               void (*reference)(KernelCtx&, const A&)) {
  if (!cpu::DnnlEltwise(alg, alpha, beta, k.input(0), k.output(0))) reference(k, a);
}

template <class V>
V Softplus(V v) {  // log(1 + e^v) without overflow for large v
  return v > 0 ? v + std::log1p(std::exp(-v)) : std::log1p(std::exp(v));
}

// ---- Relu -------------------------------------------------------------------
void ReluRef(KernelCtx& k, const NoAttrs&) {
  NumericMap(k.input(0), k.output(0), [](auto v) { return v > 0 ? v : decltype(v)(0); });
}
void ReluFast(KernelCtx& k, const NoAttrs& a) {
  EltwiseOr(k, a, algorithm::eltwise_relu, 0.f, 0.f, ReluRef);
}

// ---- LeakyRelu ----------------------------------------------------------------
struct LeakyReluAttrs {
  float alpha = 0.01f;
};
void LeakyReluRef(KernelCtx& k, const LeakyReluAttrs& a) {
  FloatMap(k.input(0), k.output(0), [&](auto v) { return v < 0 ? decltype(v)(a.alpha) * v : v; });
}
void LeakyReluFast(KernelCtx& k, const LeakyReluAttrs& a) {
  EltwiseOr(k, a, algorithm::eltwise_relu, a.alpha, 0.f, LeakyReluRef);
}

// ---- PRelu: y = x > 0 ? x : slope * x, slope broadcast to x ----------------------
void PReluForward(KernelCtx& k, const NoAttrs&) {
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    cpu::Binary<T, T, T>(k.input(0), k.input(1), k.output(0), [](T x, T s) {
      const Acc<T> v = x;
      return v > 0 ? x : static_cast<T>(static_cast<Acc<T>>(s) * v);
    });
  });
}
SpecList PReluInfer(const InferCtx& c, const NoAttrs&) {
  Shape b = BroadcastShapes(c.shape(0), c.shape(1), c.where());
  SINGA_CHECK(b == c.shape(0), ShapeError,
              c.where() << ": slope must broadcast to X's shape (" << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}

// ---- Elu, Selu, Celu -----------------------------------------------------------
struct EluAttrs {
  float alpha = 1.0f;
};
void EluRef(KernelCtx& k, const EluAttrs& a) {
  FloatMap(k.input(0), k.output(0),
           [&](auto v) { return v < 0 ? decltype(v)(a.alpha) * std::expm1(v) : v; });
}
void EluFast(KernelCtx& k, const EluAttrs& a) {
  EltwiseOr(k, a, algorithm::eltwise_elu, a.alpha, 0.f, EluRef);
}

struct SeluAttrs {
  float alpha = 1.67326319217681884765625f;
  float gamma = 1.05070102214813232421875f;
};
void SeluRef(KernelCtx& k, const SeluAttrs& a) {
  FloatMap(k.input(0), k.output(0), [&](auto v) {
    using V = decltype(v);
    return V(a.gamma) * (v > 0 ? v : V(a.alpha) * std::expm1(v));
  });
}
void SeluFast(KernelCtx& k, const SeluAttrs& a) {
  // elu(alpha), then scale by gamma in place.
  if (!cpu::DnnlEltwise(algorithm::eltwise_elu, a.alpha, 0.f, k.input(0), k.output(0)) ||
      !cpu::DnnlEltwise(algorithm::eltwise_linear, a.gamma, 0.f, k.output(0), k.output(0)))
    SeluRef(k, a);
}

void CeluForward(KernelCtx& k, const EluAttrs& a) {
  FloatMap(k.input(0), k.output(0), [&](auto v) {
    using V = decltype(v);
    return v > 0 ? v : V(a.alpha) * std::expm1(v / V(a.alpha));
  });
}

// ---- Sigmoid, HardSigmoid, HardSwish -------------------------------------------
void SigmoidRef(KernelCtx& k, const NoAttrs&) {
  FloatMap(k.input(0), k.output(0), [](auto v) { return 1 / (1 + std::exp(-v)); });
}
void SigmoidFast(KernelCtx& k, const NoAttrs& a) {
  EltwiseOr(k, a, algorithm::eltwise_logistic, 0.f, 0.f, SigmoidRef);
}

struct HardSigmoidAttrs {
  float alpha = 0.2f;
  float beta = 0.5f;
};
template <class V>
V HardSigmoid(V v, float alpha, float beta) {
  return std::max(V(0), std::min(V(1), V(alpha) * v + V(beta)));
}
void HardSigmoidRef(KernelCtx& k, const HardSigmoidAttrs& a) {
  FloatMap(k.input(0), k.output(0), [&](auto v) { return HardSigmoid(v, a.alpha, a.beta); });
}
void HardSigmoidFast(KernelCtx& k, const HardSigmoidAttrs& a) {
  EltwiseOr(k, a, algorithm::eltwise_hardsigmoid, a.alpha, a.beta, HardSigmoidRef);
}

// NOTE: the spec defines HardSwish through HardSigmoid with alpha = 1/6 as a
// float attribute, so alpha is the float nearest 1/6 in every dtype.
constexpr float kHardSwishAlpha = 1.0f / 6.0f;
void HardSwishRef(KernelCtx& k, const NoAttrs&) {
  FloatMap(k.input(0), k.output(0),
           [](auto v) { return v * HardSigmoid(v, kHardSwishAlpha, 0.5f); });
}
void HardSwishFast(KernelCtx& k, const NoAttrs& a) {
  EltwiseOr(k, a, algorithm::eltwise_hardswish, kHardSwishAlpha, 0.5f, HardSwishRef);
}

// ---- Softplus, Softsign, ThresholdedRelu, Mish -------------------------------------
void SoftplusRef(KernelCtx& k, const NoAttrs&) {
  FloatMap(k.input(0), k.output(0), [](auto v) { return Softplus(v); });
}
void SoftplusFast(KernelCtx& k, const NoAttrs& a) {
  // soft_relu with alpha 1 is log(1 + e^x).
  EltwiseOr(k, a, algorithm::eltwise_soft_relu, 1.f, 0.f, SoftplusRef);
}

void SoftsignForward(KernelCtx& k, const NoAttrs&) {
  FloatMap(k.input(0), k.output(0), [](auto v) { return v / (1 + std::abs(v)); });
}

struct ThresholdedReluAttrs {
  float alpha = 1.0f;
};
void ThresholdedReluForward(KernelCtx& k, const ThresholdedReluAttrs& a) {
  FloatMap(k.input(0), k.output(0),
           [&](auto v) { return v > decltype(v)(a.alpha) ? v : decltype(v)(0); });
}

void MishRef(KernelCtx& k, const NoAttrs&) {
  FloatMap(k.input(0), k.output(0), [](auto v) { return v * std::tanh(Softplus(v)); });
}
void MishFast(KernelCtx& k, const NoAttrs& a) {
  EltwiseOr(k, a, algorithm::eltwise_mish, 0.f, 0.f, MishRef);
}

// ---- Gelu ---------------------------------------------------------------------------
struct GeluAttrs {
  std::string approximate = "none";
};
void GeluRef(KernelCtx& k, const GeluAttrs& a) {
  if (a.approximate == "tanh") {
    FloatMap(k.input(0), k.output(0), [](auto v) {
      using V = decltype(v);
      const V c = std::sqrt(V(2) / V(M_PI));
      return V(0.5) * v * (1 + std::tanh(c * (v + V(0.044715) * v * v * v)));
    });
  } else {
    FloatMap(k.input(0), k.output(0), [](auto v) {
      using V = decltype(v);
      return V(0.5) * v * (1 + std::erf(v / std::sqrt(V(2))));
    });
  }
}
void GeluFast(KernelCtx& k, const GeluAttrs& a) {
  EltwiseOr(k, a,
            a.approximate == "tanh" ? algorithm::eltwise_gelu_tanh : algorithm::eltwise_gelu_erf,
            0.f, 0.f, GeluRef);
}
SpecList GeluInfer(const InferCtx& c, const GeluAttrs& a) {
  SINGA_CHECK(a.approximate == "none" || a.approximate == "tanh", ShapeError,
              c.where() << ": approximate must be 'none' or 'tanh', got '" << a.approximate << "'");
  return {{c.dtype(0), c.shape(0)}};
}

// ---- Shrink ------------------------------------------------------------------------
struct ShrinkAttrs {
  float bias = 0.0f;
  float lambd = 0.5f;
};
void ShrinkForward(KernelCtx& k, const ShrinkAttrs& a) {
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    // NOTE: integers compute in double and truncate, as the spec's
    // reference (numpy) does.
    using V = std::conditional_t<std::is_integral_v<T>, double, Acc<T>>;
    const V lambd = a.lambd, bias = a.bias;
    cpu::Unary<T, T>(k.input(0), k.output(0), [&](T x) {
      const V v = static_cast<V>(static_cast<Acc<T>>(x));
      const V r = v < -lambd ? v + bias : v > lambd ? v - bias : V(0);
      if constexpr (std::is_integral_v<T>)
        return static_cast<T>(static_cast<int64_t>(r));
      else
        return static_cast<T>(r);
    });
  });
}

// ---- Clip ---------------------------------------------------------------------------
// y = min(max(x, lo), hi); lo > hi gives hi everywhere (as numpy.clip).
template <class T>
void ClipLoop(const Tensor& x, const Tensor& y, Acc<T> lo, Acc<T> hi) {
  cpu::Unary<T, T>(x, y, [=](T v) {
    Acc<T> t = v;
    t = t < lo ? lo : t;
    return static_cast<T>(t > hi ? hi : t);
  });
}

struct Clip6Attrs {
  float min = std::numeric_limits<float>::lowest();
  float max = std::numeric_limits<float>::max();
};

// Bounds come from the min/max inputs (opset 11; absent = unbounded) or from
// the attributes (opset 6, `attrs` set). `fast` tries oneDNN's clip_v2 first.
void ClipRun(KernelCtx& k, const Tensor* lo_t, const Tensor* hi_t, const Clip6Attrs* attrs,
             bool fast) {
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    A lo = std::is_floating_point_v<A> ? -std::numeric_limits<A>::infinity()
                                       : std::numeric_limits<A>::lowest();
    A hi = std::is_floating_point_v<A> ? std::numeric_limits<A>::infinity()
                                       : std::numeric_limits<A>::max();
    if (attrs) {
      lo = static_cast<A>(attrs->min);
      hi = static_cast<A>(attrs->max);
    }
    if (lo_t) lo = lo_t->Item<A>();
    if (hi_t) hi = hi_t->Item<A>();
    if constexpr (std::is_same_v<A, float>) {
      // oneDNN's clip_v2 differs from numpy.clip only when lo > hi.
      if (fast && lo <= hi &&
          cpu::DnnlEltwise(algorithm::eltwise_clip_v2, lo, hi, k.input(0), k.output(0)))
        return;
    }
    ClipLoop<T>(k.input(0), k.output(0), lo, hi);
  });
}

void Clip6Ref(KernelCtx& k, const Clip6Attrs& a) { ClipRun(k, nullptr, nullptr, &a, false); }
void Clip6Fast(KernelCtx& k, const Clip6Attrs& a) { ClipRun(k, nullptr, nullptr, &a, true); }

const Tensor* Bound(const KernelCtx& k, int i) { return k.has_input(i) ? &k.input(i) : nullptr; }
void Clip11Ref(KernelCtx& k, const NoAttrs&) {
  ClipRun(k, Bound(k, 1), Bound(k, 2), nullptr, false);
}
void Clip11Fast(KernelCtx& k, const NoAttrs&) {
  ClipRun(k, Bound(k, 1), Bound(k, 2), nullptr, true);
}
SpecList Clip11Infer(const InferCtx& c, const NoAttrs&) {
  for (int i : {1, 2})
    SINGA_CHECK(!c.has_input(i) || c.input(i).numel() == 1, ShapeError,
                c.where() << ": min and max must be scalars (" << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}

std::vector<DType> PReluTypes() {
  std::vector<DType> t = dtypes::kFloats;
  t.insert(t.end(), {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64});
  return t;
}
std::vector<DType> ShrinkTypes() {
  std::vector<DType> t = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
  t.insert(t.end(), dtypes::kInts.begin(), dtypes::kInts.end());
  return t;
}

}  // namespace

SINGA_REGISTER_OP(Relu, NoAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kSignedNumeric)
    .infer(SameAsInput(0))
    .kernel(ReluFast)
    .reference(ReluRef);
SINGA_REGISTER_OP(LeakyRelu, LeakyReluAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &LeakyReluAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(LeakyReluFast)
    .reference(LeakyReluRef);
SINGA_REGISTER_OP(PRelu, NoAttrs)
    .since_opset(7)
    .inputs({"X", "slope"})
    .outputs({"Y"})
    .dtypes(PReluTypes(), {0, 1})
    .infer(PReluInfer)
    .kernel(PReluForward);
SINGA_REGISTER_OP(Elu, EluAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &EluAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(EluFast)
    .reference(EluRef);
SINGA_REGISTER_OP(Selu, SeluAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &SeluAttrs::alpha)
    .attr("gamma", &SeluAttrs::gamma)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SeluFast)
    .reference(SeluRef);
SINGA_REGISTER_OP(Celu, EluAttrs)
    .since_opset(12)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &EluAttrs::alpha)
    .dtypes({DType::kFloat32})
    .infer(SameAsInput(0))
    .kernel(CeluForward);
SINGA_REGISTER_OP(Sigmoid, NoAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SigmoidFast)
    .reference(SigmoidRef);
SINGA_REGISTER_OP(HardSigmoid, HardSigmoidAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &HardSigmoidAttrs::alpha)
    .attr("beta", &HardSigmoidAttrs::beta)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(HardSigmoidFast)
    .reference(HardSigmoidRef);
SINGA_REGISTER_OP(HardSwish, NoAttrs)
    .since_opset(14)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(HardSwishFast)
    .reference(HardSwishRef);
SINGA_REGISTER_OP(Softplus, NoAttrs)
    .since_opset(1)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SoftplusFast)
    .reference(SoftplusRef);
SINGA_REGISTER_OP(Softsign, NoAttrs)
    .since_opset(1)
    .inputs({"input"})
    .outputs({"output"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SoftsignForward);
SINGA_REGISTER_OP(ThresholdedRelu, ThresholdedReluAttrs)
    .since_opset(10)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &ThresholdedReluAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(ThresholdedReluForward);
SINGA_REGISTER_OP(Mish, NoAttrs)
    .since_opset(18)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(MishFast)
    .reference(MishRef);
SINGA_REGISTER_OP(Gelu, GeluAttrs)
    .since_opset(20)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("approximate", &GeluAttrs::approximate)
    .dtypes(dtypes::kFloats)
    .infer(GeluInfer)
    .kernel(GeluFast)
    .reference(GeluRef);
SINGA_REGISTER_OP(Shrink, ShrinkAttrs)
    .since_opset(9)
    .inputs({"input"})
    .outputs({"output"})
    .attr("bias", &ShrinkAttrs::bias)
    .attr("lambd", &ShrinkAttrs::lambd)
    .dtypes(ShrinkTypes())
    .infer(SameAsInput(0))
    .kernel(ShrinkForward);
SINGA_REGISTER_OP(Clip, Clip6Attrs)
    .since_opset(6)
    .inputs({"input"})
    .outputs({"output"})
    .attr("min", &Clip6Attrs::min)
    .attr("max", &Clip6Attrs::max)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(Clip6Fast)
    .reference(Clip6Ref);
SINGA_REGISTER_OP(Clip, NoAttrs)
    .since_opset(11)
    .inputs({"input", "min?", "max?"})
    .outputs({"output"})
    .dtypes(dtypes::kNumeric, {0, 1, 2})
    .infer(Clip11Infer)
    .kernel(Clip11Fast)
    .reference(Clip11Ref);

}  // namespace singa
