// Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9): resampling of
// every axis (or of `axes`) by a scale, or to given sizes.
//
// Each output coordinate x maps to an input coordinate x_ori by the
// coordinate_transformation_mode; the value is then the nearest input
// element (rounded by nearest_mode), or a linear or cubic (coefficient a)
// interpolation of its neighbours, with indices clamped to the edges
// (exclude_outside drops and renormalizes the weights of outside taps).
// antialias (18+) widens the linear/cubic filter by 1/scale when
// downscaling. tf_crop_and_resize maps through `roi` and writes
// extrapolation_value where x_ori falls outside the input.
// Interpolation is separable: one pass per axis in float64, rounded to the
// output dtype once at the end (integers rounded half to even and
// saturated), which is what the reference computes.
// Upsample and Resize-10 use the asymmetric transform (x_ori = x / scale)
// and, for nearest, x_ori truncated when upscaling and rounded up when
// downscaling (onnxruntime's rule for these opsets).
// Every mode is linear in X, so one backward serves all (see BackwardImpl).
// https://onnx.ai/onnx/operators/onnx__Resize.html
// https://onnx.ai/onnx/operators/onnx__Upsample.html
#include <cfloat>
#include <cmath>
#include <limits>

#include "ops/movement.h"

namespace singa {
namespace {

struct ResizeAttrs {
  int64_t antialias = 0;
  std::vector<int64_t> axes;
  std::string coordinate_transformation_mode = "half_pixel";
  float cubic_coeff_a = -0.75f;
  int64_t exclude_outside = 0;
  float extrapolation_value = 0.0f;
  std::string keep_aspect_ratio_policy = "stretch";
  std::string mode = "nearest";
  std::string nearest_mode = "round_prefer_floor";
};
struct ModeAttrs {  // Resize 10, Upsample 9
  std::string mode = "nearest";
};
struct Upsample7Attrs {
  std::string mode = "nearest";
  std::vector<float> scales;
};

// Resolved parameters for every version.
struct Params {
  std::string mode, ctm, nearest_mode;
  double a = -0.75, extrapolation = 0;
  bool exclude_outside = false, antialias = false;
};
Params FromAttrs(const ResizeAttrs& a) {
  return {a.mode,
          a.coordinate_transformation_mode,
          a.nearest_mode,
          a.cubic_coeff_a,
          a.extrapolation_value,
          a.exclude_outside != 0,
          a.antialias != 0};
}
Params Legacy(const std::string& mode) {
  Params p;
  p.mode = mode;
  p.ctm = "asymmetric";
  p.nearest_mode = "simple";
  return p;
}

// Output shape, per-axis scales, roi ([starts..., ends...] over all axes,
// empty when absent) and the axes to resample, in order.
struct Plan {
  Shape out;
  std::vector<double> scales;
  std::vector<double> roi;
  std::vector<int64_t> axes;
};

std::vector<double> ReadFloats(const Tensor& t) {
  return t.defined() ? t.ToVector<double>() : std::vector<double>{};
}

// `where` names the op for messages.
Plan MakePlan(const Tensor& x, const Tensor& roi_t, const Tensor& scales_t, const Tensor& sizes_t,
              std::vector<int64_t> axes, const std::string& policy, const std::string& where) {
  const int64_t r = x.ndim();
  const Shape& in = x.shape();
  if (axes.empty()) {
    for (int64_t d = 0; d < r; ++d) axes.push_back(d);
  } else {
    for (int64_t& d : axes) {
      SINGA_CHECK(d >= -r && d < r, ShapeError,
                  where << ": axis " << d << " is out of range for " << x.ToString());
      if (d < 0) d += r;
    }
    std::vector<int64_t> sorted = axes;
    std::sort(sorted.begin(), sorted.end());
    SINGA_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), ShapeError,
                where << ": axes " << ToString(axes) << " repeat an axis");
  }
  const size_t k = axes.size();
  const std::vector<double> scales = ReadFloats(scales_t);
  const std::vector<int64_t> sizes =
      sizes_t.defined() ? sizes_t.ToVector<int64_t>() : std::vector<int64_t>{};
  SINGA_CHECK(scales.empty() != sizes.empty(), ShapeError,
              where << ": exactly one of scales and sizes must be given (scales has "
                    << scales.size() << " values, sizes " << sizes.size() << ")");
  Plan p;
  p.axes = axes;
  p.out = in;
  p.scales.assign(r, 1.0);
  if (!scales.empty()) {
    SINGA_CHECK(scales.size() == k, ShapeError,
                where << ": scales has " << scales.size() << " values for " << k << " axes of "
                      << x.ToString());
    for (size_t i = 0; i < k; ++i) {
      SINGA_CHECK(scales[i] > 0, ShapeError,
                  where << ": scale " << scales[i] << " is not positive");
      const double size = scales[i] * static_cast<double>(in[axes[i]]);
      SINGA_CHECK(size < 0x1p62, ShapeError,
                  where << ": scale " << scales[i] << " makes axis " << axes[i] << " of "
                        << x.ToString() << " larger than any tensor");
      p.scales[axes[i]] = scales[i];
      p.out[axes[i]] = static_cast<int64_t>(size);
    }
  } else {
    SINGA_CHECK(sizes.size() == k, ShapeError,
                where << ": sizes has " << sizes.size() << " values for " << k << " axes of "
                      << x.ToString());
    for (size_t i = 0; i < k; ++i) {
      SINGA_CHECK(sizes[i] >= 0, ShapeError, where << ": size " << sizes[i] << " is negative");
      SINGA_CHECK(in[axes[i]] > 0 || sizes[i] == 0, ShapeError,
                  where << ": cannot resize the empty axis " << axes[i] << " of " << x.ToString()
                        << " to " << sizes[i]);
      p.scales[axes[i]] =
          in[axes[i]] > 0 ? static_cast<double>(sizes[i]) / static_cast<double>(in[axes[i]]) : 1.0;
      p.out[axes[i]] = sizes[i];
    }
    if (policy != "stretch") {
      SINGA_CHECK(policy == "not_larger" || policy == "not_smaller", ShapeError,
                  where << ": keep_aspect_ratio_policy must be stretch, not_larger or "
                           "not_smaller, got '"
                        << policy << "'");
      double s = policy == "not_larger" ? INFINITY : 0.0;
      for (int64_t d : axes)
        s = policy == "not_larger" ? std::min(s, p.scales[d]) : std::max(s, p.scales[d]);
      for (int64_t d : axes) {
        p.scales[d] = s;
        p.out[d] = static_cast<int64_t>(s * static_cast<double>(in[d]) + 0.5);
      }
    }
  }
  const std::vector<double> roi = ReadFloats(roi_t);
  if (!roi.empty()) {
    SINGA_CHECK(roi.size() == 2 * k, ShapeError,
                where << ": roi has " << roi.size() << " values, expected " << 2 * k);
    p.roi.assign(2 * r, 0.0);
    for (int64_t d = 0; d < r; ++d) p.roi[r + d] = 1.0;
    for (size_t i = 0; i < k; ++i) {
      p.roi[axes[i]] = roi[i];
      p.roi[r + axes[i]] = roi[k + i];
    }
  }
  return p;
}

