// Sliding-window geometry shared by Conv and the pooling ops: validates the
// kernel_shape/strides/dilations/pads/auto_pad attributes against the input
// and resolves auto_pad and ceil_mode into explicit pads and output sizes.
//
//   Window w = ResolveWindow(c, x_spatial, kernel, a.strides, a.dilations, a.pads, a.auto_pad,
//                            a.ceil_mode);
//   // output spatial sizes: w.out; input position of window o, tap k along i:
//   //   o * w.stride[i] - w.pad_begin[i] + k * w.dilation[i]
#pragma once

#include <array>
#include <string>
#include <vector>

#include "ops/common.h"

namespace singa::ops {

struct Window {
  int64_t nd = 0;
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;
  // The extent (in input positions) one window covers.
  int64_t span(int64_t i) const { return (kernel[i] - 1) * dilation[i] + 1; }
  // End padding the windows actually reach (>= pad_end when ceil_mode adds a
  // partial last window; a floor-mode slack keeps pad_end).
  int64_t reach_end(int64_t i) const {
    return std::max(pad_end[i], (out[i] - 1) * stride[i] + span(i) - in[i] - pad_begin[i]);
  }
};

inline int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

inline std::string IntsString(const std::vector<int64_t>& v) { return ToString(Shape(v)); }

// `x_spatial`: the input's spatial sizes; the attribute vectors may be empty
// (spec defaults: stride 1, dilation 1, no padding).
inline Window ResolveWindow(const InferCtx& c, const Shape& x_spatial,
                            const std::vector<int64_t>& kernel, const std::vector<int64_t>& strides,
                            const std::vector<int64_t>& dilations, const std::vector<int64_t>& pads,
                            const std::string& auto_pad, bool ceil_mode) {
  Window w;
  w.nd = static_cast<int64_t>(x_spatial.size());
  const size_t nd = x_spatial.size();
  auto check_len = [&](const std::vector<int64_t>& v, size_t n, const char* name) {
    SINGA_CHECK(v.empty() || v.size() == n, ShapeError,
                c.where() << ": attribute '" << name << "' has " << v.size() << " values "
                          << IntsString(v) << ", expected " << n << " for " << c.inputs_string());
  };
  check_len(kernel, nd, "kernel_shape");
  check_len(strides, nd, "strides");
  check_len(dilations, nd, "dilations");
  check_len(pads, 2 * nd, "pads");
  SINGA_CHECK(
      auto_pad == "NOTSET" || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER" ||
          auto_pad == "VALID",
      ShapeError,
      c.where() << ": attribute 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, got '"
                << auto_pad << "'");
  w.in = x_spatial;
  w.kernel = kernel;
  w.stride = strides.empty() ? std::vector<int64_t>(nd, 1) : strides;
  w.dilation = dilations.empty() ? std::vector<int64_t>(nd, 1) : dilations;
  w.pad_begin.assign(nd, 0);
  w.pad_end.assign(nd, 0);
  w.out.assign(nd, 0);
  for (size_t i = 0; i < nd; ++i) {
    SINGA_CHECK(w.kernel[i] >= 1 && w.stride[i] >= 1 && w.dilation[i] >= 1, ShapeError,
                c.where() << ": kernel_shape " << IntsString(w.kernel) << ", strides "
                          << IntsString(w.stride) << " and dilations " << IntsString(w.dilation)
                          << " must be positive");
    if (auto_pad == "NOTSET" && !pads.empty()) {
      w.pad_begin[i] = pads[i];
      w.pad_end[i] = pads[nd + i];
      SINGA_CHECK(pads[i] >= 0 && pads[nd + i] >= 0, ShapeError,
                  c.where() << ": pads " << IntsString(pads) << " must not be negative");
    }
  }
  for (size_t i = 0; i < nd; ++i) {
    const int64_t span = w.span(i), in = w.in[i], s = w.stride[i];
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      w.out[i] = CeilDiv(in, s);
      int64_t total = std::max<int64_t>(0, (w.out[i] - 1) * s + span - in);
      w.pad_begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      w.pad_end[i] = total - w.pad_begin[i];
      continue;
    }
    const int64_t room = in + w.pad_begin[i] + w.pad_end[i] - span;
    SINGA_CHECK(room >= 0 || in == 0, ShapeError,
                c.where() << ": the window (kernel_shape " << IntsString(w.kernel) << ", dilations "
                          << IntsString(w.dilation)
                          << ") is larger than the padded input along spatial axis " << i << " ("
                          << c.inputs_string() << ", pads " << IntsString(pads) << ")");
    if (room < 0) {  // an empty spatial axis gives an empty output
      w.out[i] = 0;
      continue;
    }
    w.out[i] = (ceil_mode && auto_pad == "NOTSET" ? CeilDiv(room, s) : room / s) + 1;
    // The last window must start inside the input or the begin padding.
    if (ceil_mode && auto_pad == "NOTSET" && (w.out[i] - 1) * s >= in + w.pad_begin[i]) --w.out[i];
  }
  return w;
}

// The geometry padded to three spatial dimensions (leading size-1 dims), so
// that loop kernels serve 1-D, 2-D and 3-D alike.
struct Geo3 {
  int64_t in[3], k[3], s[3], d[3], pb[3], pe[3], out[3];
};
inline Geo3 To3(const Window& w) {
  Geo3 g;
  const int64_t lead = 3 - w.nd;
  for (int64_t i = 0; i < 3; ++i) {
    const bool real = i >= lead;
    const int64_t j = i - lead;
    g.in[i] = real ? w.in[j] : 1;
    g.k[i] = real ? w.kernel[j] : 1;
    g.s[i] = real ? w.stride[j] : 1;
    g.d[i] = real ? w.dilation[j] : 1;
    g.pb[i] = real ? w.pad_begin[j] : 0;
    g.pe[i] = real ? w.pad_end[j] : 0;
    g.out[i] = real ? w.out[j] : 1;
  }
  return g;
}

#if SINGA_CUDA
// The geometry as the CUDA device's cuDNN kernels take it.
inline cuda::Window ToCuda(const Window& w) {
  return {w.kernel, w.stride, w.dilation, w.pad_begin, w.pad_end};
}
#endif

// Strides of a [A, B, spatial...] tensor padded to 5 dims (0 for added dims).
inline std::array<int64_t, 5> Strides5(const Tensor& t) {
  std::array<int64_t, 5> s{0, 0, 0, 0, 0};
  const int64_t lead = 5 - t.ndim();
  s[0] = t.strides()[0];
  s[1] = t.strides()[1];
  for (int64_t i = 2; i < t.ndim(); ++i) s[lead + i] = t.strides()[i];
  return s;
}

}  // namespace singa::ops
