// DeformConv: 2-D convolution whose taps move by learned offsets. X [N, C,
// H, W], W [M, C/group, kH, kW], offset [N, offset_group * kH * kW * 2, oH,
// oW] ((dh, dw) per tap, per offset group of C/offset_group input channels),
// optional B [M] and mask [N, offset_group * kH * kW, oH, oW] (default 1):
//   Y[n, m, i, j] = B[m] + sum over c in m's group, taps (a, b) of
//     W[m, c', a, b] * mask * X~[n, c](i*sh - ph + a*dh + dh_off,
//                                      j*sw - pw + b*dw + dw_off)
// where X~ interpolates bilinearly and reads 0 outside X. (oH, oW) is the
// convolution's output size, which offset's spatial dims must match.
// Backward: the internal op DeformConvGrad (dX, dW, doffset, dmask), dB sums dY.
// https://onnx.ai/onnx/operators/onnx__DeformConv.html
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct DeformConvAttrs {
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;
  int64_t offset_group = 1;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
};

struct Geometry {
  int64_t k[2], s[2], d[2], p[2], out[2];
};

Geometry Resolve(const InferCtx& c, const DeformConvAttrs& a) {
  const Shape &x = c.shape(0), &w = c.shape(1), &off = c.shape(2);
  SINGA_CHECK(x.size() == 4 && w.size() == 4 && off.size() == 4, ShapeError,
              c.where() << ": X, W and offset must be 4-D (2-D deformable convolution only) ("
                        << c.inputs_string() << ")");
  SINGA_CHECK(a.group >= 1 && w[1] * a.group == x[1] && w[0] % a.group == 0, ShapeError,
              c.where() << ": W [M, C/group, kH, kW] does not fit X with group " << a.group << " ("
                        << c.inputs_string() << ")");
  SINGA_CHECK(a.offset_group >= 1 && x[1] % a.offset_group == 0 &&
                  off[1] == a.offset_group * w[2] * w[3] * 2 && off[0] == x[0],
              ShapeError,
              c.where() << ": offset must be [N, offset_group * kH * kW * 2, oH, oW] with C a "
                        << "multiple of offset_group " << a.offset_group << " ("
                        << c.inputs_string() << ")");
  auto get = [](const std::vector<int64_t>& v, size_t i, int64_t dflt) {
    return v.empty() ? dflt : v[i];
  };
  SINGA_CHECK(
      (a.dilations.empty() || a.dilations.size() == 2) &&
          (a.strides.empty() || a.strides.size() == 2) && (a.pads.empty() || a.pads.size() == 4) &&
          (a.kernel_shape.empty() ||
           (a.kernel_shape.size() == 2 && a.kernel_shape[0] == w[2] && a.kernel_shape[1] == w[3])),
      ShapeError,
      c.where() << ": dilations, strides, pads and kernel_shape must have 2, 2, 4 and "
                << "2 values (kernel_shape W's) (" << c.inputs_string() << ")");
  Geometry g;
  for (int i = 0; i < 2; ++i) {
    g.k[i] = w[2 + i];
    g.s[i] = get(a.strides, i, 1);
    g.d[i] = get(a.dilations, i, 1);
    g.p[i] = get(a.pads, i, 0);
    const int64_t pe = get(a.pads, 2 + i, 0);
    SINGA_CHECK(g.s[i] >= 1 && g.d[i] >= 1 && g.p[i] >= 0 && pe >= 0, ShapeError,
                c.where() << ": strides and dilations must be >= 1, pads >= 0");
    const int64_t room = x[2 + i] + g.p[i] + pe - ((g.k[i] - 1) * g.d[i] + 1);
    g.out[i] = room < 0 ? 0 : room / g.s[i] + 1;
    SINGA_CHECK(off[2 + i] == g.out[i], ShapeError,
                c.where() << ": offset's spatial dims must be the output's [" << g.out[0] << ", "
                          << (i == 0 ? "..." : std::to_string(g.out[1])) << "] ("
                          << c.inputs_string() << ")");
  }
  if (c.has_input(3))
    SINGA_CHECK(c.shape(3) == Shape{w[0]}, ShapeError,
                c.where() << ": B must have shape [" << w[0] << "] (" << c.inputs_string() << ")");
  if (c.has_input(4))
    SINGA_CHECK(c.shape(4) == (Shape{x[0], a.offset_group * g.k[0] * g.k[1], g.out[0], g.out[1]}),
                ShapeError,
                c.where() << ": mask must be [N, offset_group * kH * kW, oH, oW] ("
                          << c.inputs_string() << ")");
  return g;
}

