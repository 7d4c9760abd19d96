// TopK: the k largest (largest=1) or smallest elements along `axis`, with
// their int64 indices; equal values keep the lower index first and NaN
// counts as the largest value. Opset 1 takes
// k as an attribute, later versions as a one-element int64 input. The order
// with sorted=0 is unspecified: we return them sorted. The gradient of Values
// goes back to the positions it was read from.
// https://onnx.ai/onnx/operators/onnx__TopK.html
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ops/common.h"

namespace singa {
namespace {

struct TopKAttrs {
  int64_t axis = -1;
  bool largest = true;
  bool sorted = true;
  int64_t k = -1;  // opset 1 only
};

int64_t K(const InferCtx& c, const TopKAttrs& a) {
  if (c.op().since_version == 1) return a.k;
  SINGA_CHECK(c.rank(1) == 1 && c.input(1).numel() == 1, ShapeError,
              c.where() << ": K must be a 1-D tensor of one element (" << c.inputs_string() << ")");
  return c.value(1).ToVector<int64_t>()[0];
}

int64_t Axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

// NaN sorts above every number (as in numpy's sort, the oracle), and NaNs
// tie: a strict weak order even with NaNs.
template <class V>
bool Less(V x, V y) {
  if constexpr (std::is_floating_point_v<V>) {
    if (std::isnan(x)) return false;
    if (std::isnan(y)) return true;
  }
  return x < y;
}

SpecList Infer(const InferCtx& c, const TopKAttrs& a) {
  const int64_t rank = c.rank(0);
  SINGA_CHECK(rank >= 1, ShapeError,
              c.where() << ": X must have rank >= 1 (" << c.inputs_string() << ")");
  SINGA_CHECK(a.axis >= -rank && a.axis < rank, ShapeError,
              c.where() << ": axis " << a.axis << " is out of range for rank " << rank << " ("
                        << c.inputs_string() << ")");
  const int64_t axis = Axis(a.axis, rank);
  const int64_t k = K(c, a);
  SINGA_CHECK(k >= 0 && k <= c.shape(0)[axis], ShapeError,
              c.where() << ": k = " << k << " is out of range [0, " << c.shape(0)[axis]
                        << "] for axis " << axis << " (" << c.inputs_string() << ")");
  Shape out = c.shape(0);
  out[axis] = k;
  return {{c.dtype(0), out}, {DType::kInt64, out}};
}

void Forward(KernelCtx& k, const TopKAttrs& a) {
  const Tensor& values = k.output(0);
  if (values.numel() == 0) return;
  const Tensor x = k.input(0).Contiguous();
  const int64_t axis = Axis(a.axis, x.ndim());
  const int64_t n = x.shape()[axis], kk = values.shape()[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  const bool want_indices = k.num_outputs() > 1 && k.output(1).defined();
  VisitNumeric(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* in = x.data<T>();
    T* out = values.data<T>();
    int64_t* out_idx = want_indices ? k.output(1).data<int64_t>() : nullptr;
    ParallelFor(0, outer * inner, std::max<int64_t>(1, cpu::kElementwiseGrain / n),
                [&](int64_t lo, int64_t hi) {
                  std::vector<int64_t> order(n);
                  std::vector<A> v(n);
                  for (int64_t l = lo; l < hi; ++l) {
                    const int64_t o = l / inner, i = l % inner;
                    const T* line = in + o * n * inner + i;
                    for (int64_t j = 0; j < n; ++j) v[j] = static_cast<A>(line[j * inner]);
                    std::iota(order.begin(), order.end(), int64_t{0});
                    auto before = [&](int64_t p, int64_t q) {
                      if (Less(v[p], v[q])) return !a.largest;
                      if (Less(v[q], v[p])) return a.largest;
                      return p < q;
                    };
                    std::partial_sort(order.begin(), order.begin() + kk, order.end(), before);
                    const int64_t base = o * kk * inner + i;
                    for (int64_t j = 0; j < kk; ++j) {
                      out[base + j * inner] = line[order[j] * inner];
                      if (out_idx) out_idx[base + j * inner] = order[j];
                    }
                  }
                });
  });
}

// Each selected value's gradient goes back to its position in X.
TensorList Backward(const GradCtx& g, const TopKAttrs& a) {
  const Tensor& x = g.input(0);
  TensorList grads(g.num_inputs());
  const Tensor zeros = Tensor::Zeros(x.shape(), x.dtype(), x.device());
  grads[0] = Call1("ScatterElements", {zeros, g.output(1), g.grad_output(0)},
                   {{"axis", Axis(a.axis, x.ndim())}});
  return grads;
}

const std::vector<DType> kTopK1 = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
const std::vector<DType> kTopK11 = [] {
  std::vector<DType> v;
  for (DType d : dtypes::kNumeric)
    if (d != DType::kBFloat16) v.push_back(d);
  return v;
}();

}  // namespace

// 10 made k an input, 11 added largest, sorted, negative axes and integer
// types, 24 bfloat16.
[[maybe_unused]] static const bool kTopK =
    RegisterVersions<TopKAttrs>("TopK", {1, 10, 11, 24}, [](OpBuilder<TopKAttrs>& b, int v) {
      b.outputs({"Values", "Indices"})
          .attr("axis", &TopKAttrs::axis)
          .infer(Infer)
          .kernel(Forward)
          .backward_outputs(2)
          .backward(Backward);
      if (v < 10) {
        b.inputs({"X"})
            .attr("k", &TopKAttrs::k, /*required=*/true)
            .dtypes(kTopK1)
            .upgrade([](ExportCtx& c, const TopKAttrs& a) {  // 10: k an input
              AddWithInputs(c, {c.AddInts({a.k}, "k")}, {"k"});
            });
        return;
      }
      b.inputs({"X", "K"})
          .dtypes(v < 11   ? kTopK1
                  : v < 24 ? kTopK11
                           : dtypes::kNumeric,
                  {0})
          .dtypes({DType::kInt64}, {1});
      if (v >= 11) b.attr("largest", &TopKAttrs::largest).attr("sorted", &TopKAttrs::sorted);
    });

}  // namespace singa
