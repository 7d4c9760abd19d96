// Pooling over the spatial axes of X [N, C, D1..Dk] (1-3 spatial dims):
//   MaxPool      max over each window (optional Indices: the flat index of the
//                max in X, row-major or, with storage_order 1, column-major
//                within the spatial axes)
//   AveragePool  mean over each window, padding counted or not
//                (count_include_pad); opset 19 adds dilations
//   GlobalAveragePool, GlobalMaxPool  over all spatial positions
// ceil_mode adds a partial last window; a window never counts positions past
// the end padding. Older versions lack attributes the newer ones added
// (MaxPool: storage_order and Indices at 8, ceil_mode and dilations at 10;
// AveragePool: count_include_pad at 7, ceil_mode at 10), whose defaults then
// apply.
// https://onnx.ai/onnx/operators/onnx__MaxPool.html
// https://onnx.ai/onnx/operators/onnx__AveragePool.html
// https://onnx.ai/onnx/operators/onnx__GlobalAveragePool.html
// https://onnx.ai/onnx/operators/onnx__GlobalMaxPool.html
//
// Fast path (float32 Max/AveragePool without Indices): oneDNN pooling on the
// plain layout, where its result is exactly the spec's. Everything else: loops.
// Backward: internal ops MaxPoolGrad/AveragePoolGrad (oneDNN pooling backward
// for float32, loops otherwise); the global pools' backward is framework ops.
#include <limits>
#include <optional>

#include "kernels/cpu/dnnl_util.h"
#include "ops/grad_util.h"
#include "ops/window.h"

namespace singa {
namespace {

namespace du = cpu::dnnl_util;
using dnnl::memory;

struct PoolAttrs {
  std::string auto_pad = "NOTSET";
  int64_t ceil_mode = 0;
  int64_t count_include_pad = 0;
  std::vector<int64_t> dilations;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> pads;
  int64_t storage_order = 0;
  std::vector<int64_t> strides;
};

ops::Window PoolWindow(const InferCtx& c, const Shape& x, const PoolAttrs& a) {
  SINGA_CHECK(x.size() >= 3 && x.size() <= 5, ShapeError,
              c.where() << ": X must have 1 to 3 spatial dimensions ([N, C, D1, ...]), got "
                        << c.inputs_string());
  SINGA_CHECK(a.kernel_shape.size() == x.size() - 2, ShapeError,
              c.where() << ": kernel_shape " << ops::IntsString(a.kernel_shape) << " must have "
                        << x.size() - 2 << " values for " << c.inputs_string());
  SINGA_CHECK(a.storage_order == 0 || a.storage_order == 1, ShapeError,
              c.where() << ": storage_order must be 0 or 1, got " << a.storage_order);
  return ops::ResolveWindow(c, Shape(x.begin() + 2, x.end()), a.kernel_shape, a.strides,
                            a.dilations, a.pads, a.auto_pad, a.ceil_mode != 0);
}

SpecList PoolInfer(const InferCtx& c, const PoolAttrs& a) {
  ops::Window w = PoolWindow(c, c.shape(0), a);
  Shape y = {c.shape(0)[0], c.shape(0)[1]};
  y.insert(y.end(), w.out.begin(), w.out.end());
  return {{c.dtype(0), y}, {DType::kInt64, y}};
}

ops::Window KernelWindow(const char* op, const KernelCtx& k, const PoolAttrs& a) {
  InferCtx c(OpRegistry::Get(op), k.inputs, k.num_outputs(), "");
  return PoolWindow(c, k.input(0).shape(), a);
}

// ---- loops ----------------------------------------------------------------

// Per output position along one axis: the taps [lo, hi) that land inside the
// input, and how many land inside the padded input [-pad_begin, in + pad_end).
struct AxisTaps {
  std::vector<int64_t> lo, hi, padded;
};
AxisTaps Taps(const ops::Geo3& g, int i) {
  AxisTaps t;
  for (int64_t o = 0; o < g.out[i]; ++o) {
    const int64_t start = o * g.s[i] - g.pb[i];
    auto clamp = [&](int64_t v) { return std::clamp<int64_t>(v, 0, g.k[i]); };
    t.lo.push_back(clamp(ops::CeilDiv(-start, g.d[i])));
    t.hi.push_back(clamp(ops::CeilDiv(g.in[i] - start, g.d[i])));
    t.padded.push_back(clamp(ops::CeilDiv(g.in[i] + g.pe[i] - start, g.d[i])));
  }
  return t;
}

enum class PoolKind { kMax, kAvg };

template <class T, PoolKind kKind>
void PoolLoop(const Tensor& x, const Tensor& y, const Tensor* indices, const ops::Window& win,
              bool count_include_pad, bool column_major) {
  using A = Acc<T>;
  const ops::Geo3 g = ops::To3(win);
  const AxisTaps t0 = Taps(g, 0), t1 = Taps(g, 1), t2 = Taps(g, 2);
  const auto xs = ops::Strides5(x);
  const int64_t channels = x.dim(1);
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  // Flat spatial index multipliers of the Indices output.
  const int64_t m0 = column_major ? 1 : g.in[1] * g.in[2], m1 = column_major ? g.in[0] : g.in[2],
                m2 = column_major ? g.in[0] * g.in[1] : 1;
  const T* xp = static_cast<const T*>(x.raw_data());
  T* yp = static_cast<T*>(y.raw_data());
  int64_t* ip = indices ? indices->data<int64_t>() : nullptr;
  ParallelFor(0, x.dim(0) * channels, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t plane = lo; plane < hi; ++plane) {
      const T* xc = xp + (plane / channels) * xs[0] + (plane % channels) * xs[1];
      T* yo = yp + plane * out_plane;
      int64_t* io = ip ? ip + plane * out_plane : nullptr;
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const int64_t sd = od * g.s[0] - g.pb[0], sh = oh * g.s[1] - g.pb[1],
                          sw = ow * g.s[2] - g.pb[2];
            A best = std::numeric_limits<A>::lowest(), sum = A(0);
            int64_t arg = -1;
            for (int64_t kd = t0.lo[od]; kd < t0.hi[od]; ++kd) {
              const int64_t id = sd + kd * g.d[0];
              for (int64_t kh = t1.lo[oh]; kh < t1.hi[oh]; ++kh) {
                const int64_t ih = sh + kh * g.d[1];
                const T* row = xc + id * xs[2] + ih * xs[3];
                for (int64_t kw = t2.lo[ow]; kw < t2.hi[ow]; ++kw) {
                  const int64_t iw = sw + kw * g.d[2];
                  const A v = static_cast<A>(row[iw * xs[4]]);
                  if constexpr (kKind == PoolKind::kMax) {
                    if (arg < 0 || v > best) {
                      best = v;
                      arg = id * m0 + ih * m1 + iw * m2;
                    }
                  } else {
                    sum += v;
                  }
                }
              }
            }
            const int64_t j = (od * g.out[1] + oh) * g.out[2] + ow;
            if constexpr (kKind == PoolKind::kMax) {
              yo[j] = static_cast<T>(best);
              if (io) io[j] = plane * in_plane + arg;
            } else {
              const int64_t count =
                  count_include_pad
                      ? t0.padded[od] * t1.padded[oh] * t2.padded[ow]
                      : (t0.hi[od] - t0.lo[od]) * (t1.hi[oh] - t1.lo[oh]) * (t2.hi[ow] - t2.lo[ow]);
              yo[j] = static_cast<T>(sum / static_cast<A>(count));
            }
          }
    }
  });
}

