// Elementwise activations: Relu LeakyRelu PRelu Elu Selu Celu Sigmoid
// HardSigmoid HardSwish Softplus Softsign ThresholdedRelu Clip Gelu Mish Shrink.
// Float dtypes compute in Acc<T> and round once. Where a oneDNN eltwise
// algorithm computes exactly the ONNX formula, the fast kernel runs it for
// float32/bfloat16/float16 and falls back to the loop (the registered
// reference kernel) otherwise.
// https://onnx.ai/onnx/operators/onnx__Relu.html (and onnx__<Op>.html for each)
#include <array>
#include <cmath>
#include <limits>

#include "kernels/cpu/dnnl_eltwise.h"
#include "ops/common.h"
#include "ops/grad_util.h"

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

// The fast kernel of an op whose ONNX formula is oneDNN's `alg`. A tensor
// of up to kLoopElements runs the loop: a oneDNN call (its cache key, memory
// objects, execution) costs about 2 us, more than the loop over that many
// elements (a streaming model's 64-element gates and 1-element output).
constexpr int64_t kLoopElements = 256;
template <class A>
void EltwiseOr(KernelCtx& k, const A& a, algorithm alg, float alpha, float beta,
               void (*reference)(KernelCtx&, const A&)) {
  if (k.input(0).numel() <= kLoopElements ||
      !cpu::DnnlEltwise(alg, alpha, beta, k.input(0), k.output(0)))
    reference(k, a);
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
// Before opset 7 a 1-D slope of X's channel count (dim 1) is per channel,
// whatever numpy broadcasting would make of it; it is viewed as [C, 1, ...].
struct PRelu6Attrs {
  std::vector<int64_t> consumed_inputs;  // opset 1: an in-place hint, ignored
};
Shape SlopeShape(const Shape& x, const Shape& slope, const NoAttrs&) { return slope; }
Shape SlopeShape(const Shape& x, const Shape& slope, const PRelu6Attrs&) {
  if (slope.size() != 1 || x.size() < 2 || slope[0] != x[1]) return slope;
  Shape s(x.size() - 1, 1);
  s[0] = x[1];
  return s;
}
template <class A>
SpecList PReluInfer(const InferCtx& c, const A& a) {
  Shape b = BroadcastShapes(c.shape(0), SlopeShape(c.shape(0), c.shape(1), a), c.where());
  SINGA_CHECK(b == c.shape(0), ShapeError,
              c.where() << ": slope must broadcast to X's shape (" << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}
void PRelu6Forward(KernelCtx& k, const PRelu6Attrs& a) {
  std::array<Tensor, 2> in = {
      k.input(0), k.input(1).Reshape(SlopeShape(k.input(0).shape(), k.input(1).shape(), a))};
  KernelCtx k2{in, k.outputs};
  PReluForward(k2, NoAttrs{});
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
// NOTE: no oneDNN kernel: its soft_relu and mish lose relative precision
// where softplus is small (measured in float32: 1.9e-2 relative error for
// Softplus at x = -8, 1.3e-3 for Mish), which the expanded Mish of the ONNX
// suite sees; the loop is within an ulp or two.
void SoftplusForward(KernelCtx& k, const NoAttrs&) {
  FloatMap(k.input(0), k.output(0), [](auto v) { return Softplus(v); });
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

void MishForward(KernelCtx& k, const NoAttrs&) {
  FloatMap(k.input(0), k.output(0), [](auto v) { return v * std::tanh(Softplus(v)); });
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
#if SINGA_CUDA
// y = min(max(x, lo), hi): one pass for floats, two broadcasting ones for
// integers; an undefined bound is none.
void ClipCuda(const KernelCtx& k, const Tensor& lo, const Tensor& hi) {
  const Tensor &x = k.input(0), &y = k.output(0);
  if (IsFloat(x.dtype())) return cuda::Clip(x, lo, hi, y);
  if (!lo.defined() && !hi.defined()) return cuda::Copy(x, y);
  if (lo.defined()) cuda::BinaryOp(cuda::Binary::kMax, x, lo, y);
  if (hi.defined()) cuda::BinaryOp(cuda::Binary::kMin, lo.defined() ? y : x, hi, y);
}
void Clip6Cuda(KernelCtx& k, const Clip6Attrs& a) {
  const DType dt = k.input(0).dtype();
  const Device dev = k.input(0).device();
  ClipCuda(k, Tensor::Full({}, a.min, dt, dev), Tensor::Full({}, a.max, dt, dev));
}
void Clip11Cuda(KernelCtx& k, const NoAttrs&) {
  ClipCuda(k, k.has_input(1) ? k.input(1) : Tensor(), k.has_input(2) ? k.input(2) : Tensor());
}
#endif

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

// ---- Backward -----------------------------------------------------------------
// Each returns dL/dX (and dL/dslope, dL/dmin, dL/dmax) from dY, with framework
// ops. At a kink (Relu at 0, Clip at a bound) the gradient of the branch the
// forward took is used.
using grad::Add, grad::Sub, grad::Mul, grad::Div, grad::Greater, grad::Less, grad::And, grad::Not,
    grad::Where, grad::Scalar, grad::Masked;

TensorList ReluBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& x = g.input(0);
  return {Masked(Greater(x, Scalar(0, x)), g.grad_output(0))};
}
TensorList LeakyReluBackward(const GradCtx& g, const LeakyReluAttrs& a) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  return {Where(Less(x, Scalar(0, x)), Mul(dy, Scalar(a.alpha, dy)), dy)};
}
template <class A>
TensorList PReluBackward(const GradCtx& g, const A& a) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  const Tensor slope = g.input(1).Reshape(SlopeShape(x.shape(), g.input(1).shape(), a));
  const Tensor pos = Greater(x, Scalar(0, x));
  TensorList d(2);
  if (g.needs_grad(0)) d[0] = Where(pos, dy, Mul(dy, slope));
  if (g.needs_grad(1))
    d[1] = ops::SumToShape(Where(pos, Scalar(0, dy), Mul(dy, x)), slope.shape())
               .Reshape(g.input(1).shape());
  return d;
}
// x < 0: y = alpha * (e^x - 1), so dy/dx = y + alpha.
TensorList EluBackward(const GradCtx& g, const EluAttrs& a) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  return {Where(Less(x, Scalar(0, x)), Mul(dy, Add(g.output(0), Scalar(a.alpha, x))), dy)};
}
TensorList SeluBackward(const GradCtx& g, const SeluAttrs& a) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  const Tensor neg = Mul(Call1("Exp", {x}), Scalar(double(a.gamma) * a.alpha, x));
  return {Mul(dy, Where(Greater(x, Scalar(0, x)), Scalar(a.gamma, x), neg))};
}
TensorList CeluBackward(const GradCtx& g, const EluAttrs& a) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  const Tensor neg = Mul(dy, Call1("Exp", {Div(x, Scalar(a.alpha, x))}));
  return {Where(Greater(x, Scalar(0, x)), dy, neg)};
}
TensorList SigmoidBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& y = g.output(0);
  return {Mul(g.grad_output(0), Mul(y, Sub(Scalar(1, y), y)))};
}
// Inside the linear part (0 < y < 1) the slope is alpha; flat outside.
Tensor Inside01(const Tensor& y) { return And(Greater(y, Scalar(0, y)), Less(y, Scalar(1, y))); }
TensorList HardSigmoidBackward(const GradCtx& g, const HardSigmoidAttrs& a) {
  const Tensor& dy = g.grad_output(0);
  return {Masked(Inside01(g.output(0)), Mul(dy, Scalar(a.alpha, dy)))};
}
// y = x * h(x), h = HardSigmoid(1/6, 1/2): dy/dx = h + x * h'(x).
TensorList HardSwishBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  const Tensor h = Call1("HardSigmoid", {x}, {{"alpha", kHardSwishAlpha}, {"beta", 0.5f}});
  const Tensor slope = Masked(Inside01(h), Mul(x, Scalar(kHardSwishAlpha, x)));
  return {Mul(dy, Add(h, slope))};
}
TensorList SoftplusBackward(const GradCtx& g, const NoAttrs&) {
  return {Mul(g.grad_output(0), Call1("Sigmoid", {g.input(0)}))};
}
// d/dx x / (1 + |x|) = 1 / (1 + |x|)^2
TensorList SoftsignBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& x = g.input(0);
  const Tensor t = Add(Scalar(1, x), Call1("Abs", {x}));
  return {Div(g.grad_output(0), Mul(t, t))};
}
TensorList ThresholdedReluBackward(const GradCtx& g, const ThresholdedReluAttrs& a) {
  const Tensor& x = g.input(0);
  return {Masked(Greater(x, Scalar(a.alpha, x)), g.grad_output(0))};
}
// y = x * tanh(sp), sp = softplus(x): dy/dx = tanh(sp) + x * (1 - tanh(sp)^2) * sigmoid(x).
TensorList MishBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& x = g.input(0);
  const Tensor t = Call1("Tanh", {Call1("Softplus", {x})});
  const Tensor sech2 = Sub(Scalar(1, x), Mul(t, t));
  return {Mul(g.grad_output(0), Add(t, Mul(Mul(x, sech2), Call1("Sigmoid", {x}))))};
}
TensorList GeluBackward(const GradCtx& g, const GeluAttrs& a) {
  const Tensor& x = g.input(0);
  Tensor d;
  if (a.approximate == "tanh") {
    // u = c (x + k x^3), y = x (1 + tanh u) / 2:
    // dy/dx = (1 + t) / 2 + x (1 - t^2) c (1 + 3 k x^2) / 2.
    const double c = std::sqrt(2 / M_PI), kc = 0.044715;
    const Tensor x2 = Mul(x, x);
    const Tensor u = Mul(Scalar(c, x), Add(x, Mul(Scalar(kc, x), Mul(x2, x))));
    const Tensor t = Call1("Tanh", {u});
    const Tensor du = Mul(Scalar(c, x), Add(Scalar(1, x), Mul(Scalar(3 * kc, x), x2)));
    d = Mul(Scalar(0.5, x),
            Add(Add(Scalar(1, x), t), Mul(Mul(x, Sub(Scalar(1, x), Mul(t, t))), du)));
  } else {
    // dy/dx = Phi(x) + x phi(x)
    const Tensor cdf =
        Mul(Scalar(0.5, x), Add(Scalar(1, x), Call1("Erf", {Mul(x, Scalar(M_SQRT1_2, x))})));
    const Tensor pdf = Mul(Scalar(0.5 * M_2_SQRTPI * M_SQRT1_2, x),
                           Call1("Exp", {Mul(Scalar(-0.5, x), Mul(x, x))}));
    d = Add(cdf, Mul(x, pdf));
  }
  return {Mul(g.grad_output(0), d)};
}

