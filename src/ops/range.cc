// Range: output[i] = start + i * delta for i < max(ceil((limit - start) /
// delta), 0). start, limit and delta are scalars of one dtype. Integer types
// compute in int64; float32 and float64 in double (as numpy's arange, the
// oracle, does), rounded once. Opset 27 added float16/bfloat16 with
// `stash_type`, the type they compute in (float or double).
// https://onnx.ai/onnx/operators/onnx__Range.html
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct RangeAttrs {
  int64_t stash_type = static_cast<int64_t>(DType::kFloat32);
};

double ScalarOf(const InferCtx& c, int i, const char* name) {
  SINGA_CHECK(c.input(i).numel() == 1 && c.rank(i) <= 1, ShapeError,
              c.where() << ": " << name << " must be a scalar (" << c.inputs_string() << ")");
  return c.value(i).ToVector<double>()[0];
}

int64_t Count(const InferCtx& c) {
  if (IsFloat(c.dtype(0))) {
    const double start = ScalarOf(c, 0, "start"), limit = ScalarOf(c, 1, "limit"),
                 delta = ScalarOf(c, 2, "delta");
    SINGA_CHECK(delta != 0, ShapeError,
                c.where() << ": delta must not be 0 (" << c.inputs_string() << ")");
    const double n = std::ceil((limit - start) / delta);
    SINGA_CHECK(
        std::isfinite(n), ShapeError,
        c.where() << ": the number of elements is not finite (" << c.inputs_string() << ")");
    return n > 0 ? static_cast<int64_t>(n) : 0;
  }
  ScalarOf(c, 0, "start");
  ScalarOf(c, 1, "limit");
  ScalarOf(c, 2, "delta");
  const int64_t start = c.value(0).ToVector<int64_t>()[0],
                limit = c.value(1).ToVector<int64_t>()[0],
                delta = c.value(2).ToVector<int64_t>()[0];
  SINGA_CHECK(delta != 0, ShapeError,
              c.where() << ": delta must not be 0 (" << c.inputs_string() << ")");
  const int64_t span = limit - start;
  // Ceiling division whatever the signs.
  int64_t n = span / delta;
  if (span % delta != 0 && ((span < 0) == (delta < 0))) ++n;
  return n > 0 ? n : 0;
}

SpecList Infer(const InferCtx& c, const RangeAttrs& a) {
  SINGA_CHECK(a.stash_type == static_cast<int64_t>(DType::kFloat32) ||
                  a.stash_type == static_cast<int64_t>(DType::kFloat64),
              ShapeError,
              c.where() << ": stash_type must be 1 (float) or 11 (double), got " << a.stash_type);
  return {{c.dtype(0), {Count(c)}}};
}

void Forward(KernelCtx& k, const RangeAttrs& a) {
  const Tensor& y = k.output(0);
  const int64_t n = y.numel();
  VisitNumeric(y.dtype(), [&]<class T>(Tag<T>) {
    T* out = y.data<T>();
    if constexpr (std::is_integral_v<T>) {
      const int64_t start = k.input(0).ToVector<int64_t>()[0];
      const int64_t delta = k.input(2).ToVector<int64_t>()[0];
      for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(start + i * delta);
    } else if (sizeof(T) == 2 && a.stash_type == static_cast<int64_t>(DType::kFloat32)) {
      const float start = k.input(0).ToVector<float>()[0];
      const float delta = k.input(2).ToVector<float>()[0];
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<T>(start + static_cast<float>(i) * delta);
    } else {
      const double start = k.input(0).ToVector<double>()[0];
      const double delta = k.input(2).ToVector<double>()[0];
      for (int64_t i = 0; i < n; ++i)
        out[i] = static_cast<T>(start + static_cast<double>(i) * delta);
    }
  });
}

const std::vector<DType> kRange11 = {DType::kFloat32, DType::kFloat64, DType::kInt16, DType::kInt32,
                                     DType::kInt64};
const std::vector<DType> kRange27 = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                     DType::kFloat64, DType::kInt16,    DType::kInt32,
                                     DType::kInt64};

}  // namespace

SINGA_REGISTER_OP(Range, RangeAttrs)
    .since_opset(11)
    .inputs({"start", "limit", "delta"})
    .outputs({"output"})
    .dtypes(kRange11, {0, 1, 2})
    .infer(Infer)
    .kernel(Forward);
SINGA_REGISTER_OP(Range, RangeAttrs)
    .since_opset(27)
    .inputs({"start", "limit", "delta"})
    .outputs({"output"})
    .attr("stash_type", &RangeAttrs::stash_type)
    .dtypes(kRange27, {0, 1, 2})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