void MaxPoolReference(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window win = KernelWindow("MaxPool", k, a);
  const Tensor* indices = k.num_outputs() > 1 ? &k.outputs[1] : nullptr;
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    PoolLoop<T, PoolKind::kMax>(k.input(0), k.output(0), indices, win, false, a.storage_order == 1);
  });
}

void AveragePoolReference(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window win = KernelWindow("AveragePool", k, a);
  VisitFloat(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    PoolLoop<T, PoolKind::kAvg>(k.input(0), k.output(0), nullptr, win, a.count_include_pad != 0,
                                false);
  });
}

// ---- fast path: oneDNN pooling --------------------------------------------

// A oneDNN pooling forward on X and Y in the layouts `x_pool` and `y_pool`.
// Without AVX-512 oneDNN pools plain NCHW with a slow non-jit kernel (3.5 ms
// for ShuffleNet-V2's 24x112x112 max pool on AVX2): there its jit kernel
// runs on channels-last copies of X and Y instead, the two reorders costing
// far less than the difference.
struct PoolPrim {
  dnnl::pooling_forward pool;
  memory::desc x_pool, y_pool;
  std::optional<dnnl::reorder> to_channels_last, from_channels_last;
};

memory::format_tag ChannelsLastTag(int64_t spatial_dims) {
  using tag = memory::format_tag;
  return spatial_dims == 1 ? tag::acb : spatial_dims == 2 ? tag::acdb : tag::acdeb;
}