void CheckParams(const Params& p, DType dt, const std::string& where) {
  SINGA_CHECK(p.mode == "nearest" || p.mode == "linear" || p.mode == "cubic", ShapeError,
              where << ": mode must be nearest, linear or cubic, got '" << p.mode << "'");
  static const char* kCtm[] = {"half_pixel",        "half_pixel_symmetric", "pytorch_half_pixel",
                               "align_corners",     "asymmetric",           "tf_half_pixel_for_nn",
                               "tf_crop_and_resize"};
  SINGA_CHECK(std::find(std::begin(kCtm), std::end(kCtm), p.ctm) != std::end(kCtm), ShapeError,
              where << ": unknown coordinate_transformation_mode '" << p.ctm << "'");
  static const char* kNearest[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil",
                                   "simple"};
  SINGA_CHECK(
      std::find(std::begin(kNearest), std::end(kNearest), p.nearest_mode) != std::end(kNearest),
      ShapeError, where << ": unknown nearest_mode '" << p.nearest_mode << "'");
  SINGA_CHECK(!(p.antialias && p.mode == "nearest"), ShapeError,
              where << ": antialias needs mode linear or cubic");
  const bool numeric_path = p.mode != "nearest" || p.ctm == "tf_crop_and_resize";
  SINGA_CHECK(!numeric_path || IsNumeric(dt), DTypeError,
              where << ": mode '" << p.mode << "' with '" << p.ctm
                    << "' needs a numeric input, got " << Name(dt));
}

