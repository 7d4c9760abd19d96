// GridSample: samples X [N, C, D1..Dk] at the normalized positions of grid
// [N, O1..Ok, k] (grid[..., 0] is the last spatial axis, in [-1, 1]), giving
// Y [N, C, O1..Ok]. A position p maps to x = (p + 1) / 2 * (D - 1) with
// align_corners, else ((p + 1) * D - 1) / 2. Modes: nearest (round half to
// even), linear (2^k taps), cubic (4^k taps, Keys' a = -0.75). padding_mode:
// zeros (taps outside read 0), border (positions clamp), reflection
// (positions reflect at the borders: [0, D-1] with align_corners, else
// [-0.5, D-0.5]). Taps outside X after that read 0 (zeros), the clamped tap
// (border) or the reflected tap (reflection).
// Opset 16: 4-D X only, modes named bilinear/bicubic; opset 20: any rank,
// modes linear/cubic (both namings are accepted in both; the default is
// linear). X is a float tensor here (the spec allows any dtype).
// Backward: the internal op GridSampleGrad (a plain loop).
// https://onnx.ai/onnx/operators/onnx__GridSample.html
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct GridSampleAttrs {
  int64_t align_corners = 0;
  std::string mode = "linear";
  std::string padding_mode = "zeros";
};

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Parsed {
  Mode mode;
  Padding padding;
};

Parsed Parse(const std::string& where, const GridSampleAttrs& a) {
  Parsed p{};
  if (a.mode == "nearest")
    p.mode = Mode::kNearest;
  else if (a.mode == "linear" || a.mode == "bilinear")
    p.mode = Mode::kLinear;
  else if (a.mode == "cubic" || a.mode == "bicubic")
    p.mode = Mode::kCubic;
  else
    SINGA_CHECK(false, ShapeError,
                where << ": mode '" << a.mode << "' is not nearest, linear or cubic");
  if (a.padding_mode == "zeros")
    p.padding = Padding::kZeros;
  else if (a.padding_mode == "border")
    p.padding = Padding::kBorder;
  else if (a.padding_mode == "reflection")
    p.padding = Padding::kReflection;
  else
    SINGA_CHECK(
        false, ShapeError,
        where << ": padding_mode '" << a.padding_mode << "' is not zeros, border or reflection");
  return p;
}

template <int kVersion>
SpecList Infer(const InferCtx& c, const GridSampleAttrs& a) {
  if constexpr (kVersion < 20)
    SINGA_CHECK(c.rank(0) == 4, ShapeError,
                c.where() << ": X must be 4-D before opset 20 (" << c.inputs_string() << ")");
  Parse(c.where(), a);
  const Shape &x = c.shape(0), &grid = c.shape(1);
  const int64_t nd = c.rank(0) - 2;
  SINGA_CHECK(nd >= 1 && c.rank(1) == nd + 2 && grid[0] == x[0] && grid.back() == nd, ShapeError,
              c.where() << ": grid must be [N, O1..O" << nd << ", " << nd << "] for X of rank "
                        << c.rank(0) << " (" << c.inputs_string() << ")");
  Shape y = {x[0], x[1]};
  y.insert(y.end(), grid.begin() + 1, grid.end() - 1);
  return {{c.dtype(0), y}};
}

double Denormalize(double p, int64_t length, bool align) {
  return align ? (p + 1) / 2.0 * (length - 1) : ((p + 1) * length - 1) / 2.0;
}

