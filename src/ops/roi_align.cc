// RoiAlign: pools each region of interest rois[r] = (x1, y1, x2, y2) (in X's
// coordinates times spatial_scale) of image batch_indices[r] of X [N, C, H, W]
// into Y [R, C, output_height, output_width]. Each output bin averages (or,
// mode max, takes the max of) a sampling_ratio^2 grid of bilinearly
// interpolated samples (sampling_ratio 0: ceil(roi size / output size) per
// axis). coordinate_transformation_mode half_pixel shifts the rois by -0.5;
// output_half_pixel (opset 10's only behaviour) does not, and makes rois at
// least 1x1. Samples beyond [-1, H] x [-1, W] read 0; others clamp to X.
// Max mode takes the max over samples of the max of the four weighted taps
// (as onnx's reference and onnxruntime do).
// Backward (X only): the internal op RoiAlignGrad.
// https://onnx.ai/onnx/operators/onnx__RoiAlign.html
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct RoiAlignAttrs {
  std::string coordinate_transformation_mode = "half_pixel";
  std::string mode = "avg";
  int64_t output_height = 1;
  int64_t output_width = 1;
  int64_t sampling_ratio = 0;
  float spatial_scale = 1.0f;
};

SpecList Infer(const InferCtx& c, const RoiAlignAttrs& a) {
  const Shape &x = c.shape(0), &rois = c.shape(1), &bi = c.shape(2);
  SINGA_CHECK(x.size() == 4, ShapeError,
              c.where() << ": X must be 4-D (" << c.inputs_string() << ")");
  SINGA_CHECK(
      rois.size() == 2 && rois[1] == 4 && bi.size() == 1 && bi[0] == rois[0], ShapeError,
      c.where() << ": rois must be [R, 4] and batch_indices [R] (" << c.inputs_string() << ")");
  SINGA_CHECK(a.mode == "avg" || a.mode == "max", ShapeError,
              c.where() << ": mode '" << a.mode << "' is not avg or max");
  SINGA_CHECK(a.coordinate_transformation_mode == "half_pixel" ||
                  a.coordinate_transformation_mode == "output_half_pixel",
              ShapeError,
              c.where() << ": coordinate_transformation_mode '" << a.coordinate_transformation_mode
                        << "' is not half_pixel or output_half_pixel");
  SINGA_CHECK(a.output_height >= 1 && a.output_width >= 1 && a.sampling_ratio >= 0, ShapeError,
              c.where() << ": output_height and output_width must be >= 1, sampling_ratio >= 0");
  return {{c.dtype(0), {rois[0], x[1], a.output_height, a.output_width}}};
}

struct Tap {
  int64_t pos[4] = {0, 0, 0, 0};
  double w[4] = {0, 0, 0, 0};
};

// Every sample's taps for roi r, bin-major (gh * gw samples per bin).
struct RoiTaps {
  std::vector<Tap> taps;
  int64_t samples = 1;  // per bin
  double count = 1;     // the average's divisor
};
RoiTaps MakeTaps(const std::vector<double>& rois, int64_t r, int64_t height, int64_t width,
                 const RoiAlignAttrs& a) {
  const int64_t ph_n = a.output_height, pw_n = a.output_width;
  const bool half = a.coordinate_transformation_mode == "half_pixel";
  const double off = half ? 0.5 : 0.0, scale = a.spatial_scale;
  const double x0 = rois[r * 4] * scale - off, y0 = rois[r * 4 + 1] * scale - off;
  double rw = rois[r * 4 + 2] * scale - off - x0, rh = rois[r * 4 + 3] * scale - off - y0;
  if (!half) {
    rw = std::max(rw, 1.0);
    rh = std::max(rh, 1.0);
  }
  const double bh = rh / ph_n, bw = rw / pw_n;
  const int64_t gh =
      a.sampling_ratio > 0 ? a.sampling_ratio : static_cast<int64_t>(std::ceil(rh / ph_n));
  const int64_t gw =
      a.sampling_ratio > 0 ? a.sampling_ratio : static_cast<int64_t>(std::ceil(rw / pw_n));
  RoiTaps rt;
  rt.samples = gh * gw;
  rt.count = static_cast<double>(std::max<int64_t>(gh * gw, 1));
  rt.taps.assign(ph_n * pw_n * gh * gw, Tap{});
  int64_t t = 0;
  for (int64_t ph = 0; ph < ph_n; ++ph)
    for (int64_t pw = 0; pw < pw_n; ++pw)
      for (int64_t iy = 0; iy < gh; ++iy)
        for (int64_t ix = 0; ix < gw; ++ix, ++t) {
          double yy = y0 + ph * bh + (iy + 0.5) * bh / gh;
          double xx = x0 + pw * bw + (ix + 0.5) * bw / gw;
          if (yy < -1.0 || yy > height || xx < -1.0 || xx > width) continue;
          yy = std::max(yy, 0.0);
          xx = std::max(xx, 0.0);
          int64_t yl = static_cast<int64_t>(yy), xl = static_cast<int64_t>(xx), yh, xh;
          if (yl >= height - 1) {
            yh = yl = height - 1;
            yy = static_cast<double>(yl);
          } else {
            yh = yl + 1;
          }
          if (xl >= width - 1) {
            xh = xl = width - 1;
            xx = static_cast<double>(xl);
          } else {
            xh = xl + 1;
          }
          const double ly = yy - yl, lx = xx - xl, hy = 1 - ly, hx = 1 - lx;
          rt.taps[t] = {{yl * width + xl, yl * width + xh, yh * width + xl, yh * width + xh},
                        {hy * hx, hy * lx, ly * hx, ly * lx}};
        }
  return rt;
}

