// LpNormalization (opset 1; 22 adds bfloat16): Y = X / ||X||_p along `axis`
// (p = 1: sum |x|; p = 2: sqrt(sum x^2)); a zero norm gives 0.
// NOTE: the norm is accumulated in Acc<T> and Y rounded once.
// Backward (framework ops), with n the norm (kept dims) and Y = X / n:
//   p = 2: dX = (dY - Y * sum(dY * Y)) / n
//   p = 1: dX = (dY - sign(X) * sum(dY * Y)) / n
// https://onnx.ai/onnx/operators/onnx__LpNormalization.html
#include <cmath>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct LpNormAttrs {
  int64_t axis = -1;
  int64_t p = 2;
};

SpecList Infer(const InferCtx& c, const LpNormAttrs& a) {
  NormalizeAxis(a.axis, c.rank(0), c.where());
  SINGA_CHECK(a.p == 1 || a.p == 2, ShapeError, c.where() << ": p must be 1 or 2, got " << a.p);
  return {{c.dtype(0), c.shape(0)}};
}

void Forward(KernelCtx& k, const LpNormAttrs& a) {
  const Tensor x = k.input(0).Contiguous();
  if (x.numel() == 0) return;
  const int64_t axis = NormalizeAxis(a.axis, x.ndim(), "LpNormalization");
  int64_t outer = 1, n = x.shape()[axis], inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* px = x.data<T>();
    T* py = k.output(0).data<T>();
    ParallelFor(0, outer * inner, std::max<int64_t>(1, cpu::kElementwiseGrain / n),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t r = lo; r < hi; ++r) {
                    const int64_t base = (r / inner) * n * inner + r % inner;
                    A sum = 0;
                    for (int64_t j = 0; j < n; ++j) {
                      const A v = static_cast<A>(px[base + j * inner]);
                      sum += a.p == 1 ? std::abs(v) : v * v;
                    }
                    const A norm = a.p == 1 ? sum : std::sqrt(sum);
                    for (int64_t j = 0; j < n; ++j)
                      py[base + j * inner] =
                          norm == 0 ? T(0)
                                    : static_cast<T>(static_cast<A>(px[base + j * inner]) / norm);
                  }
                });
  });
}

TensorList Backward(const GradCtx& g, const LpNormAttrs& a) {
  using grad::Div, grad::Mul, grad::Sub;
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {Tensor()};
  const Tensor &x = g.input(0), &y = g.output(0);
  const int64_t axis = NormalizeAxis(a.axis, x.ndim(), "LpNormalization");
  const Tensor ax = Tensor::FromVector<int64_t>({1}, {axis});
  auto sum = [&](const Tensor& t) {
    return Call1("ReduceSum", {t, ax}, {{"keepdims", int64_t{1}}});
  };
  const Tensor norm = a.p == 1 ? sum(Call1("Abs", {x})) : Call1("Sqrt", {sum(Mul(x, x))});
  const Tensor dir = a.p == 1 ? Call1("Sign", {x}) : y;
  return {Div(Sub(dy, Mul(dir, sum(Mul(dy, y)))), norm)};
}

}  // namespace

SINGA_REGISTER_OP(LpNormalization, LpNormAttrs)
    .since_opset(1)
    .inputs({"input"})
    .outputs({"output"})
    .attr("axis", &LpNormAttrs::axis)
    .attr("p", &LpNormAttrs::p)
    .dtypes({DType::kFloat16, DType::kFloat32, DType::kFloat64})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);
SINGA_REGISTER_OP(LpNormalization, LpNormAttrs)
    .since_opset(22)
    .inputs({"input"})
    .outputs({"output"})
    .attr("axis", &LpNormAttrs::axis)
    .attr("p", &LpNormAttrs::p)
    .dtypes(dtypes::kFloats)
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
