// ConvInteger and QLinearConv: convolution (1 to 3 spatial dims, groups,
// strides, dilations, pads/auto_pad) of 8-bit integers with zero points
// subtracted, accumulated in int32.
//   ConvInteger: y = conv(x - x_zero_point, w - w_zero_point)             (int32)
//   QLinearConv: y = saturate(round(x_scale * w_scale / y_scale *
//                    (conv(x - x_zp, w - w_zp) + B)) + y_zp)       (y_zp's dtype)
// w's zero point and scale are per tensor or per output channel.
// https://onnx.ai/onnx/operators/onnx__ConvInteger.html
// https://onnx.ai/onnx/operators/onnx__QLinearConv.html
#include <algorithm>
#include <cmath>

#include "ops/common.h"
#include "ops/window.h"

namespace singa {
namespace {

const std::vector<DType> kInt8s = {DType::kInt8, DType::kUInt8};

struct ConvAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
};

// The geometry of x (input xi) and w (input wi).
ops::Window Geometry(const InferCtx& c, const ConvAttrs& a, int xi, int wi) {
  const Shape& x = c.shape(xi);
  const Shape& w = c.shape(wi);
  SINGA_CHECK(x.size() >= 3 && x.size() <= 5 && w.size() == x.size(), ShapeError,
              c.where() << ": x must be [N, C, D1, ...] with 1 to 3 spatial dimensions and w of "
                        << "its rank, got " << c.inputs_string());
  SINGA_CHECK(a.group >= 1 && w[1] * a.group == x[1] && w[0] % a.group == 0, ShapeError,
              c.where() << ": with group " << a.group
                        << ", x's channels must be w.shape[1] * group and w.shape[0] a multiple "
                        << "of group (" << c.inputs_string() << ")");
  const std::vector<int64_t> kernel(w.begin() + 2, w.end());
  SINGA_CHECK(a.kernel_shape.empty() || a.kernel_shape == kernel, ShapeError,
              c.where() << ": kernel_shape " << ops::IntsString(a.kernel_shape)
                        << " does not match w's spatial shape (" << c.inputs_string() << ")");
  return ops::ResolveWindow(c, Shape(x.begin() + 2, x.end()), kernel, a.strides, a.dilations,
                            a.pads, a.auto_pad, false);
}

Shape OutShape(const InferCtx& c, const ops::Window& win, int xi, int wi) {
  Shape y = {c.shape(xi)[0], c.shape(wi)[0]};
  y.insert(y.end(), win.out.begin(), win.out.end());
  return y;
}

// Checks a per-tensor or 1-D (of size n) scale/zero point.
void CheckParam(const InferCtx& c, int i, int64_t n) {
  if (!c.has_input(i)) return;
  const Shape& s = c.shape(i);
  SINGA_CHECK(NumElements(s) == 1 || (n > 1 && s.size() == 1 && s[0] == n), ShapeError,
              c.where() << ": " << c.op().input_names[i] << " must be a scalar"
                        << (n > 1 ? " or 1-D of the output channels" : "") << ", got "
                        << c.inputs_string());
}

// `t` (dense copy) minus its zero point as int64; the zero point is per tensor
// or per index along axis 0 (w's output channels).
std::vector<int64_t> Centered(const Tensor& t, const Tensor& zp) {
  std::vector<int64_t> v = t.ToVector<int64_t>();
  if (!zp.defined()) return v;
  const std::vector<int64_t> z = zp.ToVector<int64_t>();
  const int64_t per = t.dim(0) == 0 ? 1 : static_cast<int64_t>(v.size()) / t.dim(0);
  for (size_t i = 0; i < v.size(); ++i) v[i] -= z.size() == 1 ? z[0] : z[i / per];
  return v;
}

// The int64 accumulations of the direct convolution, [N, M, out...] dense.
std::vector<int64_t> ConvLoop(const std::vector<int64_t>& x, const Shape& xs,
                              const std::vector<int64_t>& w, const Shape& wsh,
                              const ops::Window& win, int64_t group) {
  const ops::Geo3 g = ops::To3(win);
  const int64_t n_batch = xs[0], c_all = xs[1], m_all = wsh[0], cg = wsh[1], mg = m_all / group;
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t taps = g.k[0] * g.k[1] * g.k[2];
  std::vector<int64_t> y(n_batch * m_all * plane, 0);
  ParallelFor(0, n_batch * m_all, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t n = i / m_all, m = i % m_all, grp = m / mg;
      int64_t* out = y.data() + i * plane;
      for (int64_t ci = 0; ci < cg; ++ci) {
        const int64_t* xp = x.data() + (n * c_all + grp * cg + ci) * in_plane;
        const int64_t* wp = w.data() + (m * cg + ci) * taps;
        for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
          for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
            for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
              int64_t s = 0;
              for (int64_t k0 = 0; k0 < g.k[0]; ++k0) {
                const int64_t p0 = o0 * g.s[0] - g.pb[0] + k0 * g.d[0];
                if (p0 < 0 || p0 >= g.in[0]) continue;
                for (int64_t k1 = 0; k1 < g.k[1]; ++k1) {
                  const int64_t p1 = o1 * g.s[1] - g.pb[1] + k1 * g.d[1];
                  if (p1 < 0 || p1 >= g.in[1]) continue;
                  for (int64_t k2 = 0; k2 < g.k[2]; ++k2) {
                    const int64_t p2 = o2 * g.s[2] - g.pb[2] + k2 * g.d[2];
                    if (p2 < 0 || p2 >= g.in[2]) continue;
                    s += xp[(p0 * g.in[1] + p1) * g.in[2] + p2] *
                         wp[(k0 * g.k[1] + k1) * g.k[2] + k2];
                  }
                }
              }
              out[(o0 * g.out[1] + o1) * g.out[2] + o2] += s;
            }
      }
    }
  });
  return y;
}