std::vector<int64_t> CheckedBatch(const Tensor& bi, int64_t n) {
  const std::vector<int64_t> batch = bi.ToVector<int64_t>();
  for (int64_t b : batch)
    SINGA_CHECK(b >= 0 && b < n, ShapeError,
                "RoiAlign: batch index " << b << " is outside X's batch of " << n);
  return batch;
}

// Max mode: which sample and tap of a bin give its value (the first on ties).
template <class T>
std::pair<int64_t, int> MaxTap(const Tap* taps, int64_t samples, const T* img) {
  using A = Acc<T>;
  std::pair<int64_t, int> best = {0, 0};
  A v = 0;
  for (int64_t s = 0; s < samples; ++s)
    for (int q = 0; q < 4; ++q) {
      const A m = static_cast<A>(taps[s].w[q]) * static_cast<A>(img[taps[s].pos[q]]);
      if ((s == 0 && q == 0) || m > v) {
        v = m;
        best = {s, q};
      }
    }
  return best;
}

template <class T>
void Pool(const Tensor& x_in, const Tensor& rois_in, const Tensor& bi, const Tensor& y,
          const RoiAlignAttrs& a) {
  using A = Acc<T>;
  const Tensor x = x_in.Contiguous();
  const std::vector<double> rois = rois_in.ToVector<double>();
  const std::vector<int64_t> batch = CheckedBatch(bi, x.dim(0));
  const int64_t n_rois = y.dim(0), chans = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t bins = a.output_height * a.output_width;
  const bool avg = a.mode == "avg";
  const T* px = x.data<T>();
  T* py = y.data<T>();
  ParallelFor(0, n_rois, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const RoiTaps rt = MakeTaps(rois, r, height, width, a);
      for (int64_t c = 0; c < chans; ++c) {
        const T* img = px + (batch[r] * chans + c) * height * width;
        T* out = py + (r * chans + c) * bins;
        for (int64_t bin = 0; bin < bins; ++bin) {
          const Tap* taps = rt.taps.data() + bin * rt.samples;
          A v = 0;
          if (avg) {
            for (int64_t s = 0; s < rt.samples; ++s)
              for (int q = 0; q < 4; ++q)
                v += static_cast<A>(taps[s].w[q]) * static_cast<A>(img[taps[s].pos[q]]);
            v /= static_cast<A>(rt.count);
          } else if (rt.samples > 0) {
            const auto [s, q] = MaxTap(taps, rt.samples, img);
            v = static_cast<A>(taps[s].w[q]) * static_cast<A>(img[taps[s].pos[q]]);
          }
          out[bin] = static_cast<T>(v);
        }
      }
    }
  });
}

