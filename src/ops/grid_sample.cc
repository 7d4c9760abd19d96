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

template <class T>
void Sample(const Tensor& x_in, const Tensor& grid_in, const Tensor& y, const GridSampleAttrs& a) {
  using A = Acc<T>;
  const Parsed p = Parse("GridSample", a);
  const bool align = a.align_corners != 0;
  const Tensor x = x_in.Contiguous();
  const Tensor grid = grid_in.Contiguous();
  const int64_t nd = x.ndim() - 2, n_batch = x.dim(0), chans = x.dim(1);
  std::vector<int64_t> dims(nd), xstride(nd);
  int64_t plane = 1;
  for (int64_t i = nd - 1; i >= 0; --i) {
    dims[i] = x.dim(2 + i);
    xstride[i] = plane;
    plane *= dims[i];
  }
  int64_t points = 1;
  for (int64_t i = 0; i < nd; ++i) points *= grid.dim(1 + i);
  std::vector<double> lo(nd), hi(nd);
  for (int64_t i = 0; i < nd; ++i) {
    lo[i] = align ? 0.0 : -0.5;
    hi[i] = align ? dims[i] - 1.0 : dims[i] - 0.5;
  }
  const int taps1 = p.mode == Mode::kNearest ? 1 : p.mode == Mode::kLinear ? 2 : 4;
  int64_t taps = 1;
  for (int64_t i = 0; i < nd; ++i) taps *= taps1;
  const T* px = x.data<T>();
  const T* pg = grid.data<T>();
  T* py = y.data<T>();
  ParallelFor(0, n_batch * points, 64, [&](int64_t begin, int64_t end) {
    // Per axis: the taps' indices into X (-1: reads 0) and weights.
    std::vector<int64_t> idx(nd * 4);
    std::vector<double> wt(nd * 4);
    for (int64_t np = begin; np < end; ++np) {
      const int64_t n = np / points, pt = np % points;
      const T* gp = pg + np * nd;
      for (int64_t i = 0; i < nd; ++i) {
        // grid's last entries hold the first axes' positions.
        double v = Denormalize(static_cast<double>(static_cast<A>(gp[nd - 1 - i])), dims[i], align);
        if (p.mode == Mode::kNearest) v = std::nearbyint(v);
        if (v < lo[i] || v > hi[i]) {
          if (p.padding == Padding::kBorder)
            v = std::clamp(v, 0.0, static_cast<double>(dims[i] - 1));
          else if (p.padding == Padding::kReflection)
            v = Reflect(v, lo[i], hi[i]);
        }
        auto tap = [&](int64_t t) -> int64_t {
          if (t >= 0 && t < dims[i]) return t;
          if (p.padding == Padding::kZeros) return -1;
          if (p.padding == Padding::kBorder) return std::clamp<int64_t>(t, 0, dims[i] - 1);
          return static_cast<int64_t>(Reflect(static_cast<double>(t), lo[i], hi[i]));
        };
        if (p.mode == Mode::kNearest) {
          idx[i * 4] = tap(static_cast<int64_t>(v));
          wt[i * 4] = 1.0;
        } else {
          const double f = std::floor(v);
          const int64_t t0 = static_cast<int64_t>(f);
          if (p.mode == Mode::kLinear) {
            idx[i * 4] = tap(t0);
            idx[i * 4 + 1] = tap(t0 + 1);
            wt[i * 4] = 1.0 - (v - f);
            wt[i * 4 + 1] = v - f;
          } else {
            CubicCoeffs(v - f, &wt[i * 4]);
            for (int t = 0; t < 4; ++t) idx[i * 4 + t] = tap(t0 - 1 + t);
          }
        }
      }
      for (int64_t c = 0; c < chans; ++c) {
        const T* xc = px + (n * chans + c) * plane;
        A sum = 0;
        for (int64_t t = 0; t < taps; ++t) {
          int64_t off = 0, rest = t;
          double w = 1.0;
          bool zero = false;
          for (int64_t i = nd - 1; i >= 0; --i) {
            const int64_t j = rest % taps1;
            rest /= taps1;
            const int64_t at = idx[i * 4 + j];
            if (at < 0) {
              zero = true;
              break;
            }
            off += at * xstride[i];
            w *= wt[i * 4 + j];
          }
          if (!zero) sum += static_cast<A>(w) * static_cast<A>(xc[off]);
        }
        py[(n * chans + c) * points + pt] = static_cast<T>(sum);
      }
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
          .kernel(Forward);
    });

}  // namespace singa
