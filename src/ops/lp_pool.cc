// LpPool: Y = (sum over each window of |X|^p)^(1/p) over the spatial axes of
// X [N, C, D1..Dk] (1-3 spatial dims); padding contributes 0. Window
// geometry as MaxPool's (ops/window.h). Opset 1 had a float p, 2 an int
// (both accepted here); 18 added ceil_mode and dilations.
// Backward: dX = sign(x) |x|^(p-1) * sum over the windows w reading x of
// dY_w / Y_w^(p-1) (0 where Y_w == 0); the sum over windows is
// AveragePoolGrad (count_include_pad) of that times the window size.
// https://onnx.ai/onnx/operators/onnx__LpPool.html
#include <cmath>

#include "ops/grad_util.h"
#include "ops/window.h"
#include "singa/ops/export_ctx.h"

namespace singa {
namespace {

struct LpPoolAttrs {
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0;
  std::vector<int64_t> dilations;
  std::vector<int64_t> kernel_shape;
  float p = 2.0f;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
};

ops::Window LpWindow(const InferCtx& c, const LpPoolAttrs& a) {
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() >= 3 && x.size() <= 5, ShapeError,
              c.where() << ": X must have 1 to 3 spatial dimensions (" << c.inputs_string() << ")");
  SINGA_CHECK(a.p > 0, ShapeError, c.where() << ": p must be positive, got " << a.p);
  SINGA_CHECK(a.kernel_shape.size() == x.size() - 2, ShapeError,
              c.where() << ": kernel_shape " << ops::IntsString(a.kernel_shape) << " must have "
                        << x.size() - 2 << " values (" << c.inputs_string() << ")");
  return ops::ResolveWindow(c, Shape(x.begin() + 2, x.end()), a.kernel_shape, a.strides,
                            a.dilations, a.pads, a.auto_pad, a.ceil_mode != 0);
}

SpecList Infer(const InferCtx& c, const LpPoolAttrs& a) {
  const ops::Window w = LpWindow(c, a);
  Shape y = {c.shape(0)[0], c.shape(0)[1]};
  y.insert(y.end(), w.out.begin(), w.out.end());
  return {{c.dtype(0), y}};
}

template <class T>
void Loop(const Tensor& x_in, const Tensor& y, const ops::Window& win, double p) {
  using A = Acc<T>;
  const Tensor x = x_in.Contiguous();
  const ops::Geo3 g = ops::To3(win);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const T* px = x.data<T>();
  T* py = y.data<T>();
  const A pa = static_cast<A>(p), inv = static_cast<A>(1.0 / p);
  ParallelFor(0, planes, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t plane = lo; plane < hi; ++plane) {
      const T* xp = px + plane * in_plane;
      T* yp = py + plane * out_plane;
      for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
        for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
          for (int64_t o2 = 0; o2 < g.out[2]; ++o2) {
            A sum = 0;
            for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
              const int64_t i0 = o0 * g.s[0] - g.pb[0] + t0 * g.d[0];
              if (i0 < 0 || i0 >= g.in[0]) continue;
              for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
                const int64_t i1 = o1 * g.s[1] - g.pb[1] + t1 * g.d[1];
                if (i1 < 0 || i1 >= g.in[1]) continue;
                for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
                  const int64_t i2 = o2 * g.s[2] - g.pb[2] + t2 * g.d[2];
                  if (i2 < 0 || i2 >= g.in[2]) continue;
                  const A v = std::abs(static_cast<A>(xp[(i0 * g.in[1] + i1) * g.in[2] + i2]));
                  sum += pa == A(2) ? v * v : pa == A(1) ? v : std::pow(v, pa);
                }
              }
            }
            const A r = pa == A(2) ? std::sqrt(sum) : pa == A(1) ? sum : std::pow(sum, inv);
            yp[(o0 * g.out[1] + o1) * g.out[2] + o2] = static_cast<T>(r);
          }
    }
  });
}

void Forward(KernelCtx& k, const LpPoolAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  static const OpSchema& schema = OpRegistry::Get("LpPool");
  const ops::Window w = LpWindow(InferCtx(schema, k.inputs, 1, ""), a);
  VisitFloat(y.dtype(), [&]<class T>(Tag<T>) { Loop<T>(k.input(0), y, w, a.p); });
}

TensorList Backward(const GradCtx& g, const LpPoolAttrs& a) {
  using grad::Mul, grad::Scalar, grad::Where;
  const Tensor &x = g.input(0), &y = g.output(0), &dy = g.grad_output(0);
  const double p = a.p;
  int64_t window = 1;
  for (int64_t k : a.kernel_shape) window *= k;
  const Tensor zero = Scalar(0, y);
  // Y == 0 only when every |x| in the window is 0, where the factor below is 0.
  const Tensor safe_y = Where(Call1("Equal", {y, zero}), Scalar(1, y), y);
  const Tensor per_window = Mul(Mul(dy, Call1("Pow", {safe_y, Scalar(1 - p, y)})),
                                Scalar(static_cast<double>(window), y));
  static const OpSchema& spread = OpRegistry::Get("AveragePoolGrad", kLatestOpset, "ai.singa");
  const TensorList in = {per_window, x};
  const AttrMap attrs = {{"auto_pad", a.auto_pad},
                         {"ceil_mode", a.ceil_mode},
                         {"count_include_pad", int64_t{1}},
                         {"dilations", a.dilations},
                         {"kernel_shape", a.kernel_shape},
                         {"pads", a.pads},
                         {"strides", a.strides}};
  const Tensor sum = spread.Run(in, spread.ParseAttrs(attrs, in))[0];
  const Tensor factor =
      Mul(Call1("Sign", {x}), Call1("Pow", {Call1("Abs", {x}), Scalar(p - 1, x)}));
  return {Mul(sum, factor)};
}

// LpPool-1's p is a float, an int from opset 2 (export targets 11 and newer).
void Export(ExportCtx& c, const LpPoolAttrs& a) {
  SINGA_CHECK(
      a.p == std::round(a.p), UnsupportedOp,
      c.where() << ": p = " << a.p << " is not an integer, which ONNX requires from opset 2");
  AttrMap attrs = c.attrs();
  if (attrs.count("p")) attrs["p"] = static_cast<int64_t>(a.p);
  c.AddNode("LpPool", {c.input_name(0)}, {c.output_name(0)}, attrs);
}

}  // namespace

[[maybe_unused]] static const bool kLpPool =
    RegisterVersions<LpPoolAttrs>("LpPool", {1, 18}, [](OpBuilder<LpPoolAttrs>& b, int v) {
      b.inputs({"X"})
          .outputs({"Y"})
          .attr("auto_pad", &LpPoolAttrs::auto_pad)
          .attr("kernel_shape", &LpPoolAttrs::kernel_shape, true)
          .attr("p", &LpPoolAttrs::p)
          .attr("pads", &LpPoolAttrs::pads)
          .attr("strides", &LpPoolAttrs::strides)
          .dtypes(dtypes::kFloats)
          .infer(Infer)
          .kernel(Forward)
          .backward(Backward)
          .to_onnx(Export);
      if (v >= 18)
        b.attr("ceil_mode", &LpPoolAttrs::ceil_mode).attr("dilations", &LpPoolAttrs::dilations);
    });

}  // namespace singa
