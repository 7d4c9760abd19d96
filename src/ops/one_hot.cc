// OneHot: output[..., k, ...] = values[1] where k == indices[...] (k on
// `axis`), values[0] elsewhere. Indices of a float type are truncated to
// integers; depth is a one-element tensor. Opset 11 also accepts negative
// indices in [-depth, 0) (counted from the end); opset 9 sets no on-value for
// them. Any index out of range gives a row of off-values.
// https://onnx.ai/onnx/operators/onnx__OneHot.html
#include <cmath>

#include "ops/movement.h"

namespace singa {
namespace {

struct OneHotAttrs {
  int64_t axis = -1;
};

const std::vector<DType> kIndexTypes = {
    DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kInt8,   DType::kInt16, DType::kInt32,
    DType::kInt64,   DType::kUInt8,   DType::kUInt16,  DType::kUInt32, DType::kUInt64};
const std::vector<DType> kValueTypes = [] {
  std::vector<DType> v;
  for (DType d : dtypes::kAll)
    if (d != DType::kBFloat16) v.push_back(d);
  return v;
}();

int64_t Depth(const InferCtx& c) {
  SINGA_CHECK(c.input(1).numel() == 1 && c.rank(1) <= 1, ShapeError,
              c.where() << ": depth must hold one value (" << c.inputs_string() << ")");
  const int64_t depth = c.value(1).ToVector<int64_t>()[0];
  SINGA_CHECK(depth >= 0, ShapeError,
              c.where() << ": depth " << depth << " is negative (" << c.inputs_string() << ")");
  return depth;
}

SpecList Infer(const InferCtx& c, const OneHotAttrs& a) {
  const int64_t depth = Depth(c);
  SINGA_CHECK(c.rank(2) == 1 && c.shape(2)[0] == 2, ShapeError,
              c.where() << ": values must be [off_value, on_value] (" << c.inputs_string() << ")");
  const int64_t rank = c.rank(0);
  SINGA_CHECK(a.axis >= -rank - 1 && a.axis <= rank, ShapeError,
              c.where() << ": axis " << a.axis << " is out of range for output rank " << rank + 1
                        << " (" << c.inputs_string() << ")");
  const int64_t axis = a.axis < 0 ? a.axis + rank + 1 : a.axis;
  Shape out = c.shape(0);
  out.insert(out.begin() + axis, depth);
  return {{c.dtype(2), out}};
}

template <bool kNegative>
void Forward(KernelCtx& k, const OneHotAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const int64_t rank = k.input(0).ndim();
  const int64_t axis = a.axis < 0 ? a.axis + rank + 1 : a.axis;
  const int64_t depth = y.shape()[axis];
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= y.shape()[d];
  for (int64_t d = axis + 1; d < y.ndim(); ++d) inner *= y.shape()[d];
  // Read as double, truncated: uint64 values above int64's range stay out
  // of range instead of wrapping to negatives.
  const std::vector<double> idx = k.input(0).ToVector<double>();
  const Tensor values = k.input(2).Contiguous();
  ops::VisitElementSize(
      y.dtype(),
      [&]<class T>(Tag<T>) {
        const T off = static_cast<const T*>(values.raw_data())[0];
        const T on = static_cast<const T*>(values.raw_data())[1];
        T* out = static_cast<T*>(y.raw_data());
        ParallelFor(0, outer, std::max<int64_t>(1, cpu::kElementwiseGrain / (depth * inner)),
                    [&](int64_t lo, int64_t hi) {
                      for (int64_t o = lo; o < hi; ++o) {
                        T* block = out + o * depth * inner;
                        std::fill(block, block + depth * inner, off);
                        for (int64_t i = 0; i < inner; ++i) {
                          double j = std::trunc(idx[o * inner + i]);
                          if (kNegative && j < 0) j += static_cast<double>(depth);
                          if (j >= 0 && j < static_cast<double>(depth))
                            block[static_cast<int64_t>(j) * inner + i] = on;
                        }
                      }
                    });
      },
      "OneHot");
}

#if SINGA_CUDA
// Integer indices, float32 or float64 values.
void OneHotCuda(KernelCtx& k, const OneHotAttrs& a) {
  const int64_t rank = k.input(0).ndim();
  cuda::OneHot(k.input(0), k.input(2), k.output(0), a.axis < 0 ? a.axis + rank + 1 : a.axis);
}
bool CudaTakes(const InferCtx& c, const OneHotAttrs&) {
  return c.dtype(2) == DType::kFloat32 || c.dtype(2) == DType::kFloat64;
}
#endif

}  // namespace

// 11 added negative indices; 28 bfloat16 values.
[[maybe_unused]] static const bool kOneHot =
    RegisterVersions<OneHotAttrs>("OneHot", {9, 11, 28}, [](OpBuilder<OneHotAttrs>& b, int v) {
      b.inputs({"indices", "depth", "values"})
          .outputs({"output"})
          .attr("axis", &OneHotAttrs::axis)
          .dtypes(kIndexTypes, {0})
          .dtypes(kIndexTypes, {1})
          .host_inputs({1})
          .dtypes(v < 28 ? kValueTypes : dtypes::kAll, {2})
          .infer(Infer)
          .kernel(v < 11 ? Forward<false> : Forward<true>);
#if SINGA_CUDA
      if (v >= 11) b.cuda_kernel(OneHotCuda, {DType::kInt32, DType::kInt64}, CudaTakes);
#endif
    });

}  // namespace singa