std::optional<PoolPrim> MakePool(dnnl::algorithm alg, const Tensor& x, const Tensor& y,
                                 const ops::Window& w) {
  memory::dims strides, kernel, dilation, pad_l, pad_r;
  for (int64_t i = 0; i < w.nd; ++i) {
    strides.push_back(w.stride[i]);
    kernel.push_back(w.kernel[i]);
    dilation.push_back(w.dilation[i] - 1);  // oneDNN counts the gaps
    pad_l.push_back(w.pad_begin[i]);
    pad_r.push_back(w.reach_end(i));
  }
  auto make = [&](const memory::desc& xd, const memory::desc& yd) {
    return dnnl::pooling_forward::primitive_desc(du::Engine(), dnnl::prop_kind::forward_inference,
                                                 alg, xd, yd, strides, kernel, dilation, pad_l,
                                                 pad_r, du::UserScratchpad());
  };
  const auto tagged = [](const Tensor& t, memory::format_tag tag) {
    return memory::desc(du::Dims(t.shape()), du::ToDnnl(t.dtype()), tag);
  };
  try {
    const memory::desc xd = du::PlainDesc(x.shape(), x.dtype()),
                       yd = du::PlainDesc(y.shape(), y.dtype());
    dnnl::pooling_forward::primitive_desc pd = make(xd, yd);
    const std::string impl = pd.impl_info_str();
    if (!impl.starts_with("jit")) {
      const memory::desc xl = tagged(x, ChannelsLastTag(w.nd)),
                         yl = tagged(y, ChannelsLastTag(w.nd));
      dnnl::pooling_forward::primitive_desc last = make(xl, yl);
      if (std::string(last.impl_info_str()).starts_with("jit"))
        return PoolPrim{
            dnnl::pooling_forward(last), xl, yl,
            dnnl::reorder(dnnl::reorder::primitive_desc(du::Engine(), xd, du::Engine(), xl)),
            dnnl::reorder(dnnl::reorder::primitive_desc(du::Engine(), yl, du::Engine(), yd))};
    }
    // The reference implementation is slower than our loops.
    if (impl.starts_with("ref")) return std::nullopt;
    return PoolPrim{dnnl::pooling_forward(pd), xd, yd, std::nullopt, std::nullopt};
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// Runs oneDNN pooling when it applies; false when the loop must run.
bool PoolFast(KernelCtx& k, const ops::Window& w, dnnl::algorithm alg) {
  const Tensor& y = k.output(0);
  if (k.input(0).dtype() != DType::kFloat32 || k.num_outputs() > 1 || k.input(0).empty())
    return false;
  const Tensor x = k.input(0).Contiguous();
  std::string key = "Pool;" + std::to_string(static_cast<int>(alg)) + ToString(x.shape());
  for (const auto* v : {&w.kernel, &w.stride, &w.dilation, &w.pad_begin, &w.pad_end})
    key += ops::IntsString(*v);
  key += ToString(y.shape());
  const auto cached =
      du::Cached<std::optional<PoolPrim>>(key, [&] { return MakePool(alg, x, y, w); });
  auto& prim = *cached;
  if (!prim) return false;
  if (!prim->to_channels_last) {
    du::Execute(prim->pool, {{DNNL_ARG_SRC, du::Mem(x, prim->x_pool)},
                             {DNNL_ARG_DST, du::Mem(y, prim->y_pool)}});
    return true;
  }
  const Tensor xt(x.shape(), x.dtype()), yt(y.shape(), y.dtype());  // channels-last storage
  const memory xm = du::Mem(x, du::PlainDesc(x.shape(), x.dtype())),
               ym = du::Mem(y, du::PlainDesc(y.shape(), y.dtype()));
  const memory xl = du::Mem(xt, prim->x_pool), yl = du::Mem(yt, prim->y_pool);
  du::Execute(*prim->to_channels_last, {{DNNL_ARG_FROM, xm}, {DNNL_ARG_TO, xl}});
  du::Execute(prim->pool, {{DNNL_ARG_SRC, xl}, {DNNL_ARG_DST, yl}});
  du::Execute(*prim->from_channels_last, {{DNNL_ARG_FROM, yl}, {DNNL_ARG_TO, ym}});
  return true;
}

// oneDNN's average pooling for `a`, or none when it would be wrong: with
// count_include_pad it divides by the whole kernel size, which is right only
// when no ceil_mode window reaches past the end padding.
std::optional<dnnl::algorithm> AvgPoolAlgorithm(const ops::Window& w, const PoolAttrs& a) {
  if (!a.count_include_pad) return dnnl::algorithm::pooling_avg_exclude_padding;
  for (int64_t i = 0; i < w.nd; ++i)
    if (w.reach_end(i) != w.pad_end[i]) return std::nullopt;
  return dnnl::algorithm::pooling_avg_include_padding;
}

void MaxPoolForward(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window w = KernelWindow("MaxPool", k, a);
  if (!PoolFast(k, w, dnnl::algorithm::pooling_max)) MaxPoolReference(k, a);
}

void AveragePoolForward(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window w = KernelWindow("AveragePool", k, a);
  std::optional<dnnl::algorithm> alg = AvgPoolAlgorithm(w, a);
  if (!alg || !PoolFast(k, w, *alg)) AveragePoolReference(k, a);
}

// Vectors of 16 and 8 floats (declared outside a template: GCC drops a
// vector_size attribute whose size depends on a template parameter).
using V16 = float __attribute__((vector_size(16 * sizeof(float))));
using V8 = float __attribute__((vector_size(8 * sizeof(float))));

// Channels [l, l + the lanes of V) of N adjacent output positions of a held
// pool (see HeldPoolPositions), as vectors V.
template <PoolKind kKind, int N, class V>
void HeldPoolLanes(float* out, int64_t bk, const float* first, int64_t next, int64_t ni, int64_t nj,
                   int64_t step_i, int64_t step_j, int64_t l) {
  constexpr bool kMaxKind = kKind == PoolKind::kMax;
  constexpr float kStart = kMaxKind ? std::numeric_limits<float>::lowest() : 0.f;
  V acc[N], v;
  for (int n = 0; n < N; ++n) {
    acc[n] = V{} + kStart;
    if (kMaxKind && ni > 0 && nj > 0) std::memcpy(&acc[n], first + n * next + l, sizeof v);
  }
  for (int64_t i = 0; i < ni; ++i) {
    const float* q = first + i * step_i + l;
    for (int64_t j = 0; j < nj; ++j, q += step_j)
      for (int n = 0; n < N; ++n) {
        std::memcpy(&v, q + n * next, sizeof v);
        if constexpr (kMaxKind)
          acc[n] = v > acc[n] ? v : acc[n];
        else
          acc[n] += v;
      }
  }
  for (int n = 0; n < N; ++n) std::memcpy(out + n * bk + l, &acc[n], sizeof v);
}

// N adjacent output positions of a held pool (bk channels each, `out` the
// first, the next bk floats on) from ni x nj taps each: the first position's
// first tap at `first`, the next position's `next` floats on, the next tap
// along each axis step_i and step_j floats on. The channels go in vectors of
// 16, then of 8 (the held block of an AVX2 host: one by one, its pools took
// 3-4x onnxruntime's time), then one by one. The N positions are
// independent chains, which the latency of a max or an add would otherwise
// serialize.
template <PoolKind kKind, int N>
void HeldPoolPositions(float* out, int64_t bk, const float* first, int64_t next, int64_t ni,
                       int64_t nj, int64_t step_i, int64_t step_j) {
  constexpr bool kMaxKind = kKind == PoolKind::kMax;
  constexpr float kStart = kMaxKind ? std::numeric_limits<float>::lowest() : 0.f;
  int64_t l = 0;
  for (; l + 16 <= bk; l += 16)
    HeldPoolLanes<kKind, N, V16>(out, bk, first, next, ni, nj, step_i, step_j, l);
  for (; l + 8 <= bk; l += 8)
    HeldPoolLanes<kKind, N, V8>(out, bk, first, next, ni, nj, step_i, step_j, l);
  for (; l < bk; ++l)
    for (int n = 0; n < N; ++n) {
      const float* p = first + n * next + l;
      float acc = kMaxKind && ni > 0 && nj > 0 ? *p : kStart;
      for (int64_t i = 0; i < ni; ++i)
        for (int64_t j = 0; j < nj; ++j) {
          const float v = p[i * step_i + j * step_j];
          acc = kMaxKind ? (v > acc ? v : acc) : acc + v;
        }
      out[n * bk + l] = acc;
    }
}

// The planner's pools over blocked buffers (BlockedMaxPool,
// BlockedAveragePool: src/onnx/passes/choose_layouts.cc): X and Y are held
// in du::HeldTag's layout, so the convolutions around a pool need no
// reorders. Element (n, c, h, w) of a held buffer of C channels is at
// ((n * C/B + c/B) * H * W + h * W + w) * B + c % B, B = du::HeldBlock(C):
// each output position is the max or mean of whole runs of B channels,
// which the loops take as vectors. The same loops serve every shape, where
// a oneDNN pooling primitive is generated per shape (0.05 ms, each time a
// model meets a new input size). Max keeps the first tap's NaN, as the
// reference loop does.
template <PoolKind kKind>
void BlockedPoolForward(KernelCtx& k, const PoolAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  constexpr bool kMaxKind = kKind == PoolKind::kMax;
  const Tensor x = k.input(0).Contiguous();
  const ops::Geo3 g = ops::To3(KernelWindow(kMaxKind ? "MaxPool" : "AveragePool", k, a));
  const AxisTaps th = Taps(g, 1), tw = Taps(g, 2);
  const int64_t bk = du::HeldBlock(x.dim(1)), planes = x.dim(0) * (x.dim(1) / bk);
  const int64_t in_h = g.in[1], in_w = g.in[2], out_h = g.out[1], out_w = g.out[2];
  const float* xp = x.data<float>();
  float* yp = static_cast<float*>(y.raw_data());
  // Output row r of plane p: positions [ow, ow + N).
  const auto positions = [&]<int N>(int64_t r, int64_t ow) {
    const int64_t p = r / out_h, oh = r % out_h, i0 = th.lo[oh], ni = th.hi[oh] - i0;
    const int64_t j0 = tw.lo[ow], ih = oh * g.s[1] - g.pb[1] + i0 * g.d[1],
                  iw = ow * g.s[2] - g.pb[2] + j0 * g.d[2];
    float* out = yp + (r * out_w + ow) * bk;
    HeldPoolPositions<kKind, N>(out, bk, xp + ((p * in_h + ih) * in_w + iw) * bk, g.s[2] * bk, ni,
                                tw.hi[ow] - j0, g.d[1] * in_w * bk, g.d[2] * bk);
    if constexpr (!kMaxKind)
      for (int n = 0; n < N; ++n) {
        const float count =
            static_cast<float>(a.count_include_pad ? th.padded[oh] * tw.padded[ow + n]
                                                   : ni * (tw.hi[ow + n] - tw.lo[ow + n]));
        for (int64_t l = 0; l < bk; ++l) out[n * bk + l] /= count;
      }
  };
  const int64_t row = std::max<int64_t>(1, out_w * bk * g.k[1] * g.k[2]);
  ParallelFor(0, planes * out_h, std::max<int64_t>(1, kSerialBytes / 4 / row),
              [&](int64_t lo, int64_t hi) {
                for (int64_t r = lo; r < hi; ++r)
                  for (int64_t ow = 0; ow < out_w;) {
                    // Four positions at once where their taps are alike.
                    if (ow + 4 <= out_w && tw.lo[ow] == tw.lo[ow + 3] &&
                        tw.hi[ow] == tw.hi[ow + 3] && tw.padded[ow] == tw.padded[ow + 3]) {
                      positions.template operator()<4>(r, ow);
                      ow += 4;
                    } else {
                      positions.template operator()<1>(r, ow++);
                    }
                  }
              });
}

// ---- global pooling ---------------------------------------------------------

SpecList GlobalInfer(const InferCtx& c, const NoAttrs&) {
  SINGA_CHECK(c.rank(0) >= 2, ShapeError,
              c.where() << ": X must be [N, C, D1, ...], got " << c.inputs_string());
  Shape y = c.shape(0);
  std::fill(y.begin() + 2, y.end(), 1);
  return {{c.dtype(0), y}};
}

template <PoolKind kKind>
void GlobalPoolForward(KernelCtx& k, const NoAttrs&) {
  const Tensor x = k.input(0).Contiguous();
  const Tensor& y = k.output(0);
  const int64_t planes = x.dim(0) * x.dim(1);
  if (planes == 0) return;
  const int64_t n = x.numel() / planes;
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* xp = static_cast<const T*>(x.raw_data());
    T* yp = static_cast<T*>(y.raw_data());
    ParallelFor(0, planes, std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(n, 1)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t p = lo; p < hi; ++p) {
                    const T* row = xp + p * n;
                    if constexpr (kKind == PoolKind::kMax) {
                      A best = n ? static_cast<A>(row[0]) : std::numeric_limits<A>::quiet_NaN();
                      for (int64_t i = 1; i < n; ++i) best = std::max(best, static_cast<A>(row[i]));
                      yp[p] = static_cast<T>(best);
                    } else {
                      A sum = 0;
                      for (int64_t i = 0; i < n; ++i) sum += static_cast<A>(row[i]);
                      yp[p] = static_cast<T>(sum / static_cast<A>(n));
                    }
                  }
                });
  });
}