// RoiAlignGrad (domain ai.singa): (dY, X, rois, batch_indices) -> dX. Avg
// spreads dY / count over every tap by its weight; max sends dY times the
// weight to the tap that gave the max. Rois run in order (they may share an
// image), channels in parallel.
template <class T>
void PoolGrad(const Tensor& dy_in, const Tensor& x_in, const Tensor& rois_in, const Tensor& bi,
              const Tensor& dx, const RoiAlignAttrs& a) {
  using A = Acc<T>;
  const Tensor x = x_in.Contiguous(), dy = dy_in.Contiguous();
  const std::vector<double> rois = rois_in.ToVector<double>();
  const std::vector<int64_t> batch = CheckedBatch(bi, x.dim(0));
  const int64_t n_rois = dy.dim(0), chans = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t bins = a.output_height * a.output_width, plane = height * width;
  const bool avg = a.mode == "avg";
  const T* px = x.data<T>();
  const T* pdy = dy.data<T>();
  std::vector<A> acc(x.numel(), A(0));
  for (int64_t r = 0; r < n_rois; ++r) {
    const RoiTaps rt = MakeTaps(rois, r, height, width, a);
    ParallelFor(0, chans, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t c = lo; c < hi; ++c) {
        const int64_t base = (batch[r] * chans + c) * plane;
        const T* img = px + base;
        for (int64_t bin = 0; bin < bins; ++bin) {
          const Tap* taps = rt.taps.data() + bin * rt.samples;
          const A g = static_cast<A>(pdy[(r * chans + c) * bins + bin]);
          if (avg) {
            for (int64_t s = 0; s < rt.samples; ++s)
              for (int q = 0; q < 4; ++q)
                acc[base + taps[s].pos[q]] += g * static_cast<A>(taps[s].w[q] / rt.count);
          } else if (rt.samples > 0) {
            const auto [s, q] = MaxTap(taps, rt.samples, img);
            acc[base + taps[s].pos[q]] += g * static_cast<A>(taps[s].w[q]);
          }
        }
      }
    });
  }
  T* pdx = dx.data<T>();
  for (int64_t j = 0; j < x.numel(); ++j) pdx[j] = static_cast<T>(acc[j]);
}

void Forward(KernelCtx& k, const RoiAlignAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  VisitFloat(y.dtype(),
             [&]<class T>(Tag<T>) { Pool<T>(k.input(0), k.input(1), k.input(2), y, a); });
}

SpecList GradInfer(const InferCtx& c, const RoiAlignAttrs&) { return {{c.dtype(1), c.shape(1)}}; }
void GradForward(KernelCtx& k, const RoiAlignAttrs& a) {
  const Tensor& dx = k.output(0);
  if (dx.empty()) return;
  VisitFloat(dx.dtype(), [&]<class T>(Tag<T>) {
    PoolGrad<T>(k.input(0), k.input(1), k.input(2), k.input(3), dx, a);
  });
}

// X's gradient only: the rois' positions (bin edges, sample points) are not
// differentiated, as in torchvision.
TensorList Backward(const GradCtx& g, const RoiAlignAttrs& a) {
  static const OpSchema& grad = OpRegistry::Get("RoiAlignGrad", kLatestOpset, "ai.singa");
  TensorList d(g.num_inputs());
  d[0] = RunOp(grad, TensorList{g.grad_output(0), g.input(0), g.input(1), g.input(2)}, a)[0];
  return d;
}

// Opset 10 has no coordinate_transformation_mode: it behaves as output_half_pixel.
void Forward10(KernelCtx& k, const RoiAlignAttrs& a) {
  RoiAlignAttrs a10 = a;
  a10.coordinate_transformation_mode = "output_half_pixel";
  Forward(k, a10);
}
TensorList Backward10(const GradCtx& g, const RoiAlignAttrs& a) {
  RoiAlignAttrs a10 = a;
  a10.coordinate_transformation_mode = "output_half_pixel";
  return Backward(g, a10);
}

}  // namespace

[[maybe_unused]] static const bool kRoiAlign =
    RegisterVersions<RoiAlignAttrs>("RoiAlign", {10, 16}, [](OpBuilder<RoiAlignAttrs>& b, int v) {
      b.inputs({"X", "rois", "batch_indices"})
          .outputs({"Y"})
          .attr("mode", &RoiAlignAttrs::mode)
          .attr("output_height", &RoiAlignAttrs::output_height)
          .attr("output_width", &RoiAlignAttrs::output_width)
          .attr("sampling_ratio", &RoiAlignAttrs::sampling_ratio)
          .attr("spatial_scale", &RoiAlignAttrs::spatial_scale)
          .dtypes(dtypes::kFloats, {0, 1})
          .dtypes({DType::kInt64}, {2})
          .infer(Infer)
          .kernel(v >= 16 ? Forward : Forward10)
          .backward(v >= 16 ? Backward : Backward10);
      if (v >= 16)
        b.attr("coordinate_transformation_mode", &RoiAlignAttrs::coordinate_transformation_mode);
    });

// The internal op of RoiAlign's backward.
SINGA_REGISTER_OP(RoiAlignGrad, RoiAlignAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X", "rois", "batch_indices"})
    .outputs({"dX"})
    .attr("coordinate_transformation_mode", &RoiAlignAttrs::coordinate_transformation_mode)
    .attr("mode", &RoiAlignAttrs::mode)
    .attr("output_height", &RoiAlignAttrs::output_height)
    .attr("output_width", &RoiAlignAttrs::output_width)
    .attr("sampling_ratio", &RoiAlignAttrs::sampling_ratio)
    .attr("spatial_scale", &RoiAlignAttrs::spatial_scale)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .dtypes({DType::kInt64}, {3})
    .infer(GradInfer)
    .kernel(GradForward);

}  // namespace singa