// The taps of one axis: for output j, input indices idx[j*n + t] (clamped)
// with weights w[j*n + t]; extrap[j] marks tf_crop_and_resize positions
// outside the input.
struct Taps {
  int64_t n = 0;
  std::vector<int64_t> idx;
  std::vector<double> w;
  std::vector<uint8_t> extrap;
};

double CubicWeight(double x, double a) {
  x = std::fabs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// Coefficients for fractional position `ratio` in (0, 1] (the reference's
// formulas, term for term).
std::vector<double> Coeffs(const Params& p, double ratio, double scale) {
  if (p.mode == "nearest") {
    const bool integer = ratio == std::floor(ratio);
    if (integer) return {0, 1};
    const std::string& m = p.nearest_mode;
    if (m == "round_prefer_floor") return {double(ratio <= 0.5), double(ratio > 0.5)};
    if (m == "round_prefer_ceil") return {double(ratio < 0.5), double(ratio >= 0.5)};
    if (m == "floor") return {1, 0};
    if (m == "ceil") return {0, 1};
    // simple: truncate when upscaling, round up when downscaling.
    return scale < 1 ? std::vector<double>{0, 1} : std::vector<double>{1, 0};
  }
  const double a = p.a;
  if (p.mode == "linear") {
    if (!p.antialias) return {1 - ratio, ratio};
    const double s = std::min(scale, 1.0);
    const int64_t start = static_cast<int64_t>(std::floor(-1 / s) + 1);
    const int64_t footprint = 2 - 2 * start;
    std::vector<double> c(footprint);
    double sum = 0;
    for (int64_t i = 0; i < footprint; ++i) {
      const double arg = (static_cast<double>(start + i) - ratio) * s;
      c[i] = std::clamp(1 - std::fabs(arg), 0.0, 1.0);
      sum += c[i];
    }
    for (double& v : c) v /= sum;
    return c;
  }
  if (!p.antialias) {
    const double r1 = ratio + 1, q = 1 - ratio, q1 = q + 1;
    return {((a * r1 - 5 * a) * r1 + 8 * a) * r1 - 4 * a,
            ((a + 2) * ratio - (a + 3)) * ratio * ratio + 1, ((a + 2) * q - (a + 3)) * q * q + 1,
            ((a * q1 - 5 * a) * q1 + 8 * a) * q1 - 4 * a};
  }
  const double s = std::min(scale, 1.0);
  const int64_t start = static_cast<int64_t>(std::floor(-2 / s) + 1);
  const int64_t end = 2 - start;
  std::vector<double> c;
  double sum = 0;
  for (int64_t i = start; i < end; ++i) {
    c.push_back(CubicWeight(s * (static_cast<double>(i) - ratio), a));
    sum += c.back();
  }
  for (double& v : c) v /= sum;
  return c;
}

Taps MakeTaps(const Params& p, int64_t in, int64_t out, double scale, double roi_start,
              double roi_end) {
  Taps t;
  const double in_w = static_cast<double>(in);
  const double out_w = scale * in_w;
  t.extrap.assign(out, 0);
  for (int64_t j = 0; j < out; ++j) {
    const double y = static_cast<double>(j);
    double x;
    const std::string& m = p.ctm;
    if (m == "align_corners") {
      x = out_w == 1 ? 0.0 : y * (in_w - 1) / (out_w - 1);
    } else if (m == "asymmetric") {
      x = y / scale;
    } else if (m == "tf_crop_and_resize") {
      x = out_w == 1 ? (roi_end - roi_start) * (in_w - 1) / 2
                     : y * (roi_end - roi_start) * (in_w - 1) / (out_w - 1);
      x += roi_start * (in_w - 1);
      t.extrap[j] = x < 0 || x > in_w - 1;
    } else if (m == "pytorch_half_pixel") {
      x = out_w == 1 ? -0.5 : (y + 0.5) / scale - 0.5;
    } else if (m == "tf_half_pixel_for_nn") {
      x = (y + 0.5) / scale;
    } else if (m == "half_pixel_symmetric") {
      const double adjustment = static_cast<double>(out) / out_w;
      x = in_w / 2 * (1 - adjustment) + (y + 0.5) / scale - 0.5;
    } else {
      x = (y + 0.5) / scale - 0.5;
    }
    const double fl = std::floor(x);
    const double ratio = x == fl ? 1.0 : x - fl;
    std::vector<double> c = Coeffs(p, ratio, scale);
    const int64_t n = static_cast<int64_t>(c.size());
    if (j == 0) {
      t.n = n;
      t.idx.resize(out * n);
      t.w.resize(out * n);
    }
    // The n nearest indices to x (ties to the smaller), as the reference
    // picks them in edge-padded coordinates.
    const int64_t pad = (n + 1) / 2;
    const double xp = x + static_cast<double>(pad);
    const double pp = std::floor(xp);
    const double frac = xp - pp;
    int64_t offset;
    if (n % 2 == 0)
      offset = frac == 0 ? -(n / 2) : -(n / 2) + 1;
    else
      offset = frac <= 0.5 ? -((n - 1) / 2) : -((n - 1) / 2) + 1;
    const int64_t start = static_cast<int64_t>(pp) + offset - pad;
    if (p.exclude_outside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (start + i < 0 || start + i >= in) c[i] = 0;
        sum += c[i];
      }
      if (sum != 0)
        for (double& v : c) v /= sum;
    }
    for (int64_t i = 0; i < n; ++i) {
      t.idx[j * n + i] = std::clamp<int64_t>(start + i, 0, in - 1);
      t.w[j * n + i] = c[i];
    }
  }
  return t;
}