SpecList Infer(const InferCtx& c, const DeformConvAttrs& a) {
  const Geometry g = Resolve(c, a);
  return {{c.dtype(0), {c.shape(0)[0], c.shape(1)[0], g.out[0], g.out[1]}}};
}

template <class T>
void Loop(KernelCtx& k, const Geometry& g, const DeformConvAttrs& a) {
  using A = Acc<T>;
  const Tensor x = k.input(0).Contiguous(), w = k.input(1).Contiguous(),
               off = k.input(2).Contiguous();
  const Tensor mask = k.has_input(4) ? k.input(4).Contiguous() : Tensor();
  const std::vector<double> bias =
      k.has_input(3) ? k.input(3).ToVector<double>() : std::vector<double>(w.dim(0), 0.0);
  const Tensor& y = k.output(0);
  const int64_t n_batch = x.dim(0), chans = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t m_all = w.dim(0), cg = w.dim(1), mg = m_all / a.group;
  const int64_t taps = g.k[0] * g.k[1], oh = g.out[0], ow = g.out[1], plane = oh * ow;
  const int64_t c_per_og = chans / a.offset_group;
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  const T* po = off.data<T>();
  const T* pm = mask.defined() ? mask.data<T>() : nullptr;
  T* py = y.data<T>();
  auto at = [&](const T* img, int64_t r, int64_t c) -> A {
    return r >= 0 && r < height && c >= 0 && c < width ? static_cast<A>(img[r * width + c]) : A(0);
  };
  ParallelFor(0, n_batch * m_all, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(plane);
    for (int64_t nm = lo; nm < hi; ++nm) {
      const int64_t n = nm / m_all, m = nm % m_all, grp = m / mg;
      std::fill(acc.begin(), acc.end(), static_cast<A>(bias[m]));
      for (int64_t c = grp * cg; c < (grp + 1) * cg; ++c) {
        const int64_t og = c / c_per_og;
        const T* img = px + (n * chans + c) * height * width;
        const T* wc = pw + (m * cg + (c - grp * cg)) * taps;
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t ka = t / g.k[1], kb = t % g.k[1];
          const A wv = static_cast<A>(wc[t]);
          const T* dh = po + ((n * a.offset_group + og) * taps + t) * 2 * plane;
          const T* dw = dh + plane;
          const T* mk = pm ? pm + ((n * a.offset_group + og) * taps + t) * plane : nullptr;
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              const int64_t q = i * ow + j;
              const A r = static_cast<A>(i * g.s[0] - g.p[0] + ka * g.d[0]) + static_cast<A>(dh[q]);
              const A cc =
                  static_cast<A>(j * g.s[1] - g.p[1] + kb * g.d[1]) + static_cast<A>(dw[q]);
              const A r0 = std::floor(r), c0 = std::floor(cc);
              const int64_t ri = static_cast<int64_t>(r0), ci = static_cast<int64_t>(c0);
              const A fr = r - r0, fc = cc - c0;
              const A v = (1 - fr) * ((1 - fc) * at(img, ri, ci) + fc * at(img, ri, ci + 1)) +
                          fr * ((1 - fc) * at(img, ri + 1, ci) + fc * at(img, ri + 1, ci + 1));
              acc[q] += wv * v * (mk ? static_cast<A>(mk[q]) : A(1));
            }
        }
      }
      T* out = py + nm * plane;
      for (int64_t q = 0; q < plane; ++q) out[q] = static_cast<T>(acc[q]);
    }
  });
}

void Forward(KernelCtx& k, const DeformConvAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  static const OpSchema& schema = OpRegistry::Get("DeformConv");
  const Geometry g = Resolve(InferCtx(schema, k.inputs, 1, ""), a);
  VisitFloat(y.dtype(), [&]<class T>(Tag<T>) { Loop<T>(k, g, a); });
}