// Clip: X passes where lo <= x <= hi (ClipGrad); the bounds get the rest (lo
// where x < lo unless lo > hi, hi where max(x, lo) > hi).
TensorList ClipGrads(const GradCtx& g, const Tensor& lo, const Tensor& hi, bool want_lo,
                     bool want_hi) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  TensorList d(g.num_inputs());
  static const OpSchema& grad = OpRegistry::Get("ClipGrad", kLatestOpset, "ai.singa");
  if (g.needs_grad(0)) d[0] = RunOp(grad, TensorList{dy, x, lo, hi}, NoAttrs{})[0];
  if (!want_lo && !want_hi) return d;
  const Tensor below = Less(x, lo);
  const Tensor raised = Where(below, lo, x);
  const Tensor above = Greater(raised, hi);
  if (want_lo) d[1] = ops::SumToShape(Masked(And(below, Not(above)), dy), g.input(1).shape());
  if (want_hi) d[2] = ops::SumToShape(Masked(above, dy), g.input(2).shape());
  return d;
}
// ClipGrad (domain ai.singa): (dY, X, min, max) -> dX = dY where Clip passed
// X unchanged (neither x < min nor max(x, min) > max), else 0.
void ClipGradForward(KernelCtx& k, const NoAttrs&) {
  VisitNumeric(k.input(1).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const A lo = k.input(2).Item<A>(), hi = k.input(3).Item<A>();
    const Tensor dy = k.input(0).Contiguous(), x = k.input(1).Contiguous();
    const T* pdy = dy.data<T>();
    const T* px = x.data<T>();
    T* pdx = k.output(0).data<T>();
    ParallelFor(0, x.numel(), cpu::kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        const A v = static_cast<A>(px[i]);
        const bool below = v < lo;
        pdx[i] = below || (below ? lo : v) > hi ? T(0) : pdy[i];
      }
    });
  });
}