// ---- backward ---------------------------------------------------------------
// MaxPoolGrad and AveragePoolGrad (domain ai.singa): (dY, X) -> dX with the
// forward's attributes. MaxPool routes each window's gradient to its max (on
// ties to one of them: the loop takes the first in scan order, the element the
// Indices output names; oneDNN its own pick); a window of padding only passes
// none. AveragePool spreads it evenly over the positions the window counted.

SpecList PoolGradInfer(const InferCtx& c, const PoolAttrs& a) {
  SINGA_CHECK(c.rank(1) >= 3, ShapeError,
              c.where() << ": X must have 1 to 3 spatial dimensions ([N, C, D1, ...]), got "
                        << c.inputs_string());
  ops::Window w = PoolWindow(c, c.shape(1), a);
  Shape y = {c.shape(1)[0], c.shape(1)[1]};
  y.insert(y.end(), w.out.begin(), w.out.end());
  SINGA_CHECK(c.shape(0) == y, ShapeError,
              c.where() << ": dY must have the pooled shape " << ToString(y) << ", got "
                        << c.inputs_string());
  return {{c.dtype(1), c.shape(1)}};
}

ops::Window GradKernelWindow(const char* op, const KernelCtx& k, const PoolAttrs& a) {
  InferCtx c(OpRegistry::Get(op, kLatestOpset, "ai.singa"), k.inputs, 1, "");
  return PoolWindow(c, k.input(1).shape(), a);
}

