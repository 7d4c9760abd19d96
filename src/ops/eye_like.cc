// EyeLike: a 2-D tensor of the input's shape with ones on diagonal k (j - i
// == k) and zeros elsewhere; dtype `dtype`, else the input's.
// https://onnx.ai/onnx/operators/onnx__EyeLike.html
#include <optional>

#include "ops/common.h"

namespace singa {
namespace {

struct EyeLikeAttrs {
  std::optional<DType> dtype;
  int64_t k = 0;
};

template <bool kBFloat16>
SpecList Infer(const InferCtx& c, const EyeLikeAttrs& a) {
  SINGA_CHECK(c.rank(0) == 2, ShapeError,
              c.where() << ": input must be 2-D (" << c.inputs_string() << ")");
  const DType out = a.dtype.value_or(c.dtype(0));
  SINGA_CHECK((IsNumeric(out) && (kBFloat16 || out != DType::kBFloat16)) || out == DType::kBool,
              DTypeError,
              c.where() << ": dtype " << Name(out) << " is not supported for the output ("
                        << c.inputs_string() << ")");
  return {{out, c.shape(0)}};
}

void Forward(KernelCtx& k, const EyeLikeAttrs& a) {
  const Tensor& y = k.output(0);
  const int64_t rows = y.shape()[0], cols = y.shape()[1];
  VisitDType(y.dtype(), [&]<class T>(Tag<T>) {
    T* out = y.data<T>();
    std::fill_n(out, y.numel(), static_cast<T>(0));
    for (int64_t i = 0; i < rows; ++i)
      if (i + a.k >= 0 && i + a.k < cols) out[i * cols + i + a.k] = static_cast<T>(1);
  });
}

const std::vector<DType> kTypes9 = [] {
  std::vector<DType> v;
  for (DType d : dtypes::kAllButString)
    if (d != DType::kBFloat16) v.push_back(d);
  return v;
}();

}  // namespace

SINGA_REGISTER_OP(EyeLike, EyeLikeAttrs)
    .since_opset(9)
    .inputs({"input"})
    .outputs({"output"})
    .attr("dtype", &EyeLikeAttrs::dtype)
    .attr("k", &EyeLikeAttrs::k)
    .dtypes(kTypes9)
    .infer(Infer<false>)
    .kernel(Forward);
// 22 added bfloat16.
SINGA_REGISTER_OP(EyeLike, EyeLikeAttrs)
    .since_opset(22)
    .inputs({"input"})
    .outputs({"output"})
    .attr("dtype", &EyeLikeAttrs::dtype)
    .attr("k", &EyeLikeAttrs::k)
    .dtypes(dtypes::kAllButString)
    .infer(Infer<true>)
    .kernel(Forward);

}  // namespace singa