TensorList Clip6Backward(const GradCtx& g, const Clip6Attrs& a) {
  const Tensor& x = g.input(0);
  return ClipGrads(g, Scalar(a.min, x), Scalar(a.max, x), false, false);
}
TensorList Clip11Backward(const GradCtx& g, const NoAttrs&) {
  const Tensor& x = g.input(0);
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor lo = g.has_input(1) ? g.input(1).Reshape({}) : Scalar(-inf, x);
  const Tensor hi = g.has_input(2) ? g.input(2).Reshape({}) : Scalar(inf, x);
  return ClipGrads(g, lo, hi, g.has_input(1) && g.needs_grad(1), g.has_input(2) && g.needs_grad(2));
}

}  // namespace

SINGA_REGISTER_OP(Relu, NoAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kSignedNumeric)
    .infer(SameAsInput(0))
    .kernel(ReluFast)
        SINGA_CUDA_KERNEL(ops::CudaUnary<cuda::Unary::kRelu, NoAttrs>, ops::kCudaFloats)
    .reference(ReluRef)
    .backward(ReluBackward);
SINGA_REGISTER_OP(LeakyRelu, LeakyReluAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &LeakyReluAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(LeakyReluFast) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const LeakyReluAttrs& a) {
          cuda::UnaryOp(cuda::Unary::kLeakyRelu, k.input(0), k.output(0), a.alpha);
        },
        ops::kCudaFloats)
    .reference(LeakyReluRef)
    .backward(LeakyReluBackward);