// Whether resampling axis d changes nothing (the reference skips such axes).
bool Identity(const Plan& plan, int64_t d, int64_t in, const Params& p) {
  const int64_t r = static_cast<int64_t>(plan.scales.size());
  const bool roi_default = p.ctm != "tf_crop_and_resize" || plan.roi.empty() ||
                           (plan.roi[d] == 0 && plan.roi[r + d] == 1);
  return plan.out[d] == in && std::fabs(plan.scales[d] - 1.0) <= 1e-9 && roi_default;
}

// dst dense [outer, out, inner] from src dense [outer, in, inner] along one axis.
void Pass(const std::vector<double>& src, std::vector<double>& dst, int64_t outer, int64_t in,
          int64_t inner, int64_t out, const Taps& t, double extrapolation) {
  dst.assign(outer * out * inner, 0.0);
  const int64_t n = t.n;
  ParallelFor(0, outer * out, std::max<int64_t>(1, cpu::kElementwiseGrain / (inner * n + 1)),
              [&](int64_t lo, int64_t hi) {
                for (int64_t r = lo; r < hi; ++r) {
                  const int64_t o = r / out, j = r % out;
                  double* d = dst.data() + r * inner;
                  if (t.extrap[j]) {
                    std::fill(d, d + inner, extrapolation);
                    continue;
                  }
                  for (int64_t k = 0; k < n; ++k) {
                    const double w = t.w[j * n + k];
                    const double* s = src.data() + (o * in + t.idx[j * n + k]) * inner;
                    for (int64_t i = 0; i < inner; ++i) d[i] += w * s[i];
                  }
                }
              });
}

double Saturate(double v, DType dt) {
  if (IsFloat(dt)) {
    const double hi = dt == DType::kFloat64   ? DBL_MAX
                      : dt == DType::kFloat32 ? FLT_MAX
                      : dt == DType::kFloat16 ? 65504.0
                                              : 3.3895313892515355e38;  // bfloat16
    return std::isnan(v) ? v : std::clamp(v, -hi, hi);
  }
  return VisitNumeric(
      dt,
      [&]<class T>(Tag<T>) {
        const double r = std::nearbyint(v);  // half to even, as numpy.round
        return std::clamp(r, static_cast<double>(std::numeric_limits<T>::lowest()),
                          static_cast<double>(std::numeric_limits<T>::max()));
      },
      "Resize");
}