template <class T, PoolKind kKind>
void PoolGradLoop(const Tensor& dy, const Tensor& x, const Tensor& dx, const ops::Window& win,
                  bool count_include_pad) {
  using A = Acc<T>;
  const ops::Geo3 g = ops::To3(win);
  const AxisTaps t0 = Taps(g, 0), t1 = Taps(g, 1), t2 = Taps(g, 2);
  const auto xs = ops::Strides5(x), ys = ops::Strides5(dy);
  const int64_t channels = x.dim(1);
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const T* xp = static_cast<const T*>(x.raw_data());
  const T* yp = static_cast<const T*>(dy.raw_data());
  T* dxp = static_cast<T*>(dx.raw_data());
  ParallelFor(0, x.dim(0) * channels, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(in_plane);
    for (int64_t plane = lo; plane < hi; ++plane) {
      const int64_t n = plane / channels, ch = plane % channels;
      const T* xc = xp + n * xs[0] + ch * xs[1];
      const T* yc = yp + n * ys[0] + ch * ys[1];
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t od = 0; od < g.out[0]; ++od)
        for (int64_t oh = 0; oh < g.out[1]; ++oh)
          for (int64_t ow = 0; ow < g.out[2]; ++ow) {
            const A grad = static_cast<A>(yc[od * ys[2] + oh * ys[3] + ow * ys[4]]);
            const int64_t sd = od * g.s[0] - g.pb[0], sh = oh * g.s[1] - g.pb[1],
                          sw = ow * g.s[2] - g.pb[2];
            A best = std::numeric_limits<A>::lowest(), share = grad;
            if constexpr (kKind == PoolKind::kAvg) {
              const int64_t count =
                  count_include_pad
                      ? t0.padded[od] * t1.padded[oh] * t2.padded[ow]
                      : (t0.hi[od] - t0.lo[od]) * (t1.hi[oh] - t1.lo[oh]) * (t2.hi[ow] - t2.lo[ow]);
              share = grad / static_cast<A>(count);
            }
            int64_t arg = -1;
            for (int64_t kd = t0.lo[od]; kd < t0.hi[od]; ++kd) {
              const int64_t id = sd + kd * g.d[0];
              for (int64_t kh = t1.lo[oh]; kh < t1.hi[oh]; ++kh) {
                const int64_t ih = sh + kh * g.d[1];
                const T* row = xc + id * xs[2] + ih * xs[3];
                for (int64_t kw = t2.lo[ow]; kw < t2.hi[ow]; ++kw) {
                  const int64_t iw = sw + kw * g.d[2];
                  const int64_t j = (id * g.in[1] + ih) * g.in[2] + iw;
                  if constexpr (kKind == PoolKind::kMax) {
                    const A v = static_cast<A>(row[iw * xs[4]]);
                    if (arg < 0 || v > best) best = v, arg = j;
                  } else {
                    acc[j] += share;
                  }
                }
              }
            }
            if constexpr (kKind == PoolKind::kMax)
              if (arg >= 0) acc[arg] += grad;
          }
      T* out = dxp + plane * in_plane;
      for (int64_t j = 0; j < in_plane; ++j) out[j] = static_cast<T>(acc[j]);
    }
  });
}

