// MatMulInteger and QLinearMatMul: numpy.matmul of 8-bit integers with zero
// points subtracted, accumulated in int32.
//   MatMulInteger: y = (a - a_zero_point) @ (b - b_zero_point)           (int32)
//   QLinearMatMul: y = saturate(round((a_scale * b_scale / y_scale) *
//                      ((a - a_zp) @ (b - b_zp))) + y_zp)         (y_zp's dtype)
// Zero points and scales of a are per tensor or per row (1-D of a's M), of b
// per tensor or per column (1-D of b's N). The product runs on the MatMul
// plain-loop kernel in int32.
// https://onnx.ai/onnx/operators/onnx__MatMulInteger.html
// https://onnx.ai/onnx/operators/onnx__QLinearMatMul.html
#include <algorithm>
#include <cmath>

#include "kernels/cpu/matmul.h"
#include "ops/common.h"

namespace singa {
namespace {

const std::vector<DType> kInt8s = {DType::kInt8, DType::kUInt8};

Shape ProductShape(const Shape& a, const Shape& b, const std::string& where,
                   const std::string& inputs) {
  SINGA_CHECK(!a.empty() && !b.empty(), ShapeError,
              where << ": inputs must have rank >= 1 (" << inputs << ")");
  const int64_t ka = a.back(), kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  SINGA_CHECK(
      ka == kb, ShapeError,
      where << ": inner dimensions differ, " << ka << " vs " << kb << " (" << inputs << ")");
  Shape batch_a(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  Shape batch_b(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  Shape out = BroadcastShapes(batch_a, batch_b, where);
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  return out;
}

// Checks a per-tensor or 1-D (of size n) scale/zero point.
void CheckParam(const InferCtx& c, int i, int64_t n, const char* what) {
  if (!c.has_input(i)) return;
  const Shape& s = c.shape(i);
  SINGA_CHECK(NumElements(s) == 1 || (s.size() == 1 && s[0] == n), ShapeError,
              c.where() << ": " << c.op().input_names[i] << " must be a scalar or 1-D of " << n
                        << " (" << what << "), got " << c.inputs_string());
}

int64_t Rows(const Shape& a) { return a.size() >= 2 ? a[a.size() - 2] : 1; }
int64_t Cols(const Shape& b) { return b.size() >= 2 ? b.back() : 1; }

// `t` minus its zero point as int32; the zero point is per tensor or, along
// the axis `per` counts from the end (2: rows of a, 1: columns of b), 1-D.
Tensor Centered(const Tensor& t, const Tensor& zp, int per) {
  Tensor out(t.shape(), DType::kInt32);
  const std::vector<int64_t> v = t.ToVector<int64_t>();
  std::vector<int64_t> z = zp.defined() ? zp.ToVector<int64_t>() : std::vector<int64_t>{0};
  const int64_t nd = t.ndim();
  const int64_t dim = nd >= per ? t.shape()[nd - per] : 1;
  const int64_t inner = per == 2 && nd >= 1 ? t.shape()[nd - 1] : 1;
  int32_t* p = out.data<int32_t>();
  for (size_t i = 0; i < v.size(); ++i) {
    const int64_t zi = z.size() == 1 ? 0 : (static_cast<int64_t>(i) / inner) % dim;
    p[i] = static_cast<int32_t>(v[i] - z[zi]);
  }
  return out;
}

// The int32 product of the centered operands, shaped like numpy.matmul's.
Tensor IntProduct(const Tensor& a32, const Tensor& b32, const Shape& out_shape) {
  Tensor a = a32, b = b32;
  if (a.ndim() == 1) a = a.Unsqueeze(0);
  if (b.ndim() == 1) b = b.Unsqueeze(1);
  const int64_t r = std::max(a.ndim(), b.ndim());
  while (a.ndim() < r) a = a.Unsqueeze(0);
  while (b.ndim() < r) b = b.Unsqueeze(0);
  Shape full(r);
  for (int64_t d = 0; d + 2 < r; ++d)
    full[d] = a.shape()[d] == 0 || b.shape()[d] == 0 ? 0 : std::max(a.shape()[d], b.shape()[d]);
  full[r - 2] = a.shape()[r - 2];
  full[r - 1] = b.shape()[r - 1];
  Tensor y(out_shape, DType::kInt32);
  if (y.numel() > 0) cpu::MatMulLoops(a, b, y.Reshape(full));
  return y;
}

// ---- MatMulInteger --------------------------------------------------------------

SpecList MatMulIntegerInfer(const InferCtx& c, const NoAttrs&) {
  const Shape out = ProductShape(c.shape(0), c.shape(1), c.where(), c.inputs_string());
  CheckParam(c, 2, Rows(c.shape(0)), "per row of A");
  CheckParam(c, 3, Cols(c.shape(1)), "per column of B");
  return {{DType::kInt32, out}};
}

void MatMulIntegerForward(KernelCtx& k, const NoAttrs&) {
  const Tensor a = Centered(k.input(0), k.has_input(2) ? k.input(2) : Tensor(), 2);
  const Tensor b = Centered(k.input(1), k.has_input(3) ? k.input(3) : Tensor(), 1);
  k.outputs[0].CopyFrom(IntProduct(a, b, k.output(0).shape()));
}

// ---- QLinearMatMul --------------------------------------------------------------
// Inputs: a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point.

SpecList QLinearMatMulInfer(const InferCtx& c, const NoAttrs&) {
  const Shape out = ProductShape(c.shape(0), c.shape(3), c.where(), c.inputs_string());
  const int64_t m = Rows(c.shape(0)), n = Cols(c.shape(3));
  CheckParam(c, 1, m, "per row of a");
  CheckParam(c, 2, m, "per row of a");
  CheckParam(c, 4, n, "per column of b");
  CheckParam(c, 5, n, "per column of b");
  CheckParam(c, 6, 1, "per tensor");
  CheckParam(c, 7, 1, "per tensor");
  return {{c.has_input(7) ? c.dtype(7) : c.dtype(0), out}};
}

// Element i of a per-tensor or 1-D parameter as double.
struct Param {
  std::vector<double> v;
  double operator[](int64_t i) const { return v.size() == 1 ? v[0] : v[i]; }
};
Param ReadParam(const Tensor& t) { return {t.AsType(DType::kFloat64).ToVector<double>()}; }

// `v` rounded to float type `dt` (the scales' arithmetic happens in their dtype).
double RoundTo(DType dt, double v) {
  return VisitFloat(dt, [v]<class T>(Tag<T>) { return static_cast<double>(static_cast<T>(v)); });
}

void QLinearMatMulForward(KernelCtx& k, const NoAttrs&) {
  const Tensor a = Centered(k.input(0), k.has_input(2) ? k.input(2) : Tensor(), 2);
  const Tensor b = Centered(k.input(3), k.has_input(5) ? k.input(5) : Tensor(), 1);
  const Tensor& y = k.output(0);
  const Tensor acc = IntProduct(a, b, y.shape());
  const Param sa = ReadParam(k.input(1)), sb = ReadParam(k.input(4)), sy = ReadParam(k.input(6));
  const double zy = k.has_input(7) ? ReadParam(k.input(7))[0] : 0.0;
  const DType st = k.input(1).dtype();
  const int64_t n = y.ndim() >= 1 && k.input(3).ndim() >= 2 ? y.shape().back() : 1;
  const int64_t m = k.input(0).ndim() >= 2 ? k.input(0).shape()[k.input(0).ndim() - 2] : 1;
  const int32_t* pa = acc.data<int32_t>();
  const DType yt = y.dtype();
  const double lo = yt == DType::kInt8 ? -128 : 0, hi = yt == DType::kInt8 ? 127 : 255;
  VisitNumeric(yt, [&]<class T>(Tag<T>) {
    T* py = y.data<T>();
    for (int64_t i = 0; i < acc.numel(); ++i) {
      const int64_t col = i % n, row = (i / n) % m;
      const double f = RoundTo(st, RoundTo(st, sa[row] * sb[col]) / sy[0]);
      py[i] = static_cast<T>(std::clamp(std::nearbyint(pa[i] * f + zy), lo, hi));
    }
  });
}

std::vector<DType> ScaleTypes(int opset) {
  if (opset >= 21) return {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  return {DType::kFloat32};
}

void RegisterQLinearMatMul(int opset) {
  OpBuilder<NoAttrs>("QLinearMatMul")
      .since_opset(opset)
      .inputs({"a", "a_scale", "a_zero_point", "b", "b_scale", "b_zero_point", "y_scale",
               "y_zero_point"})
      .outputs({"y"})
      .dtypes(kInt8s, {0, 2})
      .dtypes(kInt8s, {3, 5})
      .dtypes(kInt8s, {7})
      .dtypes(ScaleTypes(opset), {1, 4, 6})
      .infer(QLinearMatMulInfer)
      .kernel(QLinearMatMulForward);
}

[[maybe_unused]] const bool kRegistered = [] {
  RegisterQLinearMatMul(10);
  RegisterQLinearMatMul(21);  // float16/bfloat16 scales
  return true;
}();

}  // namespace

SINGA_REGISTER_OP(MatMulInteger, NoAttrs)
    .since_opset(10)
    .inputs({"A", "B", "a_zero_point?", "b_zero_point?"})
    .outputs({"Y"})
    .dtypes(kInt8s, {0, 2})
    .dtypes(kInt8s, {1, 3})
    .infer(MatMulIntegerInfer)
    .kernel(MatMulIntegerForward);

}  // namespace singa