void Run(const Tensor& x, const Tensor& y, const Plan& plan, const Params& p) {
  if (y.numel() == 0) return;
  const int64_t r = x.ndim();
  const bool numeric_path = p.mode != "nearest" || p.ctm == "tf_crop_and_resize";
  if (!numeric_path) {
    // Nearest: one gather with a map per axis (any dtype, exact).
    std::vector<std::vector<int64_t>> maps(r);
    for (int64_t d = 0; d < r; ++d) {
      maps[d].resize(plan.out[d]);
      if (Identity(plan, d, x.shape()[d], p)) {
        for (int64_t j = 0; j < plan.out[d]; ++j) maps[d][j] = j;
        continue;
      }
      const Taps t = MakeTaps(p, x.shape()[d], plan.out[d], plan.scales[d], 0, 1);
      for (int64_t j = 0; j < plan.out[d]; ++j)
        maps[d][j] = t.w[j * t.n] != 0 ? t.idx[j * t.n] : t.idx[j * t.n + 1];
    }
    ops::GatherAxes(x, y, maps, "Resize");
    return;
  }
  Tensor xd(x.shape(), DType::kFloat64);
  cpu::ConvertCopy(x, xd);
  std::vector<double> cur(xd.data<double>(), xd.data<double>() + xd.numel()), next;
  Shape shape = x.shape();
  for (int64_t d : plan.axes) {
    const int64_t in = shape[d];
    if (Identity(plan, d, in, p)) continue;
    int64_t outer = 1, inner = 1;
    for (int64_t e = 0; e < d; ++e) outer *= shape[e];
    for (int64_t e = d + 1; e < r; ++e) inner *= shape[e];
    const double rs = plan.roi.empty() ? 0.0 : plan.roi[d];
    const double re = plan.roi.empty() ? 1.0 : plan.roi[r + d];
    const Taps t = MakeTaps(p, in, plan.out[d], plan.scales[d], rs, re);
    Pass(cur, next, outer, in, inner, plan.out[d], t, p.extrapolation);
    std::swap(cur, next);
    shape[d] = plan.out[d];
  }
  Tensor out(shape, DType::kFloat64);
  double* po = out.data<double>();
  const DType dt = y.dtype();
  ParallelFor(0, out.numel(), cpu::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) po[i] = Saturate(cur[i], dt);
  });
  cpu::ConvertCopy(out, y);
}

// ---- backward ------------------------------------------------------------------
// The output is linear in X: every pass is y = M x along one axis, with M
// [out, in] holding the taps' weights. dX applies the transposed passes in
// reverse order, each a MatMul of M^T [in, out] with dY seen as
// [outer, out, inner]. The weights depend only on shapes and attributes, so
// this is right in a replayed graph too. Extrapolated positions get none.
Tensor BackwardImpl(const GradCtx& g, const Plan& plan, const Params& p) {
  const Tensor& x = g.input(0);
  const Tensor& dy = g.grad_output(0);
  if (x.numel() == 0 || dy.numel() == 0) return Tensor::Zeros(x.shape(), dy.dtype(), dy.device());
  const int64_t r = x.ndim();
  // The shape before each forward pass, to walk them backwards.
  std::vector<Shape> before;
  std::vector<int64_t> done;
  Shape shape = x.shape();
  for (int64_t d : plan.axes) {
    if (Identity(plan, d, shape[d], p)) continue;
    before.push_back(shape);
    done.push_back(d);
    shape[d] = plan.out[d];
  }
  Tensor grad = dy.Contiguous();
  for (size_t i = done.size(); i-- > 0;) {
    const int64_t d = done[i];
    const Shape& s = before[i];
    const int64_t in = s[d], out = plan.out[d];
    int64_t outer = 1, inner = 1;
    for (int64_t e = 0; e < d; ++e) outer *= s[e];
    for (int64_t e = d + 1; e < r; ++e) inner *= s[e];
    const double rs = plan.roi.empty() ? 0.0 : plan.roi[d];
    const double re = plan.roi.empty() ? 1.0 : plan.roi[r + d];
    const Taps t = MakeTaps(p, in, out, plan.scales[d], rs, re);
    std::vector<double> m(in * out, 0.0);
    for (int64_t j = 0; j < out; ++j)
      if (!t.extrap[j])
        for (int64_t k = 0; k < t.n; ++k) m[t.idx[j * t.n + k] * out + j] += t.w[j * t.n + k];
    const Tensor mt = Tensor::FromVector<double>({in, out}, m, dy.device()).AsType(dy.dtype());
    grad = Call1("MatMul", {mt, grad.Reshape({outer, out, inner})}).Reshape(s);
  }
  return grad.Reshape(x.shape());
}

// ---- versions -------------------------------------------------------------------

const Tensor& Opt(const InferCtx& c, int i) {
  static const Tensor kNone;
  return c.has_input(i) ? c.value(i) : kNone;
}
const Tensor& Opt(const KernelCtx& k, int i) {
  static const Tensor kNone;
  return k.has_input(i) ? k.input(i) : kNone;
}

