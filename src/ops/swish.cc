// Swish (opset 24): Y = X * Sigmoid(alpha * X).
// SwiGLU (opset 28): Y = Swish_alpha(A) * B, A and B of one shape (no
// broadcasting): the gated activation of Llama-style MLPs.
// NOTE: the sigmoid is rounded to X's dtype before the product, as the
// spec's reference computes it.
// Backward (framework ops), with s = Sigmoid(alpha * x):
//   Swish'(x) = s + alpha * x * s * (1 - s)
//   SwiGLU: dA = dY * B * Swish'(A),  dB = dY * Swish(A)
// https://onnx.ai/onnx/operators/onnx__Swish.html
// https://onnx.ai/onnx/operators/onnx__SwiGLU.html
#include <cmath>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct SwishAttrs {
  float alpha = 1.0f;
};

template <class T>
T SwishOf(T x, float alpha) {
  using A = Acc<T>;
  const A v = static_cast<A>(x);
  const T s = static_cast<T>(A(1) / (A(1) + std::exp(-static_cast<A>(alpha) * v)));
  return static_cast<T>(v * static_cast<A>(s));
}

void SwishForward(KernelCtx& k, const SwishAttrs& a) {
  VisitFloat(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    cpu::Unary<T, T>(k.input(0), k.output(0), [&](T x) { return SwishOf(x, a.alpha); });
  });
}

// d Swish / dx.
Tensor SwishDerivative(const Tensor& x, float alpha) {
  using grad::Mul, grad::Add, grad::Sub, grad::Scalar;
  const Tensor s = Call1("Sigmoid", {Mul(x, Scalar(alpha, x))});
  return Add(s, Mul(Mul(Scalar(alpha, x), x), Mul(s, Sub(Scalar(1, x), s))));
}

TensorList SwishBackward(const GradCtx& g, const SwishAttrs& a) {
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {Tensor()};
  return {grad::Mul(dy, SwishDerivative(g.input(0), a.alpha))};
}

SpecList SwiGluInfer(const InferCtx& c, const SwishAttrs&) {
  SINGA_CHECK(c.shape(0) == c.shape(1), ShapeError,
              c.where() << ": A and B must have the same shape (no broadcasting) ("
                        << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}

void SwiGluForward(KernelCtx& k, const SwishAttrs& a) {
  VisitFloat(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    cpu::Binary<T, T, T>(k.input(0), k.input(1), k.output(0), [&](T x, T b) {
      return static_cast<T>(static_cast<A>(SwishOf(x, a.alpha)) * static_cast<A>(b));
    });
  });
}

TensorList SwiGluBackward(const GradCtx& g, const SwishAttrs& a) {
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {Tensor(), Tensor()};
  const Tensor &x = g.input(0), &b = g.input(1);
  TensorList grads(2);
  if (g.needs_grad(0)) grads[0] = grad::Mul(grad::Mul(dy, b), SwishDerivative(x, a.alpha));
  if (g.needs_grad(1)) grads[1] = grad::Mul(dy, Call1("Swish", {x}, {{"alpha", a.alpha}}));
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(Swish, SwishAttrs)
    .since_opset(24)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &SwishAttrs::alpha)
    .dtypes(dtypes::kFloats)
    .infer(SameAsInput(0))
    .kernel(SwishForward)
    .backward(SwishBackward);
SINGA_REGISTER_OP(SwiGLU, SwishAttrs)
    .since_opset(28)
    .inputs({"A", "B"})
    .outputs({"Y"})
    .attr("alpha", &SwishAttrs::alpha)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(SwiGluInfer)
    .kernel(SwiGluForward)
    .backward(SwiGluBackward);

}  // namespace singa