SINGA_REGISTER_OP(PRelu, NoAttrs)
    .since_opset(7)
    .inputs({"X", "slope"})
    .outputs({"Y"})
    .dtypes(PReluTypes(), {0, 1})
    .infer(PReluInfer<NoAttrs>)
    .kernel(PReluForward)
    .backward(PReluBackward<NoAttrs>);
[[maybe_unused]] static const bool kPRelu6 =
    RegisterVersions<PRelu6Attrs>("PRelu", {1, 6}, [](OpBuilder<PRelu6Attrs>& b, int v) {
      b.inputs({"X", "slope"})
          .outputs({"Y"})
          .dtypes(dtypes::kFloats, {0, 1})
          .infer(PReluInfer<PRelu6Attrs>)
          .kernel(PRelu6Forward)
          .backward(PReluBackward<PRelu6Attrs>);
      if (v == 1) b.attr("consumed_inputs", &PRelu6Attrs::consumed_inputs);
    });
SINGA_REGISTER_OP(Elu, EluAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &EluAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(EluFast) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const EluAttrs& a) {
          cuda::UnaryOp(cuda::Unary::kElu, k.input(0), k.output(0), a.alpha);
        },
        ops::kCudaFloats)
    .reference(EluRef)
    .backward(EluBackward);
SINGA_REGISTER_OP(Selu, SeluAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &SeluAttrs::alpha)
    .attr("gamma", &SeluAttrs::gamma)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SeluFast) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const SeluAttrs& a) {
          cuda::UnaryOp(cuda::Unary::kSelu, k.input(0), k.output(0), a.alpha, a.gamma);
        },
        ops::kCudaFloats)
    .reference(SeluRef)
    .backward(SeluBackward);
SINGA_REGISTER_OP(Celu, EluAttrs)
    .since_opset(12)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &EluAttrs::alpha)
    .dtypes({DType::kFloat32})
    .infer(SameAsInput(0))
    .kernel(CeluForward)
    .backward(CeluBackward);
// 28 added float16, bfloat16 and float64.
SINGA_REGISTER_OP(Celu, EluAttrs)
    .since_opset(28)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &EluAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(CeluForward)
    .backward(CeluBackward);
SINGA_REGISTER_OP(Sigmoid, NoAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SigmoidFast)
        SINGA_CUDA_KERNEL(ops::CudaUnary<cuda::Unary::kSigmoid, NoAttrs>, ops::kCudaFloats)
    .reference(SigmoidRef)
    .backward(SigmoidBackward);
