// NonZero: the coordinates of the non-zero elements of X, as int64
// [rank, count] in row-major order of the elements (numpy.nonzero). A 0-d X
// gives [0, 0 or 1]. Strings count when non-empty; -0.0 is zero.
// https://onnx.ai/onnx/operators/onnx__NonZero.html
//
// The output's shape depends on the values, so shape inference reads X.
#include "ops/movement.h"

namespace singa {
namespace {

// flags[i] = X's element i (row-major) is non-zero.
std::vector<uint8_t> Flags(const Tensor& x_in) {
  const Tensor x = x_in.Contiguous();
  const int64_t n = x.numel();
  std::vector<uint8_t> flags(n);
  if (x.dtype() == DType::kString) {
    const std::string* p = x.data<std::string>();
    for (int64_t i = 0; i < n; ++i) flags[i] = !p[i].empty();
    return flags;
  }
  VisitDType(
      x.dtype(),
      [&]<class T>(Tag<T>) {
        const T* p = x.data<T>();
        ParallelFor(0, n, cpu::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) flags[i] = static_cast<Acc<T>>(p[i]) != Acc<T>(0);
        });
      },
      "NonZero");
  return flags;
}

int64_t Count(const std::vector<uint8_t>& f) {
  int64_t c = 0;
  for (uint8_t v : f) c += v;
  return c;
}

SpecList Infer(const InferCtx& c, const NoAttrs&) {
  return {{DType::kInt64, {c.rank(0), Count(Flags(c.value(0)))}}};
}

void Forward(KernelCtx& k, const NoAttrs&) {
  const Tensor& x = k.input(0);
  const Tensor& y = k.output(0);
  const std::vector<uint8_t> flags = Flags(x);
  const int64_t count = Count(flags);
  // The output was sized at inference; a replayed graph whose input changed
  // its count cannot be served.
  SINGA_CHECK(count == y.shape()[1], ShapeError,
              "NonZero: the input now has "
                  << count << " non-zero elements, the output was sized for " << y.shape()[1]);
  if (count == 0 || x.ndim() == 0) return;
  const int64_t rank = x.ndim();
  int64_t* out = y.data<int64_t>();
  std::vector<int64_t> pos(rank, 0);
  int64_t j = 0;
  for (size_t i = 0; i < flags.size(); ++i) {
    if (flags[i]) {
      for (int64_t d = 0; d < rank; ++d) out[d * count + j] = pos[d];
      ++j;
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++pos[d] < x.shape()[d]) break;
      pos[d] = 0;
    }
  }
}

}  // namespace

SINGA_REGISTER_OP(NonZero, NoAttrs)
    .since_opset(9)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(ops::kAllButBFloat16)
    .infer(Infer)
    .kernel(Forward);
// 13 added bfloat16.
SINGA_REGISTER_OP(NonZero, NoAttrs)
    .since_opset(13)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kAll)
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
