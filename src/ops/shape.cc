// Shape: the input's shape as a 1-D int64 tensor; since opset 15 only the
// dimensions start:end (negative values count from the end, out-of-range
// ones clamp).
// https://onnx.ai/onnx/operators/onnx__Shape.html
#include "ops/movement.h"

namespace singa {
namespace {

struct ShapeAttrs {
  int64_t start = 0;
  std::optional<int64_t> end;
};

std::pair<int64_t, int64_t> Range(int64_t rank, const ShapeAttrs& a) {
  auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
  const int64_t start = clamp(a.start), end = a.end ? clamp(*a.end) : rank;
  return {start, std::max(start, end)};
}

SpecList Infer(const InferCtx& c, const ShapeAttrs& a) {
  auto [start, end] = Range(c.rank(0), a);
  return {{DType::kInt64, {end - start}}};
}

void Forward(KernelCtx& k, const ShapeAttrs& a) {
  const Shape& s = k.input(0).shape();
  auto [start, end] = Range(static_cast<int64_t>(s.size()), a);
  int64_t* out = k.output(0).data<int64_t>();
  for (int64_t d = start; d < end; ++d) out[d - start] = s[d];
}

}  // namespace

SINGA_REGISTER_OP(Shape, ShapeAttrs)
    .since_opset(1)
    .inputs({"data"})
    .outputs({"shape"})
    .dtypes(ops::AnyDType())
    .infer(Infer)
    .kernel(Forward) SINGA_CUDA_KERNEL(ops::MetadataOnHost(Forward), ops::kCudaCopy);
SINGA_REGISTER_OP(Shape, ShapeAttrs)
    .since_opset(15)
    .inputs({"data"})
    .outputs({"shape"})
    .attr("start", &ShapeAttrs::start)
    .attr("end", &ShapeAttrs::end)
    .dtypes(ops::AnyDType())
    .infer(Infer)
    .kernel(Forward) SINGA_CUDA_KERNEL(ops::MetadataOnHost(Forward), ops::kCudaCopy);

}  // namespace singa