SINGA_REGISTER_OP(HardSigmoid, HardSigmoidAttrs)
    .since_opset(6)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &HardSigmoidAttrs::alpha)
    .attr("beta", &HardSigmoidAttrs::beta)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(HardSigmoidFast) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const HardSigmoidAttrs& a) {
          cuda::UnaryOp(cuda::Unary::kHardSigmoid, k.input(0), k.output(0), a.alpha, a.beta);
        },
        ops::kCudaFloats)
    .reference(HardSigmoidRef)
    .backward(HardSigmoidBackward);
SINGA_REGISTER_OP(HardSwish, NoAttrs)
    .since_opset(14)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(HardSwishFast)
        SINGA_CUDA_KERNEL(ops::CudaUnary<cuda::Unary::kHardSwish, NoAttrs>, ops::kCudaFloats)
    .reference(HardSwishRef)
    .backward(HardSwishBackward);
SINGA_REGISTER_OP(Softplus, NoAttrs)
    .since_opset(1)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SoftplusForward)
        SINGA_CUDA_KERNEL(ops::CudaUnary<cuda::Unary::kSoftplus, NoAttrs>, ops::kCudaFloats)
    .backward(SoftplusBackward);
SINGA_REGISTER_OP(Softsign, NoAttrs)
    .since_opset(1)
    .inputs({"input"})
    .outputs({"output"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SoftsignForward)
        SINGA_CUDA_KERNEL(ops::CudaUnary<cuda::Unary::kSoftsign, NoAttrs>, ops::kCudaFloats)
    .backward(SoftsignBackward);
SINGA_REGISTER_OP(ThresholdedRelu, ThresholdedReluAttrs)
    .since_opset(10)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &ThresholdedReluAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(ThresholdedReluForward)
    .backward(ThresholdedReluBackward);
SINGA_REGISTER_OP(Mish, NoAttrs)
    .since_opset(18)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(MishForward)
    .backward(MishBackward);
SINGA_REGISTER_OP(Gelu, GeluAttrs)
    .since_opset(20)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("approximate", &GeluAttrs::approximate)
    .dtypes(dtypes::kFloats)
    .infer(GeluInfer)
    .kernel(GeluFast) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const GeluAttrs& a) {
          cuda::UnaryOp(a.approximate == "tanh" ? cuda::Unary::kGeluTanh : cuda::Unary::kGelu,
                        k.input(0), k.output(0));
        },
        ops::kCudaFloats)
    .reference(GeluRef)
    .backward(GeluBackward);
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
    .kernel(Clip6Fast) SINGA_CUDA_KERNEL(Clip6Cuda, ops::kCudaMath)
    .reference(Clip6Ref)
    .backward(Clip6Backward)
    .upgrade([](ExportCtx& c, const Clip6Attrs& a) {  // 11: min and max inputs
      const AttrMap set = c.attrs();
      AddWithInputs(c,
                    {set.count("min") ? c.AddScalarLike(a.min, 0, "min") : "",
                     set.count("max") ? c.AddScalarLike(a.max, 0, "max") : ""},
                    {"min", "max"});
    });
SINGA_REGISTER_OP(Clip, NoAttrs)
    .since_opset(11)
    .inputs({"input", "min?", "max?"})
    .outputs({"output"})
    .dtypes(dtypes::kNumeric, {0, 1, 2})
    .infer(Clip11Infer)
    .kernel(Clip11Fast) SINGA_CUDA_KERNEL(Clip11Cuda, ops::kCudaMath)
    .reference(Clip11Ref)
    .backward(Clip11Backward);

// The internal op of Clip's backward.
SINGA_REGISTER_OP(ClipGrad, NoAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X", "min", "max"})
    .outputs({"dX"})
    .dtypes(dtypes::kNumeric, {0, 1, 2, 3})
    .infer(SameAsInput(1))
    .kernel(ClipGradForward) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const NoAttrs&) {
          cuda::ClipGrad(k.input(0), k.input(1), k.input(2), k.input(3), k.output(0));
        },
        ops::kCudaFloats);

}  // namespace singa
