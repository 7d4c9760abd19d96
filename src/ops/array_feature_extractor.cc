// ArrayFeatureExtractor (ai.onnx.ml): Z[..., j] = X[..., Y[j]], the indices Y
// (any shape, read flat) selecting along X's last axis. A 1-D X gives a
// [1, len(Y)] output, as in onnxruntime and onnx's reference. Indices must lie
// in [0, N): onnxruntime refuses negative ones too.
// https://onnx.ai/onnx/operators/onnx_aionnxml_ArrayFeatureExtractor.html
#include "ops/common.h"

namespace singa {
namespace {

SpecList Infer(const InferCtx& c, const NoAttrs&) {
  const Shape& x = c.shape(0);
  SINGA_CHECK(!x.empty(), ShapeError,
              c.where() << ": X must have at least one axis (" << c.inputs_string() << ")");
  Shape out = x.size() == 1 ? Shape{1} : Shape(x.begin(), x.end() - 1);
  out.push_back(c.input(1).numel());
  return {{c.dtype(0), out}};
}

template <class T>
void Gather(const Tensor& x_in, const Tensor& y_in, const Tensor& z) {
  const Tensor x = x_in.Contiguous(), y = y_in.Contiguous();
  const int64_t n = x.shape().back(), k = y.numel();
  const int64_t* idx = y.data<int64_t>();
  // Checked here, not in shape inference: the output's shape needs only Y's size.
  for (int64_t j = 0; j < k; ++j)
    SINGA_CHECK(idx[j] >= 0 && idx[j] < n, ShapeError,
                "ArrayFeatureExtractor: index "
                    << idx[j] << " at position " << j << " of Y is out of range [0, " << n
                    << ") for X's last axis (X: " << x.ToString() << ")");
  if (z.numel() == 0) return;
  const int64_t rows = x.numel() / n;  // n > 0: an empty last axis admits no index
  const T* src = static_cast<const T*>(x.raw_data());
  T* dst = static_cast<T*>(z.raw_data());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j) dst[r * k + j] = src[r * n + idx[j]];
}

// Selection only moves values: non-string types dispatch on element size.
void Forward(KernelCtx& k, const NoAttrs&) {
  const Tensor &x = k.input(0), &y = k.input(1), &z = k.output(0);
  switch (DType dt = x.dtype(); dt == DType::kString ? 0 : SizeOf(dt)) {
    case 0:
      Gather<std::string>(x, y, z);
      break;
    case 4:
      Gather<uint32_t>(x, y, z);
      break;
    case 8:
      Gather<uint64_t>(x, y, z);
      break;
    default:
      throw DTypeError("ArrayFeatureExtractor: no kernel for dtype " + std::string(Name(dt)));
  }
}

}  // namespace

SINGA_REGISTER_OP(ArrayFeatureExtractor, NoAttrs)
    .domain("ai.onnx.ml")
    .since_opset(1)
    .inputs({"X", "Y"})
    .outputs({"Z"})
    .dtypes({DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32, DType::kString}, {0})
    .dtypes({DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
