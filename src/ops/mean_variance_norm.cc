// MeanVarianceNormalization (opsets 9; 13 adds bfloat16): normalizes X to
// zero mean and unit variance over `axes` (default [0, 2, 3]):
//   Y = (X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9)
// (the spec's function body, whose 1e-9 keeps a constant slice finite).
// NOTE: sums accumulate in Acc<T>; Y is rounded once.
// Backward (framework ops), with xc = X - mean, s = sqrt(var), d = s + 1e-9
// and means over `axes`:
//   dX = (dY - mean(dY)) / d - xc * mean(dY * xc) / (d^2 * s)
// https://onnx.ai/onnx/operators/onnx__MeanVarianceNormalization.html
#include <cmath>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct MvnAttrs {
  std::vector<int64_t> axes = {0, 2, 3};
};

constexpr double kEpsilon = 1e-9;

std::vector<bool> Reduced(const std::vector<int64_t>& axes, int64_t rank, std::string_view where) {
  std::vector<bool> r(rank, false);
  for (int64_t a : axes) r[NormalizeAxis(a, rank, where)] = true;
  return r;
}

SpecList Infer(const InferCtx& c, const MvnAttrs& a) {
  Reduced(a.axes, c.rank(0), c.where());
  return {{c.dtype(0), c.shape(0)}};
}

void Forward(KernelCtx& k, const MvnAttrs& a) {
  const Tensor x = k.input(0).Contiguous();
  if (x.numel() == 0) return;
  const Shape& s = x.shape();
  const std::vector<bool> red = Reduced(a.axes, x.ndim(), "MeanVarianceNormalization");
  // Group of each element: its index over the kept dimensions.
  std::vector<int64_t> group(x.numel());
  int64_t groups = 1;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!red[d]) groups *= s[d];
  {
    std::vector<int64_t> idx(x.ndim(), 0);
    for (int64_t i = 0; i < x.numel(); ++i) {
      int64_t gi = 0;
      for (int64_t d = 0; d < x.ndim(); ++d)
        if (!red[d]) gi = gi * s[d] + idx[d];
      group[i] = gi;
      for (int64_t d = x.ndim() - 1; d >= 0 && ++idx[d] == s[d]; --d) idx[d] = 0;
    }
  }
  const double count = static_cast<double>(x.numel() / groups);
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    std::vector<A> sum(groups, A(0)), sq(groups, A(0));
    const T* px = x.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const A v = static_cast<A>(px[i]);
      sum[group[i]] += v;
      sq[group[i]] += v * v;
    }
    std::vector<A> mean(groups), den(groups);
    for (int64_t g = 0; g < groups; ++g) {
      mean[g] = sum[g] / static_cast<A>(count);
      const A var = sq[g] / static_cast<A>(count) - mean[g] * mean[g];
      den[g] = std::sqrt(std::max(var, A(0))) + static_cast<A>(kEpsilon);
    }
    T* py = k.output(0).data<T>();
    for (int64_t i = 0; i < x.numel(); ++i)
      py[i] = static_cast<T>((static_cast<A>(px[i]) - mean[group[i]]) / den[group[i]]);
  });
}

TensorList Backward(const GradCtx& g, const MvnAttrs& a) {
  using grad::Add, grad::Div, grad::Mul, grad::Sub, grad::Scalar;
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {Tensor()};
  const Tensor& x = g.input(0);
  std::vector<int64_t> axes;
  const std::vector<bool> red = Reduced(a.axes, x.ndim(), "MeanVarianceNormalization");
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (red[d]) axes.push_back(d);
  const Tensor ax = Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
  auto mean = [&](const Tensor& t) {
    return Call1("ReduceMean", {t, ax}, {{"keepdims", int64_t{1}}});
  };
  const Tensor xc = Sub(x, mean(x));
  const Tensor s = Call1("Sqrt", {mean(Mul(xc, xc))});
  const Tensor d = Add(s, Scalar(kEpsilon, x));
  return {Sub(Div(Sub(dy, mean(dy)), d), Div(Mul(xc, mean(Mul(dy, xc))), Mul(Mul(d, d), s)))};
}

}  // namespace

SINGA_REGISTER_OP(MeanVarianceNormalization, MvnAttrs)
    .since_opset(9)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("axes", &MvnAttrs::axes)
    .dtypes({DType::kFloat16, DType::kFloat32, DType::kFloat64})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);
SINGA_REGISTER_OP(MeanVarianceNormalization, MvnAttrs)
    .since_opset(13)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("axes", &MvnAttrs::axes)
    .dtypes(dtypes::kFloats)
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