// Resize 11+: X, roi, scales, sizes.
SpecList Infer11(const InferCtx& c, const ResizeAttrs& a) {
  const Params p = FromAttrs(a);
  CheckParams(p, c.dtype(0), c.where());
  const Plan plan = MakePlan(c.input(0), Opt(c, 1), Opt(c, 2), Opt(c, 3), a.axes,
                             a.keep_aspect_ratio_policy, c.where());
  SINGA_CHECK(p.ctm != "tf_crop_and_resize" || !plan.roi.empty(), ShapeError,
              c.where() << ": tf_crop_and_resize needs roi (" << c.inputs_string() << ")");
  return {{c.dtype(0), plan.out}};
}
void Forward11(KernelCtx& k, const ResizeAttrs& a) {
  const Plan plan = MakePlan(k.input(0), Opt(k, 1), Opt(k, 2), Opt(k, 3), a.axes,
                             a.keep_aspect_ratio_policy, "Resize");
  Run(k.input(0), k.output(0), plan, FromAttrs(a));
}
TensorList Backward11(const GradCtx& g, const ResizeAttrs& a) {
  TensorList d(g.num_inputs());
  const Tensor none;
  auto opt = [&](int i) -> const Tensor& { return g.has_input(i) ? g.input(i) : none; };
  const Plan plan =
      MakePlan(g.input(0), opt(1), opt(2), opt(3), a.axes, a.keep_aspect_ratio_policy, "Resize");
  d[0] = BackwardImpl(g, plan, FromAttrs(a));
  return d;
}

// Resize 10 and Upsample 9: X, scales.
template <class A>
SpecList Infer10(const InferCtx& c, const A& a) {
  CheckParams(Legacy(a.mode), c.dtype(0), c.where());
  SINGA_CHECK(a.mode != "cubic", ShapeError, c.where() << ": mode must be nearest or linear");
  return {{c.dtype(0),
           MakePlan(c.input(0), Tensor(), c.value(1), Tensor(), {}, "stretch", c.where()).out}};
}
template <class A>
void Forward10(KernelCtx& k, const A& a) {
  const Plan plan = MakePlan(k.input(0), Tensor(), k.input(1), Tensor(), {}, "stretch", "Resize");
  Run(k.input(0), k.output(0), plan, Legacy(a.mode));
}
template <class A>
TensorList Backward10(const GradCtx& g, const A& a) {
  const Plan plan = MakePlan(g.input(0), Tensor(), g.input(1), Tensor(), {}, "stretch", "Resize");
  return {BackwardImpl(g, plan, Legacy(a.mode)), Tensor()};
}

// Upsample 7: scales as an attribute.
Tensor ScalesTensor(const std::vector<float>& s) {
  return Tensor::FromVector<float>({static_cast<int64_t>(s.size())}, s);
}
SpecList Infer7(const InferCtx& c, const Upsample7Attrs& a) {
  CheckParams(Legacy(a.mode), c.dtype(0), c.where());
  SINGA_CHECK(a.mode != "cubic", ShapeError, c.where() << ": mode must be nearest or linear");
  return {{c.dtype(0), MakePlan(c.input(0), Tensor(), ScalesTensor(a.scales), Tensor(), {},
                                "stretch", c.where())
                           .out}};
}
void Forward7(KernelCtx& k, const Upsample7Attrs& a) {
  const Plan plan =
      MakePlan(k.input(0), Tensor(), ScalesTensor(a.scales), Tensor(), {}, "stretch", "Upsample");
  Run(k.input(0), k.output(0), plan, Legacy(a.mode));
}
TensorList Backward7(const GradCtx& g, const Upsample7Attrs& a) {
  const Plan plan =
      MakePlan(g.input(0), Tensor(), ScalesTensor(a.scales), Tensor(), {}, "stretch", "Upsample");
  return {BackwardImpl(g, plan, Legacy(a.mode))};
}

const std::vector<DType> kScaleTypes = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
}  // namespace

