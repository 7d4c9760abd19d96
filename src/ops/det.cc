// Det: the determinant of each square matrix in the last two axes
// ([..., M, M] -> [...]), by LU factorization with partial pivoting in
// double. No backward: it needs a matrix inverse, which has no ONNX op.
// https://onnx.ai/onnx/operators/onnx__Det.html
#include <cmath>
#include <utility>

#include "ops/common.h"

namespace singa {
namespace {

SpecList Infer(const InferCtx& c, const NoAttrs&) {
  const int64_t r = c.rank(0);
  SINGA_CHECK(r >= 2 && c.shape(0)[r - 1] == c.shape(0)[r - 2], ShapeError,
              c.where() << ": X must be [..., M, M] (" << c.inputs_string() << ")");
  return {{c.dtype(0), Shape(c.shape(0).begin(), c.shape(0).end() - 2)}};
}

double Determinant(std::vector<double>& a, int64_t m) {
  double det = 1;
  for (int64_t col = 0; col < m; ++col) {
    int64_t p = col;
    for (int64_t r = col + 1; r < m; ++r)
      if (std::abs(a[r * m + col]) > std::abs(a[p * m + col])) p = r;
    if (a[p * m + col] == 0) return 0;
    if (p != col) {
      for (int64_t j = 0; j < m; ++j) std::swap(a[p * m + j], a[col * m + j]);
      det = -det;
    }
    const double pivot = a[col * m + col];
    det *= pivot;
    for (int64_t r = col + 1; r < m; ++r) {
      const double f = a[r * m + col] / pivot;
      for (int64_t j = col + 1; j < m; ++j) a[r * m + j] -= f * a[col * m + j];
    }
  }
  return det;
}

void Forward(KernelCtx& k, const NoAttrs&) {
  const Tensor& y = k.output(0);
  const Tensor& x = k.input(0);
  const int64_t m = x.shape().back();
  const std::vector<double> v = x.ToVector<double>();
  VisitFloat(y.dtype(), [&]<class T>(Tag<T>) {
    T* out = y.data<T>();
    ParallelFor(0, y.numel(), 1, [&](int64_t lo, int64_t hi) {
      std::vector<double> a(m * m);
      for (int64_t i = lo; i < hi; ++i) {
        std::copy(v.begin() + i * m * m, v.begin() + (i + 1) * m * m, a.begin());
        out[i] = static_cast<T>(Determinant(a, m));
      }
    });
  });
}

const std::vector<DType> kDet11 = {DType::kFloat16, DType::kFloat32, DType::kFloat64};

}  // namespace

SINGA_REGISTER_OP(Det, NoAttrs)
    .since_opset(11)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(kDet11)
    .infer(Infer)
    .kernel(Forward);
// 22 added bfloat16.
SINGA_REGISTER_OP(Det, NoAttrs)
    .since_opset(22)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