void MaxPoolGradReference(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window win = GradKernelWindow("MaxPoolGrad", k, a);
  VisitFloat(k.input(1).dtype(), [&]<class T>(Tag<T>) {
    PoolGradLoop<T, PoolKind::kMax>(k.input(0), k.input(1), k.output(0), win, false);
  });
}

void AveragePoolGradReference(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window win = GradKernelWindow("AveragePoolGrad", k, a);
  VisitFloat(k.input(1).dtype(), [&]<class T>(Tag<T>) {
    PoolGradLoop<T, PoolKind::kAvg>(k.input(0), k.input(1), k.output(0), win,
                                    a.count_include_pad != 0);
  });
}

// oneDNN pooling backward; max pooling needs the forward's workspace (where
// each max came from), so a training forward runs first.
struct PoolBwd {
  dnnl::pooling_forward::primitive_desc fwd_pd;
  dnnl::pooling_forward fwd;
  dnnl::pooling_backward bwd;
};

std::optional<PoolBwd> MakePoolBwd(dnnl::algorithm alg, const Shape& x, const Shape& y,
                                   const ops::Window& w) {
  memory::dims strides, kernel, dilation, pad_l, pad_r;
  for (int64_t i = 0; i < w.nd; ++i) {
    strides.push_back(w.stride[i]);
    kernel.push_back(w.kernel[i]);
    dilation.push_back(w.dilation[i] - 1);  // oneDNN counts the gaps
    pad_l.push_back(w.pad_begin[i]);
    pad_r.push_back(w.reach_end(i));
  }
  try {
    const memory::desc xd = du::PlainDesc(x, DType::kFloat32),
                       yd = du::PlainDesc(y, DType::kFloat32);
    dnnl::pooling_forward::primitive_desc fwd_pd(du::Engine(), dnnl::prop_kind::forward_training,
                                                 alg, xd, yd, strides, kernel, dilation, pad_l,
                                                 pad_r);
    dnnl::pooling_backward::primitive_desc bwd_pd(du::Engine(), alg, xd, yd, strides, kernel,
                                                  dilation, pad_l, pad_r, fwd_pd);
    // The reference implementations are slower than our loops.
    if (std::string(bwd_pd.impl_info_str()).starts_with("ref")) return std::nullopt;
    return PoolBwd{fwd_pd, dnnl::pooling_forward(fwd_pd), dnnl::pooling_backward(bwd_pd)};
  } catch (const dnnl::error&) {
    return std::nullopt;
  }
}

// Runs oneDNN's pooling backward when it applies; false when the loop must run.
bool PoolGradFast(KernelCtx& k, const ops::Window& w, dnnl::algorithm alg) {
  const Tensor& dx = k.output(0);
  if (k.input(1).dtype() != DType::kFloat32 || k.input(0).empty()) return false;
  const Tensor dy = k.input(0).Contiguous();
  std::string key = "PoolGrad;" + std::to_string(static_cast<int>(alg)) + ToString(dx.shape());
  for (const auto* v : {&w.kernel, &w.stride, &w.dilation, &w.pad_begin, &w.pad_end})
    key += ops::IntsString(*v);
  key += ToString(dy.shape());
  const auto cached = du::Cached<std::optional<PoolBwd>>(
      key, [&] { return MakePoolBwd(alg, dx.shape(), dy.shape(), w); });
  auto& prim = *cached;
  if (!prim) return false;
  const memory::desc xd = du::PlainDesc(dx.shape(), DType::kFloat32),
                     yd = du::PlainDesc(dy.shape(), DType::kFloat32);
  std::unordered_map<int, memory> args = {{DNNL_ARG_DIFF_DST, du::Mem(dy, yd)},
                                          {DNNL_ARG_DIFF_SRC, du::Mem(dx, xd)}};
  Tensor y_buf, ws_buf;
  if (alg == dnnl::algorithm::pooling_max) {
    const Tensor x = k.input(1).Contiguous();
    y_buf = Tensor(dy.shape(), DType::kFloat32);
    const memory::desc wsd = prim->fwd_pd.workspace_desc();
    ws_buf = Tensor({static_cast<int64_t>(wsd.get_size())}, DType::kUInt8);
    const memory ws(wsd, du::Engine(), ws_buf.raw_data());
    du::Execute(prim->fwd, {{DNNL_ARG_SRC, du::Mem(x, xd)},
                            {DNNL_ARG_DST, du::Mem(y_buf, yd)},
                            {DNNL_ARG_WORKSPACE, ws}});
    args[DNNL_ARG_WORKSPACE] = ws;
  }
  du::Execute(prim->bwd, args);
  return true;
}