// DeformConvGrad (domain ai.singa): (dY, X, W, offset, mask?) -> (dX, dW,
// doffset, dmask?). With v the interpolated X at a tap and u = dY * mask:
// dW += u * v, dmask += dY * W * v, dX += u * W * (the bilinear weights),
// doffset += u * W * dv/d(position). A plain serial loop (every output
// scatters into the shared dX and dW).
template <class T>
void GradLoop(KernelCtx& k, const Geometry& g, const DeformConvAttrs& a) {
  using A = Acc<T>;
  const Tensor dy = k.input(0).Contiguous(), x = k.input(1).Contiguous(),
               w = k.input(2).Contiguous(), off = k.input(3).Contiguous();
  const bool has_mask = k.has_input(4);
  const Tensor mask = has_mask ? k.input(4).Contiguous() : Tensor();
  const int64_t n_batch = x.dim(0), chans = x.dim(1), height = x.dim(2), width = x.dim(3);
  const int64_t m_all = w.dim(0), cg = w.dim(1), mg = m_all / a.group;
  const int64_t taps = g.k[0] * g.k[1], oh = g.out[0], ow = g.out[1], plane = oh * ow;
  const int64_t c_per_og = chans / a.offset_group;
  const T* pdy = dy.data<T>();
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  const T* po = off.data<T>();
  const T* pm = has_mask ? mask.data<T>() : nullptr;
  std::vector<A> dx(x.numel(), A(0)), dw(w.numel(), A(0)), doff(off.numel(), A(0)),
      dmask(has_mask ? mask.numel() : 0, A(0));
  auto inside = [&](int64_t r, int64_t c) { return r >= 0 && r < height && c >= 0 && c < width; };
  for (int64_t n = 0; n < n_batch; ++n)
    for (int64_t m = 0; m < m_all; ++m) {
      const int64_t grp = m / mg;
      const T* dyp = pdy + (n * m_all + m) * plane;
      for (int64_t c = grp * cg; c < (grp + 1) * cg; ++c) {
        const int64_t og = c / c_per_og;
        const int64_t img_base = (n * chans + c) * height * width;
        const T* img = px + img_base;
        const int64_t w_base = (m * cg + (c - grp * cg)) * taps;
        for (int64_t t = 0; t < taps; ++t) {
          const int64_t ka = t / g.k[1], kb = t % g.k[1];
          const A wv = static_cast<A>(pw[w_base + t]);
          const int64_t off_base = ((n * a.offset_group + og) * taps + t) * 2 * plane;
          const int64_t mask_base = ((n * a.offset_group + og) * taps + t) * plane;
          A dwv = 0;
          for (int64_t i = 0; i < oh; ++i)
            for (int64_t j = 0; j < ow; ++j) {
              const int64_t q = i * ow + j;
              const A gy = static_cast<A>(dyp[q]);
              const A mk = pm ? static_cast<A>(pm[mask_base + q]) : A(1);
              const A r = static_cast<A>(i * g.s[0] - g.p[0] + ka * g.d[0]) +
                          static_cast<A>(po[off_base + q]);
              const A cc = static_cast<A>(j * g.s[1] - g.p[1] + kb * g.d[1]) +
                           static_cast<A>(po[off_base + plane + q]);
              const A r0 = std::floor(r), c0 = std::floor(cc);
              const int64_t ri = static_cast<int64_t>(r0), ci = static_cast<int64_t>(c0);
              const A fr = r - r0, fc = cc - c0;
              const int64_t rr[4] = {ri, ri, ri + 1, ri + 1}, cs[4] = {ci, ci + 1, ci, ci + 1};
              const A bw[4] = {(1 - fr) * (1 - fc), (1 - fr) * fc, fr * (1 - fc), fr * fc};
              A xv[4];
              for (int e = 0; e < 4; ++e)
                xv[e] = inside(rr[e], cs[e]) ? static_cast<A>(img[rr[e] * width + cs[e]]) : A(0);
              const A v = bw[0] * xv[0] + bw[1] * xv[1] + bw[2] * xv[2] + bw[3] * xv[3];
              const A u = gy * mk;
              dwv += u * v;
              if (pm) dmask[mask_base + q] += gy * wv * v;
              for (int e = 0; e < 4; ++e)
                if (inside(rr[e], cs[e])) dx[img_base + rr[e] * width + cs[e]] += u * wv * bw[e];
              const A dvr = (1 - fc) * (xv[2] - xv[0]) + fc * (xv[3] - xv[1]);
              const A dvc = (1 - fr) * (xv[1] - xv[0]) + fr * (xv[3] - xv[2]);
              doff[off_base + q] += u * wv * dvr;
              doff[off_base + plane + q] += u * wv * dvc;
            }
          dw[w_base + t] += dwv;
        }
      }
    }
  auto store = [](const std::vector<A>& v, const Tensor& t) {
    T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
  };
  store(dx, k.output(0));
  store(dw, k.output(1));
  store(doff, k.output(2));
  if (has_mask && k.num_outputs() > 3) store(dmask, k.output(3));
}