double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (x < lo) {
    const double dx = lo - x;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi;
    const int64_t n = static_cast<int64_t>(dx / range);
    const double r = dx - static_cast<double>(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void CubicCoeffs(double x, double* c) {
  constexpr double a = -0.75;
  x = std::abs(x);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

// The derivative of CubicCoeffs' coefficients with respect to x in [0, 1).
void CubicCoeffsDerivative(double x, double* d) {
  constexpr double a = -0.75;
  const double u = x + 1, y = 1 - x, z = 2 - x;
  d[0] = 3 * a * u * u - 10 * a * u + 8 * a;
  d[1] = 3 * (a + 2) * x * x - 2 * (a + 3) * x;
  d[2] = -(3 * (a + 2) * y * y - 2 * (a + 3) * y);
  d[3] = -(3 * a * z * z - 10 * a * z + 8 * a);
}

// One sampling position's geometry, per spatial axis i: up to 4 taps' indices
// into X (-1: reads 0), their weights, the weights' derivatives with respect
// to the position, and the position's derivative with respect to the grid.
struct Geometry {
  Parsed p;
  bool align;
  int64_t nd, plane, points, taps1, taps;
  std::vector<int64_t> dims, xstride;
  std::vector<double> lo, hi;

  Geometry(const Shape& x, const Shape& grid, const GridSampleAttrs& a)
      : p(Parse("GridSample", a)), align(a.align_corners != 0) {
    nd = static_cast<int64_t>(x.size()) - 2;
    dims.resize(nd);
    xstride.resize(nd);
    plane = 1;
    for (int64_t i = nd - 1; i >= 0; --i) {
      dims[i] = x[2 + i];
      xstride[i] = plane;
      plane *= dims[i];
    }
    points = 1;
    for (int64_t i = 0; i < nd; ++i) points *= grid[1 + i];
    lo.resize(nd);
    hi.resize(nd);
    for (int64_t i = 0; i < nd; ++i) {
      lo[i] = align ? 0.0 : -0.5;
      hi[i] = align ? dims[i] - 1.0 : dims[i] - 0.5;
    }
    taps1 = p.mode == Mode::kNearest ? 1 : p.mode == Mode::kLinear ? 2 : 4;
    taps = 1;
    for (int64_t i = 0; i < nd; ++i) taps *= taps1;
  }

  // g: the grid entry of axis i (grid's last entries hold the first axes).
  void Axis(int64_t i, double g, int64_t* idx, double* wt, double* dwt, double* dv) const {
    double v = Denormalize(g, dims[i], align);
    *dv = align ? (dims[i] - 1) / 2.0 : dims[i] / 2.0;
    if (p.mode == Mode::kNearest) {
      v = std::nearbyint(v);
      *dv = 0;
    }
    if (v < lo[i] || v > hi[i]) {
      if (p.padding == Padding::kBorder) {
        v = std::clamp(v, 0.0, static_cast<double>(dims[i] - 1));
        *dv = 0;
      } else if (p.padding == Padding::kReflection) {
        const double r = Reflect(v, lo[i], hi[i]);
        // Each reflection flips the direction: an odd number of them keeps it.
        const double range = hi[i] - lo[i];
        const double dist = v < lo[i] ? lo[i] - v : v - hi[i];
        if (static_cast<int64_t>(dist / range) % 2 == 0) *dv = -*dv;
        v = r;
      }
    }
    auto tap = [&](int64_t t) -> int64_t {
      if (t >= 0 && t < dims[i]) return t;
      if (p.padding == Padding::kZeros) return -1;
      if (p.padding == Padding::kBorder) return std::clamp<int64_t>(t, 0, dims[i] - 1);
      return static_cast<int64_t>(Reflect(static_cast<double>(t), lo[i], hi[i]));
    };
    if (p.mode == Mode::kNearest) {
      idx[0] = tap(static_cast<int64_t>(v));
      wt[0] = 1.0;
      dwt[0] = 0.0;
      return;
    }
    const double f = std::floor(v);
    const int64_t t0 = static_cast<int64_t>(f);
    if (p.mode == Mode::kLinear) {
      idx[0] = tap(t0);
      idx[1] = tap(t0 + 1);
      wt[0] = 1.0 - (v - f);
      wt[1] = v - f;
      dwt[0] = -1.0;
      dwt[1] = 1.0;
    } else {
      CubicCoeffs(v - f, wt);
      CubicCoeffsDerivative(v - f, dwt);
      for (int t = 0; t < 4; ++t) idx[t] = tap(t0 - 1 + t);
    }
  }

  // Tap t's offset in a plane of X (-1 when it reads 0), its weight and, per
  // axis j, the weight's derivative along j (dw, when given).
  int64_t Tap(int64_t t, const int64_t* idx, const double* wt, const double* dwt, double* w,
              double* dw) const {
    int64_t off = 0;
    *w = 1.0;
    if (dw) std::fill(dw, dw + nd, 1.0);
    for (int64_t i = nd - 1; i >= 0; --i) {
      const int64_t j = t % taps1;
      t /= taps1;
      const int64_t at = idx[i * 4 + j];
      if (at < 0) return -1;
      off += at * xstride[i];
      *w *= wt[i * 4 + j];
      if (dw)
        for (int64_t k = 0; k < nd; ++k) dw[k] *= k == i ? dwt[i * 4 + j] : wt[i * 4 + j];
    }
    return off;
  }
};

template <class T>
void Sample(const Tensor& x_in, const Tensor& grid_in, const Tensor& y, const GridSampleAttrs& a) {
  using A = Acc<T>;
  const Tensor x = x_in.Contiguous();
  const Tensor grid = grid_in.Contiguous();
  const Geometry geo(x.shape(), grid.shape(), a);
  const int64_t nd = geo.nd, chans = x.dim(1), points = geo.points;
  const T* px = x.data<T>();
  const T* pg = grid.data<T>();
  T* py = y.data<T>();
  ParallelFor(0, x.dim(0) * points, 64, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> idx(nd * 4);
    std::vector<double> wt(nd * 4), dwt(nd * 4);
    double dv;
    for (int64_t np = begin; np < end; ++np) {
      const int64_t n = np / points, pt = np % points;
      const T* gp = pg + np * nd;
      for (int64_t i = 0; i < nd; ++i)
        geo.Axis(i, static_cast<double>(static_cast<A>(gp[nd - 1 - i])), &idx[i * 4], &wt[i * 4],
                 &dwt[i * 4], &dv);
      for (int64_t c = 0; c < chans; ++c) {
        const T* xc = px + (n * chans + c) * geo.plane;
        A sum = 0;
        for (int64_t t = 0; t < geo.taps; ++t) {
          double w;
          const int64_t off = geo.Tap(t, idx.data(), wt.data(), dwt.data(), &w, nullptr);
          if (off >= 0) sum += static_cast<A>(w) * static_cast<A>(xc[off]);
        }
        py[(n * chans + c) * points + pt] = static_cast<T>(sum);
      }
    }
  });
}

// GridSampleGrad (domain ai.singa): (dY, X, grid) -> (dX, dgrid). dX adds
// dY times each tap's weight at the tap; dgrid sums dY * X[tap] * the
// weight's derivative along each axis, times that axis' position's
// derivative with respect to its grid entry (0 where nearest rounds or border
// clamps, negated by each reflection).
template <class T>
void SampleGrad(const Tensor& dy_in, const Tensor& x_in, const Tensor& grid_in, const Tensor& dx,
                const Tensor& dgrid, const GridSampleAttrs& a) {
  using A = Acc<T>;
  const Tensor dy = dy_in.Contiguous(), x = x_in.Contiguous(), grid = grid_in.Contiguous();
  const Geometry geo(x.shape(), grid.shape(), a);
  const int64_t nd = geo.nd, chans = x.dim(1), points = geo.points;
  const T* pdy = dy.data<T>();
  const T* px = x.data<T>();
  const T* pg = grid.data<T>();
  T* pdx = dx.data<T>();
  T* pdg = dgrid.data<T>();
  // One batch entry per task: its points all scatter into the same dX[n].
  ParallelFor(0, x.dim(0), 1, [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> idx(nd * 4);
    std::vector<double> wt(nd * 4), dwt(nd * 4), dv(nd), dw(nd), acc(nd);
    std::vector<A> dxa(chans * geo.plane);
    for (int64_t n = lo; n < hi; ++n) {
      std::fill(dxa.begin(), dxa.end(), A(0));
      for (int64_t pt = 0; pt < points; ++pt) {
        const T* gp = pg + (n * points + pt) * nd;
        for (int64_t i = 0; i < nd; ++i)
          geo.Axis(i, static_cast<double>(static_cast<A>(gp[nd - 1 - i])), &idx[i * 4], &wt[i * 4],
                   &dwt[i * 4], &dv[i]);
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t t = 0; t < geo.taps; ++t) {
          double w;
          const int64_t off = geo.Tap(t, idx.data(), wt.data(), dwt.data(), &w, dw.data());
          if (off < 0) continue;
          for (int64_t c = 0; c < chans; ++c) {
            const double g =
                static_cast<double>(static_cast<A>(pdy[(n * chans + c) * points + pt]));
            dxa[c * geo.plane + off] += static_cast<A>(w * g);
            const double xv =
                static_cast<double>(static_cast<A>(px[(n * chans + c) * geo.plane + off]));
            for (int64_t i = 0; i < nd; ++i) acc[i] += g * xv * dw[i];
          }
        }
        T* dgp = pdg + (n * points + pt) * nd;
        for (int64_t i = 0; i < nd; ++i) dgp[nd - 1 - i] = static_cast<T>(acc[i] * dv[i]);
      }
      for (int64_t j = 0; j < chans * geo.plane; ++j)
        pdx[n * chans * geo.plane + j] = static_cast<T>(dxa[j]);
    }
  });
}

void Forward(KernelCtx& k, const GridSampleAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  SINGA_CHECK(
      !k.input(0).empty(), ShapeError,
      "GridSample: X " << k.input(0).ToString() << " is empty but Y " << y.ToString() << " is not");
  VisitFloat(y.dtype(), [&]<class T>(Tag<T>) {
    if (k.input(1).dtype() == y.dtype()) return Sample<T>(k.input(0), k.input(1), y, a);
    Sample<T>(k.input(0), k.input(1).AsType(y.dtype()), y, a);
  });
}

SpecList GradInfer(const InferCtx& c, const GridSampleAttrs&) {
  return {{c.dtype(1), c.shape(1)}, {c.dtype(2), c.shape(2)}};
}
void GradForward(KernelCtx& k, const GridSampleAttrs& a) {
  const Tensor &dx = k.output(0), &dgrid = k.output(1);
  VisitFloat(dx.dtype(), [&]<class T>(Tag<T>) {
    if (dx.empty() || dgrid.empty()) {
      Tensor(dx).Fill(0);
      Tensor(dgrid).Fill(0);
      return;
    }
    const Tensor grid =
        k.input(2).dtype() == dx.dtype() ? k.input(2) : k.input(2).AsType(dx.dtype());
    const Tensor dg = dgrid.dtype() == dx.dtype() ? dgrid : Tensor(dgrid.shape(), dx.dtype());
    SampleGrad<T>(k.input(0), k.input(1), grid, dx, dg, a);
    if (dg.dtype() != dgrid.dtype()) cpu::ConvertCopy(dg, dgrid);
  });
}

TensorList Backward(const GradCtx& g, const GridSampleAttrs& a) {
  static const OpSchema& grad = OpRegistry::Get("GridSampleGrad", kLatestOpset, "ai.singa");
  return RunOp(grad, TensorList{g.grad_output(0), g.input(0), g.input(1)}, a, 2);
}

}  // namespace

[[maybe_unused]] static const bool kGridSample = RegisterVersions<GridSampleAttrs>(
    "GridSample", {16, 20}, [](OpBuilder<GridSampleAttrs>& b, int v) {
      b.inputs({"X", "grid"})
          .outputs({"Y"})
          .attr("align_corners", &GridSampleAttrs::align_corners)
          .attr("mode", &GridSampleAttrs::mode)
          .attr("padding_mode", &GridSampleAttrs::padding_mode)
          .dtypes(dtypes::kFloats, {0})
          .dtypes(dtypes::kFloats, {1})
          .infer(v >= 20 ? Infer<20> : Infer<16>)
          .kernel(Forward)
          .backward(Backward);
    });

// The internal op of GridSample's backward.
SINGA_REGISTER_OP(GridSampleGrad, GridSampleAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X", "grid"})
    .outputs({"dX", "dgrid"})
    .attr("align_corners", &GridSampleAttrs::align_corners)
    .attr("mode", &GridSampleAttrs::mode)
    .attr("padding_mode", &GridSampleAttrs::padding_mode)
    .dtypes(dtypes::kFloats, {0, 1})
    .dtypes(dtypes::kFloats, {2})
    .infer(GradInfer)
    .kernel(GradForward);

}  // namespace singa
