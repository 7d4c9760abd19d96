// CumSum and CumProd: running sums / products of x along `axis` (a scalar
// input). exclusive=1 leaves the current element out (the first output is
// 0 / 1); reverse=1 runs from the end. 16-bit floats accumulate in float.
// https://onnx.ai/onnx/operators/onnx__CumSum.html
// https://onnx.ai/onnx/operators/onnx__CumProd.html
#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

using grad::Div;
using grad::Mul;

struct CumAttrs {
  bool exclusive = false;
  bool reverse = false;
};

int64_t ReadAxis(const Tensor& axis, int64_t rank) {
  const int64_t a = axis.ToVector<int64_t>()[0];
  return a < 0 ? a + rank : a;
}

SpecList Infer(const InferCtx& c, const CumAttrs&) {
  SINGA_CHECK(c.input(1).numel() == 1 && c.rank(1) <= 1, ShapeError,
              c.where() << ": axis must be a scalar (" << c.inputs_string() << ")");
  const int64_t rank = c.rank(0);
  const int64_t axis = c.value(1).ToVector<int64_t>()[0];
  SINGA_CHECK(axis >= -rank && axis < rank, ShapeError,
              c.where() << ": axis " << axis << " is out of range for rank " << rank << " ("
                        << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}

template <bool kProduct>
void Forward(KernelCtx& k, const CumAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const int64_t axis = ReadAxis(k.input(1), y.ndim());
  const int64_t n = y.shape()[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.shape()[d];
  for (int64_t d = axis + 1; d < y.ndim(); ++d) inner *= y.shape()[d];
  const Tensor x = k.input(0).Contiguous();
  VisitNumeric(y.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    ParallelFor(0, outer * inner, std::max<int64_t>(1, cpu::kElementwiseGrain / n),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t l = lo; l < hi; ++l) {
                    const int64_t base = (l / inner) * n * inner + l % inner;
                    A acc = kProduct ? A(1) : A(0);
                    for (int64_t s = 0; s < n; ++s) {
                      const int64_t i = base + (a.reverse ? n - 1 - s : s) * inner;
                      const A v = static_cast<A>(in[i]);
                      if (!a.exclusive) acc = kProduct ? A(acc * v) : A(acc + v);
                      out[i] = static_cast<T>(acc);
                      if (a.exclusive) acc = kProduct ? A(acc * v) : A(acc + v);
                    }
                  }
                });
  });
}

AttrMap Flipped(const CumAttrs& a) {
  return {{"exclusive", int64_t{a.exclusive}}, {"reverse", int64_t{!a.reverse}}};
}

// Each x_j feeds every later (earlier, when reversed) output once.
TensorList CumSumBackward(const GradCtx& g, const CumAttrs& a) {
  return {Call1("CumSum", {g.grad_output(0), g.input(1)}, Flipped(a)), Tensor()};
}
// NOTE: d y_i / d x_j = y_i / x_j for each y_i that x_j feeds, so the
// gradient is the flipped running sum of dy * y divided by x: defined for
// nonzero x only (zeros give inf/NaN, as the formula does).
TensorList CumProdBackward(const GradCtx& g, const CumAttrs& a) {
  const Tensor s = Call1("CumSum", {Mul(g.grad_output(0), g.output(0)), g.input(1)}, Flipped(a));
  return {Div(s, g.input(0)), Tensor()};
}

const std::vector<DType> kCumTypes = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                      DType::kFloat64, DType::kInt32,    DType::kInt64,
                                      DType::kUInt32,  DType::kUInt64};
const std::vector<DType> kCum11Types = {DType::kFloat32, DType::kFloat64, DType::kInt32,
                                        DType::kInt64,   DType::kUInt32,  DType::kUInt64};
const std::vector<DType> kAxisTypes = {DType::kInt32, DType::kInt64};

}  // namespace

// CumSum 14 added float16 and bfloat16.
template <bool kProd>
void RegisterCumulative(OpBuilder<CumAttrs>& b, int v) {
  b.inputs({"x", "axis"})
      .outputs({"y"})
      .attr("exclusive", &CumAttrs::exclusive)
      .attr("reverse", &CumAttrs::reverse)
      .dtypes(v < 14 ? kCum11Types : kCumTypes, {0})
      .dtypes(kAxisTypes, {1})
      .infer(Infer)
      .kernel(Forward<kProd>)
      .backward(kProd ? CumProdBackward : CumSumBackward);
}
[[maybe_unused]] static const bool kCumSum =
    RegisterVersions<CumAttrs>("CumSum", {11, 14}, RegisterCumulative<false>);
[[maybe_unused]] static const bool kCumProd =
    RegisterVersions<CumAttrs>("CumProd", {26}, RegisterCumulative<true>);

}  // namespace singa