SpecList GradInfer(const InferCtx& c, const DeformConvAttrs&) {
  SpecList out = {{c.dtype(1), c.shape(1)}, {c.dtype(2), c.shape(2)}, {c.dtype(3), c.shape(3)}};
  if (c.num_outputs() > 3) out.push_back({c.dtype(4), c.shape(4)});
  return out;
}

void GradForward(KernelCtx& k, const DeformConvAttrs& a) {
  static const OpSchema& schema = OpRegistry::Get("DeformConv");
  const TensorList fwd = {k.input(1), k.input(2), k.input(3), Tensor(),
                          k.has_input(4) ? k.input(4) : Tensor()};
  const Geometry g = Resolve(InferCtx(schema, fwd, 1, ""), a);
  VisitFloat(k.output(0).dtype(), [&]<class T>(Tag<T>) { GradLoop<T>(k, g, a); });
}

TensorList Backward(const GradCtx& g, const DeformConvAttrs& a) {
  static const OpSchema& grad = OpRegistry::Get("DeformConvGrad", kLatestOpset, "ai.singa");
  const bool has_mask = g.has_input(4);
  const TensorList in = {g.grad_output(0), g.input(0), g.input(1), g.input(2),
                         has_mask ? g.input(4) : Tensor()};
  const TensorList r = RunOp(grad, in, a, has_mask ? 4 : 3);
  TensorList d(g.num_inputs());
  d[0] = r[0];
  d[1] = r[1];
  d[2] = r[2];
  if (has_mask) d[4] = r[3];
  if (g.has_input(3) && g.needs_grad(3)) {
    const Tensor& dy = g.grad_output(0);
    d[3] = Call1("ReduceSum", {dy, Tensor::FromVector<int64_t>({3}, {0, 2, 3})},
                 {{"keepdims", int64_t{0}}});
  }
  return d;
}

}  // namespace

SINGA_REGISTER_OP(DeformConv, DeformConvAttrs)
    .since_opset(19)
    .inputs({"X", "W", "offset", "B?", "mask?"})
    .outputs({"Y"})
    .attr("dilations", &DeformConvAttrs::dilations)
    .attr("group", &DeformConvAttrs::group)
    .attr("kernel_shape", &DeformConvAttrs::kernel_shape)
    .attr("offset_group", &DeformConvAttrs::offset_group)
    .attr("pads", &DeformConvAttrs::pads)
    .attr("strides", &DeformConvAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1, 2, 3, 4})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

// The internal op of DeformConv's backward.
SINGA_REGISTER_OP(DeformConvGrad, DeformConvAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X", "W", "offset", "mask?"})
    .outputs({"dX", "dW", "doffset", "dmask?"})
    .attr("dilations", &DeformConvAttrs::dilations)
    .attr("group", &DeformConvAttrs::group)
    .attr("kernel_shape", &DeformConvAttrs::kernel_shape)
    .attr("offset_group", &DeformConvAttrs::offset_group)
    .attr("pads", &DeformConvAttrs::pads)
    .attr("strides", &DeformConvAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1, 2, 3, 4})
    .infer(GradInfer)
    .kernel(GradForward);

}  // namespace singa