void MaxPoolGradForward(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window w = GradKernelWindow("MaxPoolGrad", k, a);
  if (!PoolGradFast(k, w, dnnl::algorithm::pooling_max)) MaxPoolGradReference(k, a);
}

void AveragePoolGradForward(KernelCtx& k, const PoolAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window w = GradKernelWindow("AveragePoolGrad", k, a);
  std::optional<dnnl::algorithm> alg = AvgPoolAlgorithm(w, a);
  if (!alg || !PoolGradFast(k, w, *alg)) AveragePoolGradReference(k, a);
}

#if SINGA_CUDA
// cuDNN pools where its geometry is the op's (cuda::PoolTakes): no
// dilation, equal pads, floor-mode sizes; MaxPool without Indices.

cuda::Pool CudaMode(bool max, const PoolAttrs& a) {
  if (max) return cuda::Pool::kMax;
  return a.count_include_pad ? cuda::Pool::kAverageIncludePad : cuda::Pool::kAverageExcludePad;
}

// Whether cuDNN pools X (input kX) with the op's geometry.
template <bool kMax, int kX>
bool CudaPoolTakes(const InferCtx& c, const PoolAttrs& a) {
  if (kMax && c.num_outputs() > 1) return false;
  const ops::Window w = PoolWindow(c, c.shape(kX), a);
  return cuda::PoolTakes(ops::ToCuda(w), w.in, w.out);
}

template <bool kMax>
void PoolCuda(KernelCtx& k, const PoolAttrs& a) {
  const ops::Window w = KernelWindow(kMax ? "MaxPool" : "AveragePool", k, a);
  cuda::PoolForward(CudaMode(kMax, a), k.input(0), k.output(0), ops::ToCuda(w));
}
template <bool kMax>
void PoolGradCuda(KernelCtx& k, const PoolAttrs& a) {
  const ops::Window w = GradKernelWindow(kMax ? "MaxPoolGrad" : "AveragePoolGrad", k, a);
  cuda::PoolBackward(CudaMode(kMax, a), k.input(0), k.input(1), k.output(0), ops::ToCuda(w));
}

// GlobalAveragePool: the mean over the spatial dimensions.
void GlobalAverageCuda(KernelCtx& k, const NoAttrs&) {
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < k.input(0).ndim(); ++d) axes.push_back(d);
  cuda::Reduce(k.input(0), k.output(0), axes, true);
}
#endif

template <bool kMax>
TensorList PoolBackward(const GradCtx& g, const PoolAttrs& a) {
  static const OpSchema& op =
      OpRegistry::Get(kMax ? "MaxPoolGrad" : "AveragePoolGrad", kLatestOpset, "ai.singa");
  // Only Y has a gradient (Indices is an integer output).
  if (!g.needs_grad(0) || !g.grad_output(0).defined()) return {Tensor()};
  return {RunOp(op, TensorList{g.grad_output(0), g.input(0)}, a)[0]};
}

// GlobalAveragePool: dX = dY / n at every position.
TensorList GlobalAverageBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor &x = g.input(0), &dy = g.grad_output(0);
  const int64_t planes = x.dim(0) * x.dim(1);
  const int64_t n = planes ? x.numel() / planes : 0;
  const Tensor scaled = grad::Mul(dy, grad::Scalar(n ? 1.0 / static_cast<double>(n) : 0.0, dy));
  const Tensor shape = Tensor::FromVector<int64_t>(
      {x.ndim()}, std::vector<int64_t>(x.shape().begin(), x.shape().end()));
  return {Call1("Expand", {scaled, shape})};
}

// GlobalMaxPool: dY goes to the positions equal to the max.
// NOTE: every tied maximum receives the whole gradient (ties are rare in
// float data, and a mask needs no argmax pass).
TensorList GlobalMaxBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor mask = Call1("Equal", {g.input(0), g.output(0)});
  return {grad::Masked(mask, g.grad_output(0))};
}

const std::vector<DType> kMaxPoolTypes = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                          DType::kFloat64, DType::kInt8,     DType::kUInt8};

}  // namespace

// 8 added Indices and storage_order, 10 ceil_mode and dilations, 11 int8
// and uint8 (and changed only the auto_pad text).
[[maybe_unused]] static const bool kMaxPool =
    RegisterVersions<PoolAttrs>("MaxPool", {1, 8, 10, 11}, [](OpBuilder<PoolAttrs>& b, int v) {
      b.inputs({"X"})
          .outputs(v >= 8 ? std::vector<std::string>{"Y", "Indices?"}
                          : std::vector<std::string>{"Y"})
          .attr("auto_pad", &PoolAttrs::auto_pad)
          .attr("kernel_shape", &PoolAttrs::kernel_shape, true)
          .attr("pads", &PoolAttrs::pads)
          .attr("strides", &PoolAttrs::strides)
          .dtypes(v >= 11 ? kMaxPoolTypes : dtypes::kFloats)
          .infer(PoolInfer)
          .kernel(MaxPoolForward)
              SINGA_CUDA_KERNEL(PoolCuda<true>, ops::kCudnnFloats, CudaPoolTakes<true, 0>)
          .reference(MaxPoolReference)
          .backward(PoolBackward<true>);
      if (v >= 8) b.attr("storage_order", &PoolAttrs::storage_order);
      if (v >= 10)
        b.attr("ceil_mode", &PoolAttrs::ceil_mode).attr("dilations", &PoolAttrs::dilations);
    });
