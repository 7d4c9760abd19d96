// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear: linear
// (de)quantization with a per-tensor, per-axis or blocked scale and zero point.
//   QuantizeLinear:   y = saturate(round_half_even(x / scale) + zero_point)
//   DequantizeLinear: y = (x - zero_point) * scale
// Quantized types: int8/uint8/int16/uint16/int32 (Dequantize), int4/uint4/
// int2/uint2 (held one per byte), float8 e4m3fn/e4m3fnuz/e5m2/e5m2fnuz and
// float4e2m1 (float targets round to nearest even; `saturate` clamps). The
// arithmetic follows the spec's reference: the division happens in the
// promoted type of x and scale (or `precision`), dequantization in float32.
// https://onnx.ai/onnx/operators/onnx__QuantizeLinear.html
// https://onnx.ai/onnx/operators/onnx__DequantizeLinear.html
// https://onnx.ai/onnx/operators/onnx__DynamicQuantizeLinear.html
#include <algorithm>
#include <cmath>

#include "kernels/cpu/float8.h"
#include "ops/common.h"

namespace singa {
namespace {

struct QuantAttrs {
  int64_t axis = 1;
  bool saturate = true;
  int64_t block_size = 0;
  DType output_dtype = DType::kUndefined;
  DType precision = DType::kUndefined;
};

const std::vector<DType> kSmallFloats = {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ,
                                         DType::kFloat8E5M2, DType::kFloat8E5M2FNUZ};

// The quantized types of each opset's QuantizeLinear output and
// DequantizeLinear input (Dequantize adds int32).
std::vector<DType> QuantTypes(int opset, bool dequant) {
  std::vector<DType> v = {DType::kInt8, DType::kUInt8};
  if (dequant) v.push_back(DType::kInt32);
  if (opset >= 19) v.insert(v.end(), kSmallFloats.begin(), kSmallFloats.end());
  if (opset >= 21)
    for (DType d : {DType::kInt16, DType::kUInt16, DType::kInt4, DType::kUInt4}) v.push_back(d);
  if (opset >= 23) v.push_back(DType::kFloat4E2M1);
  if (opset >= 25)
    for (DType d : {DType::kInt2, DType::kUInt2}) v.push_back(d);
  return v;
}

// Float types of x (Quantize) and of scale (both).
std::vector<DType> ScaleTypes(int opset) {
  if (opset >= 19) return {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
  return {DType::kFloat32};
}

bool Contains(const std::vector<DType>& v, DType d) {
  return std::find(v.begin(), v.end(), d) != v.end();
}

// [lo, hi] of an integer quantized type.
std::pair<double, double> IntRange(DType dt) {
  switch (dt) {
    case DType::kInt4:
      return {-8, 7};
    case DType::kUInt4:
      return {0, 15};
    case DType::kInt2:
      return {-2, 1};
    case DType::kUInt2:
      return {0, 3};
    default:
      return VisitNumeric(dt, []<class T>(Tag<T>) {
        return std::pair<double, double>(static_cast<double>(std::numeric_limits<T>::min()),
                                         static_cast<double>(std::numeric_limits<T>::max()));
      });
  }
}

// Every element of `t` (any dtype, including the packed ones) as double, in
// row-major order.
std::vector<double> Decode(const Tensor& t) {
  if (!cpu::IsPacked(t.dtype())) return t.AsType(DType::kFloat64).ToVector<double>();
  const Tensor c = t.Contiguous();
  const uint8_t* p = static_cast<const uint8_t*>(c.raw_data());
  std::vector<double> v(c.numel());
  const DType dt = t.dtype();
  for (int64_t i = 0; i < c.numel(); ++i)
    v[i] = cpu::IsSmallFloat(dt) ? cpu::DecodeFloat8(dt, p[i])
                                 : static_cast<double>(cpu::DecodeSmallInt(dt, p[i]));
  return v;
}

// Maps a flat index of x to the index of its scale/zero point: per tensor,
// per axis (a 1-D scale along `axis`) or blocked (scale of x's rank, `axis`
// divided into blocks of `block`).
struct ScaleIndex {
  enum Kind { kTensor, kAxis, kBlocked } kind = kTensor;
  int64_t dim = 1, inner = 1, block = 1, sdim = 1;
  int64_t operator()(int64_t i) const {
    if (kind == kTensor) return 0;
    const int64_t a = (i / inner) % dim;
    if (kind == kAxis) return a;
    const int64_t o = i / (inner * dim), r = i % inner;
    return (o * sdim + a / block) * inner + r;
  }
};

// Checks the scale (and zero point) shapes against x and the attributes.
ScaleIndex MakeScaleIndex(const Shape& x, const Shape& s, int64_t axis_attr, int64_t block_size,
                          const std::string& where, const std::string& inputs) {
  ScaleIndex idx;
  const int64_t n = NumElements(s);
  SINGA_CHECK(block_size >= 0, ShapeError,
              where << ": block_size must be >= 0, got " << block_size);
  if (s.size() <= 1 && n == 1) return idx;
  const int64_t axis = NormalizeAxis(axis_attr, static_cast<int64_t>(x.size()), where);
  idx.dim = x[axis];
  for (size_t d = axis + 1; d < x.size(); ++d) idx.inner *= x[d];
  if (block_size == 0) {
    SINGA_CHECK(s.size() == 1 && s[0] == x[axis], ShapeError,
                where << ": a per-axis scale must be 1-D of size " << x[axis] << " (axis " << axis
                      << "), got " << inputs);
    idx.kind = ScaleIndex::kAxis;
    return idx;
  }
  bool ok = s.size() == x.size();
  for (size_t d = 0; ok && d < x.size(); ++d)
    ok = static_cast<int64_t>(d) == axis ? s[d] == (x[d] + block_size - 1) / block_size
                                         : s[d] == x[d];
  SINGA_CHECK(ok, ShapeError,
              where << ": a blocked scale must have x's shape with axis " << axis
                    << " divided into blocks of " << block_size << " (" << inputs << ")");
  idx.kind = ScaleIndex::kBlocked;
  idx.block = block_size;
  idx.sdim = s[axis];
  return idx;
}

void CheckScales(const InferCtx& c, const QuantAttrs& a) {
  // A one-element zero point may be 1-D beside a scalar scale.
  if (c.has_input(2))
    SINGA_CHECK(
        c.shape(2) == c.shape(1) || (NumElements(c.shape(2)) == 1 && NumElements(c.shape(1)) == 1),
        ShapeError,
        c.where() << ": zero point and scale shapes differ (" << c.inputs_string() << ")");
  MakeScaleIndex(c.shape(0), c.shape(1), a.axis, a.block_size, c.where(), c.inputs_string());
}

// The type x / scale is computed in: `precision`, else numpy's promotion of
// the two (int32 with a float promotes to float64; float16 with bfloat16 to
// float32).
DType DivisionType(DType x, DType s, DType precision) {
  if (precision != DType::kUndefined) return precision;
  if (x == DType::kInt32) return DType::kFloat64;
  return x == s ? x : DType::kFloat32;
}

// `v` rounded to float type `dt`.
double RoundTo(DType dt, double v) {
  switch (dt) {
    case DType::kFloat32:
      return static_cast<float>(v);
    case DType::kFloat16:
      return static_cast<float>(Half(static_cast<float>(v)));
    case DType::kBFloat16:
      return static_cast<float>(BFloat16(static_cast<float>(v)));
    default:
      return v;
  }
}

// Writes values[i] to y (dense) in y's dtype; small floats round to nearest
// even (saturating or not), every other type takes values already in range.
void Encode(const std::vector<double>& values, const Tensor& y, bool saturate) {
  const DType dt = y.dtype();
  const int64_t n = y.numel();
  if (cpu::IsPacked(dt)) {
    uint8_t* p = static_cast<uint8_t*>(y.raw_data());
    if (cpu::IsSmallFloat(dt))
      for (int64_t i = 0; i < n; ++i) p[i] = cpu::EncodeFloat8(dt, values[i], saturate);
    else
      for (int64_t i = 0; i < n; ++i)
        p[i] = cpu::EncodeSmallInt(dt, static_cast<int64_t>(values[i]));
    return;
  }
  VisitNumeric(dt, [&]<class T>(Tag<T>) {
    T* p = y.data<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(static_cast<Acc<T>>(values[i]));
  });
}

// ---- QuantizeLinear ------------------------------------------------------------

DType QuantizeOutputType(const InferCtx& c, const QuantAttrs& a) {
  if (c.has_input(2)) {
    SINGA_CHECK(a.output_dtype == DType::kUndefined || a.output_dtype == c.dtype(2), DTypeError,
                c.where() << ": output_dtype " << Name(a.output_dtype)
                          << " differs from the zero point's dtype (" << c.inputs_string() << ")");
    return c.dtype(2);
  }
  return a.output_dtype == DType::kUndefined ? DType::kUInt8 : a.output_dtype;
}

SpecList QuantizeInfer(const InferCtx& c, const QuantAttrs& a, int opset) {
  const DType out = QuantizeOutputType(c, a);
  SINGA_CHECK(
      Contains(QuantTypes(opset, false), out), DTypeError,
      c.where() << ": cannot quantize to " << Name(out) << " (" << c.inputs_string() << ")");
  SINGA_CHECK(a.precision == DType::kUndefined || IsFloat(a.precision), DTypeError,
              c.where() << ": precision must be a float type, got " << Name(a.precision));
  CheckScales(c, a);
  return {{out, c.shape(0)}};
}

void QuantizeForward(KernelCtx& k, const QuantAttrs& a) {
  const Tensor& x = k.input(0);
  const Tensor& y = k.output(0);
  if (x.numel() == 0) return;
  const ScaleIndex idx =
      MakeScaleIndex(x.shape(), k.input(1).shape(), a.axis, a.block_size, "QuantizeLinear", "");
  const std::vector<double> xs = Decode(x), scale = Decode(k.input(1));
  const std::vector<double> zp =
      k.has_input(2) ? Decode(k.input(2)) : std::vector<double>(scale.size(), 0.0);
  const DType div = DivisionType(x.dtype(), k.input(1).dtype(), a.precision);
  const DType dt = y.dtype();
  const bool is_float = cpu::IsSmallFloat(dt);
  const auto [lo, hi] = is_float ? std::pair<double, double>{0, 0} : IntRange(dt);
  std::vector<double> q(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t s = idx(static_cast<int64_t>(i));
    const double v = RoundTo(div, RoundTo(div, xs[i]) / RoundTo(div, scale[s]));
    q[i] = is_float ? v + zp[s] : std::clamp(std::nearbyint(v) + zp[s], lo, hi);
  }
  Encode(q, y, a.saturate);
}

// ---- DequantizeLinear ----------------------------------------------------------

SpecList DequantizeInfer(const InferCtx& c, const QuantAttrs& a, int opset) {
  SINGA_CHECK(
      Contains(QuantTypes(opset, true), c.dtype(0)), DTypeError,
      c.where() << ": cannot dequantize " << Name(c.dtype(0)) << " (" << c.inputs_string() << ")");
  SINGA_CHECK(Contains(ScaleTypes(opset), c.dtype(1)), DTypeError,
              c.where() << ": scale must be float, got " << c.inputs_string());
  // A float8 zero point is a placeholder (it must be 0) and may differ in dtype.
  if (c.has_input(2) && !cpu::IsSmallFloat(c.dtype(0)))
    SINGA_CHECK(c.dtype(2) == c.dtype(0), DTypeError,
                c.where() << ": zero point and x differ in dtype (" << c.inputs_string() << ")");
  const DType out = a.output_dtype == DType::kUndefined ? c.dtype(1) : a.output_dtype;
  SINGA_CHECK(Contains(ScaleTypes(opset), out), DTypeError,
              c.where() << ": output_dtype must be float, got " << Name(out));
  CheckScales(c, a);
  return {{out, c.shape(0)}};
}

void DequantizeForward(KernelCtx& k, const QuantAttrs& a) {
  const Tensor& x = k.input(0);
  const Tensor& y = k.output(0);
  if (x.numel() == 0) return;
  const ScaleIndex idx =
      MakeScaleIndex(x.shape(), k.input(1).shape(), a.axis, a.block_size, "DequantizeLinear", "");
  const std::vector<double> xs = Decode(x), scale = Decode(k.input(1));
  // Float8 zero points must be 0: they are not subtracted.
  const bool use_zp = k.has_input(2) && !cpu::IsSmallFloat(x.dtype());
  const std::vector<double> zp =
      use_zp ? Decode(k.input(2)) : std::vector<double>(scale.size(), 0.0);
  // The spec's reference works in float32 (float64 when an int32 zero point
  // promotes the difference).
  const bool wide = x.dtype() == DType::kInt32 && use_zp;
  std::vector<double> out(xs.size());
  for (size_t i = 0; i < xs.size(); ++i) {
    const int64_t s = idx(static_cast<int64_t>(i));
    if (wide) {
      out[i] = (static_cast<float>(xs[i]) - zp[s]) * scale[s];
    } else {
      const float d = static_cast<float>(xs[i]) - static_cast<float>(zp[s]);
      out[i] = d * static_cast<float>(scale[s]);
    }
  }
  Encode(out, y, true);
}

// ---- DynamicQuantizeLinear -----------------------------------------------------

SpecList DynamicInfer(const InferCtx& c, const NoAttrs&) {
  return {{DType::kUInt8, c.shape(0)}, {DType::kFloat32, {}}, {DType::kUInt8, {}}};
}

// Scale and zero point from the range of x widened to include 0, then
// QuantizeLinear to uint8, all in float32 as the spec's function body.
void DynamicForward(KernelCtx& k, const NoAttrs&) {
  const Tensor x = k.input(0).Contiguous();
  const float* px = x.data<float>();
  const int64_t n = x.numel();
  float mx = 0.0f, mn = 0.0f;
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, px[i]), mn = std::min(mn, px[i]);
  const float scale = (mx == mn ? 1.0f : mx - mn) / 255.0f;
  const float zp = std::nearbyint(std::clamp(0.0f - mn / scale, 0.0f, 255.0f));
  uint8_t* py = k.output(0).data<uint8_t>();
  for (int64_t i = 0; i < n; ++i)
    py[i] = static_cast<uint8_t>(std::clamp(std::nearbyint(px[i] / scale) + zp, 0.0f, 255.0f));
  k.output(1).data<float>()[0] = scale;
  k.output(2).data<uint8_t>()[0] = static_cast<uint8_t>(zp);
}

void Register(int opset, bool quantize) {
  const std::vector<DType> xs = [&] {
    if (!quantize) return QuantTypes(opset, true);
    std::vector<DType> v = ScaleTypes(opset);
    v.push_back(DType::kInt32);
    return v;
  }();
  std::vector<DType> scale = ScaleTypes(opset);
  std::vector<DType> zp = QuantTypes(opset, !quantize);
  OpBuilder<QuantAttrs> b(quantize ? "QuantizeLinear" : "DequantizeLinear");
  b.since_opset(opset)
      .inputs({"x", quantize ? "y_scale" : "x_scale", quantize ? "y_zero_point?" : "x_zero_point?"})
      .outputs({"y"})
      .dtypes(xs, {0})
      .dtypes(scale, {1})
      .dtypes(zp, {2});
  if (opset >= 13) b.attr("axis", &QuantAttrs::axis);
  if (quantize && opset >= 19) b.attr("saturate", &QuantAttrs::saturate);
  if (opset >= 21) b.attr("block_size", &QuantAttrs::block_size);
  if (opset >= 21 && quantize) b.attr("output_dtype", &QuantAttrs::output_dtype);
  if (opset >= 23 && !quantize) b.attr("output_dtype", &QuantAttrs::output_dtype);
  if (opset >= 23 && quantize) b.attr("precision", &QuantAttrs::precision);
  if (quantize) {
    b.infer([opset](const InferCtx& c, const QuantAttrs& a) {
       return QuantizeInfer(c, a, opset);
     }).kernel(QuantizeForward);
  } else {
    b.infer([opset](const InferCtx& c, const QuantAttrs& a) {
       return DequantizeInfer(c, a, opset);
     }).kernel(DequantizeForward);
  }
}

}  // namespace

// QuantizeLinear/DequantizeLinear: 13 adds per-axis scales, 19 float8 and
// saturate, 21 blocking, int16/uint16/int4/uint4 and output_dtype
// (Quantize), 23 float4e2m1, precision (Quantize) and output_dtype
// (Dequantize), 25 int2/uint2. 24 only adds float8e8m0 scales and 28
// float6, neither supported here: the version 23 and 25 registrations serve
// them.
namespace {
[[maybe_unused]] const bool kRegistered = [] {
  for (int opset : {10, 13, 19, 21, 23, 25}) {
    Register(opset, true);
    Register(opset, false);
  }
  return true;
}();
}  // namespace

SINGA_REGISTER_OP(DynamicQuantizeLinear, NoAttrs)
    .since_opset(11)
    .inputs({"x"})
    .outputs({"y", "y_scale", "y_zero_point"})
    .dtypes({DType::kFloat32})
    .infer(DynamicInfer)
    .kernel(DynamicForward);

}  // namespace singa