namespace {
// Upsample (removed in opset 10) and Resize-10 as Resize-11 and newer: the
// same asymmetric transform, nearest rounding down.
void AsResize11(ExportCtx& c, const std::string& mode, const std::string& scales) {
  // Opsets 11 and 12 require roi (an empty tensor when unused).
  const std::string roi =
      c.opset() < 13 ? c.AddConstant(Tensor::Zeros({0}, DType::kFloat32), "roi") : "";
  AttrMap attrs = {{"mode", mode}, {"coordinate_transformation_mode", std::string("asymmetric")}};
  if (mode == "nearest") attrs["nearest_mode"] = std::string("floor");
  c.AddNode("Resize", {c.input_name(0), roi, scales}, c.output_names(), attrs);
}
void Upgrade7(ExportCtx& c, const Upsample7Attrs& a) {
  const std::vector<float>& s = a.scales;
  AsResize11(
      c, a.mode,
      c.AddConstant(Tensor::FromVector<float>({static_cast<int64_t>(s.size())}, s), "scales"));
}
void Upgrade10(ExportCtx& c, const ModeAttrs& a) { AsResize11(c, a.mode, c.input_name(1)); }
}  // namespace

SINGA_REGISTER_OP(Upsample, Upsample7Attrs)
    .since_opset(7)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("mode", &Upsample7Attrs::mode)
    .attr("scales", &Upsample7Attrs::scales, true)
    .dtypes(ops::kAllButBFloat16)
    .infer(Infer7)
    .kernel(Forward7)
    .backward(Backward7)
    .removed_in(10)
    .upgrade(Upgrade7);
SINGA_REGISTER_OP(Upsample, ModeAttrs)
    .since_opset(9)
    .inputs({"X", "scales"})
    .outputs({"Y"})
    .attr("mode", &ModeAttrs::mode)
    .dtypes(ops::kAllButBFloat16, {0})
    .dtypes({DType::kFloat32}, {1})
    .infer(Infer10<ModeAttrs>)
    .kernel(Forward10<ModeAttrs>)
    .backward(Backward10<ModeAttrs>)
    .removed_in(10)
    .upgrade(Upgrade10);
SINGA_REGISTER_OP(Resize, ModeAttrs)
    .since_opset(10)
    .inputs({"X", "scales"})
    .outputs({"Y"})
    .attr("mode", &ModeAttrs::mode)
    .dtypes(ops::kAllButBFloat16, {0})
    .dtypes({DType::kFloat32}, {1})
    .infer(Infer10<ModeAttrs>)
    .kernel(Forward10<ModeAttrs>)
    .backward(Backward10<ModeAttrs>)
    .upgrade(Upgrade10);

#define SINGA_RESIZE(VERSION, TYPES, ...)                                                   \
  SINGA_REGISTER_OP(Resize, ResizeAttrs)                                                    \
      .since_opset(VERSION)                                                                 \
      .outputs({"Y"})                                                                       \
      .attr("coordinate_transformation_mode", &ResizeAttrs::coordinate_transformation_mode) \
      .attr("cubic_coeff_a", &ResizeAttrs::cubic_coeff_a)                                   \
      .attr("exclude_outside", &ResizeAttrs::exclude_outside)                               \
      .attr("extrapolation_value", &ResizeAttrs::extrapolation_value)                       \
      .attr("mode", &ResizeAttrs::mode)                                                     \
      .attr("nearest_mode", &ResizeAttrs::nearest_mode)                                     \
      .dtypes(TYPES, {0})                                                                   \
      .dtypes(kScaleTypes, {1, 2})                                                          \
      .dtypes({DType::kInt64}, {3})                                                         \
      .infer(Infer11)                                                                       \
      .kernel(Forward11)                                                                    \
      .backward(Backward11) __VA_ARGS__

// 11: roi and scales required (either may be empty); 13: both optional, and
// bfloat16; 18: antialias, axes, keep_aspect_ratio_policy; 19:
// half_pixel_symmetric (accepted by every version here).
SINGA_RESIZE(11, ops::kAllButBFloat16, .inputs({"X", "roi", "scales", "sizes?"}));
SINGA_RESIZE(13, dtypes::kAll, .inputs({"X", "roi?", "scales?", "sizes?"}));
#define SINGA_RESIZE18_ATTRS                      \
  .inputs({"X", "roi?", "scales?", "sizes?"})     \
      .attr("antialias", &ResizeAttrs::antialias) \
      .attr("axes", &ResizeAttrs::axes)           \
      .attr("keep_aspect_ratio_policy", &ResizeAttrs::keep_aspect_ratio_policy)
SINGA_RESIZE(18, dtypes::kAll, SINGA_RESIZE18_ATTRS);
SINGA_RESIZE(19, dtypes::kAll, SINGA_RESIZE18_ATTRS);

}  // namespace singa