// 7 added count_include_pad, 10 ceil_mode, 19 dilations.
[[maybe_unused]] static const bool kAveragePool = RegisterVersions<PoolAttrs>(
    "AveragePool", {1, 7, 10, 11, 19}, [](OpBuilder<PoolAttrs>& b, int v) {
      b.inputs({"X"})
          .outputs({"Y"})
          .attr("auto_pad", &PoolAttrs::auto_pad)
          .attr("kernel_shape", &PoolAttrs::kernel_shape, true)
          .attr("pads", &PoolAttrs::pads)
          .attr("strides", &PoolAttrs::strides)
          .dtypes(dtypes::kFloats)
          .infer(PoolInfer)
          .kernel(AveragePoolForward)
              SINGA_CUDA_KERNEL(PoolCuda<false>, ops::kCudnnFloats, CudaPoolTakes<false, 0>)
          .reference(AveragePoolReference)
          .backward(PoolBackward<false>);
      if (v >= 7) b.attr("count_include_pad", &PoolAttrs::count_include_pad);
      if (v >= 10) b.attr("ceil_mode", &PoolAttrs::ceil_mode);
      if (v >= 19) b.attr("dilations", &PoolAttrs::dilations);
    });

// X and Y 2-D float32 in the planner's blocked layout (BlockedPoolForward).
template <PoolKind kKind>
bool RegisterBlockedPool(std::string_view name) {
  return RegisterVersions<PoolAttrs>(name, {1}, [](OpBuilder<PoolAttrs>& b, int) {
    b.domain("ai.singa")
        .inputs({"X"})
        .outputs({"Y"})
        .attr("auto_pad", &PoolAttrs::auto_pad)
        .attr("ceil_mode", &PoolAttrs::ceil_mode)
        .attr("dilations", &PoolAttrs::dilations)
        .attr("kernel_shape", &PoolAttrs::kernel_shape, true)
        .attr("pads", &PoolAttrs::pads)
        .attr("strides", &PoolAttrs::strides)
        .dtypes({DType::kFloat32})
        .infer(PoolInfer)
        .kernel(BlockedPoolForward<kKind>);
    if (kKind == PoolKind::kAvg) b.attr("count_include_pad", &PoolAttrs::count_include_pad);
  });
}
[[maybe_unused]] static const bool kBlockedMaxPool =
    RegisterBlockedPool<PoolKind::kMax>("BlockedMaxPool");
[[maybe_unused]] static const bool kBlockedAveragePool =
    RegisterBlockedPool<PoolKind::kAvg>("BlockedAveragePool");

SINGA_REGISTER_OP(GlobalAveragePool, NoAttrs)
    .since_opset(1)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(GlobalInfer)
    .kernel(GlobalPoolForward<PoolKind::kAvg>)
        SINGA_CUDA_KERNEL(GlobalAverageCuda, ops::kCudaFloats)
    .backward(GlobalAverageBackward);

SINGA_REGISTER_OP(GlobalMaxPool, NoAttrs)
    .since_opset(1)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kFloats)
    .infer(GlobalInfer)
    .kernel(GlobalPoolForward<PoolKind::kMax>)
    .backward(GlobalMaxBackward);

// Internal ops of the pools' backward.
SINGA_REGISTER_OP(MaxPoolGrad, PoolAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X"})
    .outputs({"dX"})
    .attr("auto_pad", &PoolAttrs::auto_pad)
    .attr("ceil_mode", &PoolAttrs::ceil_mode)
    .attr("dilations", &PoolAttrs::dilations)
    .attr("kernel_shape", &PoolAttrs::kernel_shape, true)
    .attr("pads", &PoolAttrs::pads)
    .attr("storage_order", &PoolAttrs::storage_order)
    .attr("strides", &PoolAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(PoolGradInfer)
    .kernel(MaxPoolGradForward)
        SINGA_CUDA_KERNEL(PoolGradCuda<true>, ops::kCudnnFloats, CudaPoolTakes<true, 1>)
    .reference(MaxPoolGradReference);
SINGA_REGISTER_OP(AveragePoolGrad, PoolAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X"})
    .outputs({"dX"})
    .attr("auto_pad", &PoolAttrs::auto_pad)
    .attr("ceil_mode", &PoolAttrs::ceil_mode)
    .attr("count_include_pad", &PoolAttrs::count_include_pad)
    .attr("dilations", &PoolAttrs::dilations)
    .attr("kernel_shape", &PoolAttrs::kernel_shape, true)
    .attr("pads", &PoolAttrs::pads)
    .attr("strides", &PoolAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(PoolGradInfer)
    .kernel(AveragePoolGradForward)
        SINGA_CUDA_KERNEL(PoolGradCuda<false>, ops::kCudnnFloats, CudaPoolTakes<false, 1>)
    .reference(AveragePoolGradReference);

}  // namespace singa