// ---- ConvInteger ----------------------------------------------------------------

SpecList ConvIntegerInfer(const InferCtx& c, const ConvAttrs& a) {
  const ops::Window win = Geometry(c, a, 0, 1);
  CheckParam(c, 2, 1);
  CheckParam(c, 3, c.shape(1)[0]);
  return {{DType::kInt32, OutShape(c, win, 0, 1)}};
}

void ConvIntegerForward(KernelCtx& k, const ConvAttrs& a) {
  static const OpSchema& schema = OpRegistry::Get("ConvInteger");
  const ops::Window win = Geometry(InferCtx(schema, k.inputs, 1, ""), a, 0, 1);
  const std::vector<int64_t> acc =
      ConvLoop(Centered(k.input(0), k.has_input(2) ? k.input(2) : Tensor()), k.input(0).shape(),
               Centered(k.input(1), k.has_input(3) ? k.input(3) : Tensor()), k.input(1).shape(),
               win, a.group);
  int32_t* y = k.output(0).data<int32_t>();
  for (size_t i = 0; i < acc.size(); ++i) y[i] = static_cast<int32_t>(acc[i]);
}

// ---- QLinearConv ----------------------------------------------------------------
// Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?.

SpecList QLinearConvInfer(const InferCtx& c, const ConvAttrs& a) {
  const ops::Window win = Geometry(c, a, 0, 3);
  const int64_t m = c.shape(3)[0];
  for (int i : {1, 2, 6, 7}) CheckParam(c, i, 1);
  CheckParam(c, 4, m);
  CheckParam(c, 5, m);
  if (c.has_input(8))
    SINGA_CHECK(c.shape(8) == (Shape{m}), ShapeError,
                c.where() << ": B must be int32[" << m << "], got " << c.inputs_string());
  return {{c.has_input(7) ? c.dtype(7) : c.dtype(0), OutShape(c, win, 0, 3)}};
}

void QLinearConvForward(KernelCtx& k, const ConvAttrs& a) {
  static const OpSchema& schema = OpRegistry::Get("QLinearConv");
  const ops::Window win = Geometry(InferCtx(schema, k.inputs, 1, ""), a, 0, 3);
  std::vector<int64_t> acc =
      ConvLoop(Centered(k.input(0), k.input(2)), k.input(0).shape(),
               Centered(k.input(3), k.input(5)), k.input(3).shape(), win, a.group);
  const Tensor& y = k.output(0);
  const int64_t m_all = y.dim(1), plane = y.numel() / std::max<int64_t>(1, y.dim(0) * m_all);
  const std::vector<int64_t> bias =
      k.has_input(8) ? k.input(8).ToVector<int64_t>() : std::vector<int64_t>(m_all, 0);
  const std::vector<double> sx = k.input(1).AsType(DType::kFloat64).ToVector<double>();
  const std::vector<double> sw = k.input(4).AsType(DType::kFloat64).ToVector<double>();
  const std::vector<double> sy = k.input(6).AsType(DType::kFloat64).ToVector<double>();
  const double zy = k.input(7).AsType(DType::kFloat64).ToVector<double>()[0];
  const double lo = y.dtype() == DType::kInt8 ? -128 : 0,
               hi = y.dtype() == DType::kInt8 ? 127 : 255;
  // The scale factor in float32, as the spec's reference computes it.
  std::vector<double> factor(m_all);
  for (int64_t m = 0; m < m_all; ++m)
    factor[m] = static_cast<float>(static_cast<float>(sx[0] * sw[sw.size() == 1 ? 0 : m]) / sy[0]);
  VisitNumeric(y.dtype(), [&]<class T>(Tag<T>) {
    T* py = y.data<T>();
    for (size_t i = 0; i < acc.size(); ++i) {
      const int64_t m = (static_cast<int64_t>(i) / plane) % m_all;
      const double r = static_cast<double>(acc[i] + bias[m]) * factor[m] + zy;
      py[i] = static_cast<T>(std::nearbyint(std::clamp(r, lo, hi)));
    }
  });
}

template <class B>
B& ConvAttrList(B& b) {
  return b.attr("auto_pad", &ConvAttrs::auto_pad)
      .attr("dilations", &ConvAttrs::dilations)
      .attr("group", &ConvAttrs::group)
      .attr("kernel_shape", &ConvAttrs::kernel_shape)
      .attr("pads", &ConvAttrs::pads)
      .attr("strides", &ConvAttrs::strides);
}

[[maybe_unused]] const bool kRegistered = [] {
  {
    OpBuilder<ConvAttrs> b("ConvInteger");
    b.since_opset(10)
        .inputs({"x", "w", "x_zero_point?", "w_zero_point?"})
        .outputs({"y"})
        .dtypes(kInt8s, {0, 2})
        .dtypes(kInt8s, {1, 3})
        .infer(ConvIntegerInfer)
        .kernel(ConvIntegerForward);
    ConvAttrList(b);
  }
  {
    OpBuilder<ConvAttrs> b("QLinearConv");
    b.since_opset(10)
        .inputs({"x", "x_scale", "x_zero_point", "w", "w_scale", "w_zero_point", "y_scale",
                 "y_zero_point", "B?"})
        .outputs({"y"})
        .dtypes(kInt8s, {0, 2})
        .dtypes(kInt8s, {3, 5})
        .dtypes(kInt8s, {7})
        .dtypes({DType::kFloat32}, {1, 4, 6})
        .dtypes({DType::kInt32}, {8})
        .infer(QLinearConvInfer)
        .kernel(QLinearConvForward);
    ConvAttrList(b);
  }
  return true;
}();

}  // namespace
}  // namespace singa
