// ArgMax, ArgMin: int64 indices of the largest / smallest element along
// `axis` (the first one, or the last with select_last_index), keeping the
// axis as size 1 when keepdims. NaN counts as the extreme, as in numpy.
// Opset 12 added select_last_index; 13 only added bfloat16.
// https://onnx.ai/onnx/operators/onnx__ArgMax.html (ArgMin alike)
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct ArgAttrs {
  int64_t axis = 0;
  int64_t keepdims = 1;
  int64_t select_last_index = 0;
};

SpecList ArgInfer(const InferCtx& c, const ArgAttrs& a) {
  SINGA_CHECK(c.rank(0) >= 1, ShapeError,
              c.where() << ": data must have rank >= 1 (" << c.inputs_string() << ")");
  int64_t axis = NormalizeAxis(a.axis, c.rank(0), c.where());
  Shape out = c.shape(0);
  if (a.keepdims)
    out[axis] = 1;
  else
    out.erase(out.begin() + axis);
  SINGA_CHECK(c.shape(0)[axis] != 0 || NumElements(out) == 0, ShapeError,
              c.where() << ": cannot take the index of an extreme over the empty axis " << axis
                        << " (" << c.inputs_string() << ")");
  return {{DType::kInt64, out}};
}

// Whether v replaces the current best b (both in the accumulation type).
template <bool kMax, bool kLast, class A>
inline bool Better(A v, A b) {
  if constexpr (std::is_floating_point_v<A>) {
    if (b != b) return kLast && v != v;
    if (v != v) return true;
  }
  if constexpr (kMax) return kLast ? v >= b : v > b;
  return kLast ? v <= b : v < b;
}

constexpr int64_t kBlock = 256;
constexpr int64_t kGrain = 1 << 15;

// y[o, i] = index j of the extreme of x[o, j, i] for a dense (outer, n, inner) x.
template <bool kMax, bool kLast, class T>
void ArgLoop(const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner) {
  using A = Acc<T>;
  const int64_t nb = (inner + kBlock - 1) / kBlock;
  const int64_t work = n * std::min(inner, kBlock);
  ParallelFor(0, outer * nb, std::max<int64_t>(1, kGrain / work), [&](int64_t lo, int64_t hi) {
    A best[kBlock];
    int64_t idx[kBlock];
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / nb, i0 = (t % nb) * kBlock, m = std::min(kBlock, inner - i0);
      const T* base = x + o * n * inner + i0;
      for (int64_t i = 0; i < m; ++i) {
        best[i] = static_cast<A>(base[i]);
        idx[i] = 0;
      }
      for (int64_t j = 1; j < n; ++j) {
        const T* row = base + j * inner;
        for (int64_t i = 0; i < m; ++i) {
          A v = static_cast<A>(row[i]);
          if (Better<kMax, kLast>(v, best[i])) {
            best[i] = v;
            idx[i] = j;
          }
        }
      }
      for (int64_t i = 0; i < m; ++i) y[o * inner + i0 + i] = idx[i];
    }
  });
}

template <bool kMax>
void ArgForward(KernelCtx& k, const ArgAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  Tensor x = k.input(0).Contiguous();
  int64_t axis = NormalizeAxis(a.axis, x.ndim(), kMax ? "ArgMax" : "ArgMin");
  int64_t outer = 1, inner = 1, n = x.shape()[axis];
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < x.ndim(); ++d) inner *= x.shape()[d];
  VisitNumeric(x.dtype(), [&]<class T>(Tag<T>) {
    const T* px = static_cast<const T*>(x.raw_data());
    int64_t* py = static_cast<int64_t*>(y.raw_data());
    if (a.select_last_index)
      ArgLoop<kMax, true>(px, py, outer, n, inner);
    else
      ArgLoop<kMax, false>(px, py, outer, n, inner);
  });
}

// Opset 11 has no select_last_index (it stays 0); 13 only added bfloat16.
template <bool kMax>
void RegisterArg(const char* name) {
  OpBuilder<ArgAttrs>(name)
      .since_opset(11)
      .inputs({"data"})
      .outputs({"reduced"})
      .attr("axis", &ArgAttrs::axis)
      .attr("keepdims", &ArgAttrs::keepdims)
      .dtypes(dtypes::kNumeric)
      .infer(ArgInfer)
      .kernel(ArgForward<kMax>);
  OpBuilder<ArgAttrs>(name)
      .since_opset(12)
      .inputs({"data"})
      .outputs({"reduced"})
      .attr("axis", &ArgAttrs::axis)
      .attr("keepdims", &ArgAttrs::keepdims)
      .attr("select_last_index", &ArgAttrs::select_last_index)
      .dtypes(dtypes::kNumeric)
      .infer(ArgInfer)
      .kernel(ArgForward<kMax>);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterArg<true>("ArgMax");
  RegisterArg<false>("ArgMin");
  return true;
}();

}  // namespace
}  // namespace singa
