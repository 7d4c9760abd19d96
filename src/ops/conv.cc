// Conv: N-d cross-correlation of X [N, C, D1..Dk] with W [M, C/group, k1..kk]
// plus an optional bias B [M], for 1-3 spatial dimensions, with groups
// (depthwise when group == C), strides, dilations, explicit or auto pads.
// Opset 1's Conv is opset 11's (11 only reworded the spec).
// https://onnx.ai/onnx/operators/onnx__Conv.html
//
// Fast path: a oneDNN convolution on the layouts (oneDNN's own pick, channel
// blocked, or plain for 1x1) measured fastest for the shape on its first
// call; the plain inputs are reordered into those layouts and the result
// back. Reference (and float64) path: a direct loop.
//
// FusedConv (domain ai.singa, made by the ONNX planner only): Conv, plus an
// optional Z added to the result, then an optional activation (Relu,
// LeakyRelu, Clip, Swish: x * sigmoid(x), HardSwish: x * clip(x / 6 + 1 / 2,
// 0, 1)), as oneDNN post-ops of the one convolution. `blocked`
// says which of its 2-D float32 tensors hold oneDNN's channel-blocked
// nChw<B>c layout instead of NCHW, B = dnnl_util::ChannelBlock() (16 with
// AVX-512, 8 with AVX2), or channels-last (nhwc) when their channels are not
// a multiple of B (the planner keeps activations blocked between
// convolutions, so they are not reordered at every layer): bit 0 X, bit 1 Y,
// bit 2 Z (the tensors contiguous; singa/ops/fused_conv.h names them).
//
// Backward: the internal ops ConvGradData (dY, W) -> dX and ConvGradWeight
// (dY, X) -> dW[, dB] (domain ai.singa), each a oneDNN convolution backward
// primitive (float32/bfloat16/float16) with a direct loop beside it.
#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <optional>
#include <string_view>

#include "kernels/cpu/direct_conv.h"
#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/tuning_cache.h"
#include "ops/fused_activation.h"
#include "ops/grad_util.h"
#include "ops/window.h"
#include "singa/core/profile.h"
#include "singa/ops/fused_conv.h"

namespace singa {
namespace {

namespace du = cpu::dnnl_util;
using dnnl::memory;

struct ConvAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
  // FusedConv only: the activation applied after adding Z ("" for none) and
  // its parameters (LeakyRelu: alpha; Clip: alpha = min, beta = max).
  std::string activation;
  float alpha = 0, beta = 0;
  int64_t blocked = 0;  // FusedConv only: kBlockedX | kBlockedY | kBlockedZ (fused_conv.h)
};

using fused_conv::kBlockedX, fused_conv::kBlockedY, fused_conv::kBlockedZ;

std::vector<int64_t> KernelShape(const Shape& w_shape) {
  return std::vector<int64_t>(w_shape.begin() + 2, w_shape.end());
}

ops::Window ConvWindow(const InferCtx& c, const ConvAttrs& a) {
  const Shape& x = c.shape(0);
  const Shape& w = c.shape(1);
  SINGA_CHECK(x.size() >= 3 && x.size() <= 5, ShapeError,
              c.where() << ": X must have 1 to 3 spatial dimensions ([N, C, D1, ...]), got "
                        << c.inputs_string());
  SINGA_CHECK(
      w.size() == x.size(), ShapeError,
      c.where() << ": W must have X's rank ([M, C/group, k1, ...]), got " << c.inputs_string());
  SINGA_CHECK(a.group >= 1, ShapeError, c.where() << ": group must be positive, got " << a.group);
  SINGA_CHECK(w[1] * a.group == x[1] && w[0] % a.group == 0, ShapeError,
              c.where() << ": with group " << a.group
                        << ", X's channels must be W.shape[1] * group and W.shape[0] "
                        << "a multiple of group (" << c.inputs_string() << ")");
  std::vector<int64_t> kernel = KernelShape(w);
  SINGA_CHECK(a.kernel_shape.empty() || a.kernel_shape == kernel, ShapeError,
              c.where() << ": kernel_shape " << ops::IntsString(a.kernel_shape)
                        << " does not match W's spatial shape (" << c.inputs_string() << ")");
  if (c.has_input(2))
    SINGA_CHECK(
        c.rank(2) == 1 && c.shape(2)[0] == w[0], ShapeError,
        c.where() << ": B must have shape [M] = [" << w[0] << "], got " << c.inputs_string());
  return ops::ResolveWindow(c, Shape(x.begin() + 2, x.end()), kernel, a.strides, a.dilations,
                            a.pads, a.auto_pad, false);
}

SpecList ConvInfer(const InferCtx& c, const ConvAttrs& a) {
  ops::Window w = ConvWindow(c, a);
  Shape y = {c.shape(0)[0], c.shape(1)[0]};
  y.insert(y.end(), w.out.begin(), w.out.end());
  return {{c.dtype(0), y}};
}

SpecList FusedConvInfer(const InferCtx& c, const ConvAttrs& a) {
  SpecList y = ConvInfer(c, a);
  if (c.has_input(3))
    SINGA_CHECK(c.shape(3) == y[0].shape && c.dtype(3) == y[0].dtype, ShapeError,
                c.where() << ": Z must have the result's shape " << ToString(y[0].shape) << ", got "
                          << c.inputs_string());
  static const std::array<std::string_view, 6> kActs = {"",     "Relu",  "LeakyRelu",
                                                        "Clip", "Swish", "HardSwish"};
  SINGA_CHECK(std::find(kActs.begin(), kActs.end(), a.activation) != kActs.end(), ShapeError,
              c.where() << ": unknown activation '" << a.activation << "'");
  return y;
}

// Re-derives the geometry in a kernel (inputs were validated by ConvInfer).
ops::Window KernelWindow(const KernelCtx& k, const ConvAttrs& a) {
  static const OpSchema& schema = OpRegistry::Get("Conv");
  InferCtx c(schema, k.inputs, 1, "");
  return ConvWindow(c, a);
}

// ---- reference: a direct loop --------------------------------------------

// Output positions o in [0, out) whose input position o*s + off is in [0, in).
std::pair<int64_t, int64_t> ValidRange(int64_t off, int64_t s, int64_t in, int64_t out) {
  int64_t lo = off >= 0 ? 0 : ops::CeilDiv(-off, s);
  int64_t hi = in - off <= 0 ? 0 : ops::CeilDiv(in - off, s);
  return {std::min(lo, out), std::min(hi, out)};
}

template <class T>
void ConvLoop(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
              const ops::Window& win, int64_t group) {
  using A = Acc<T>;
  const int64_t n_batch = x.dim(0), m_all = w.dim(0), cg = w.dim(1), mg = m_all / group;
  const ops::Geo3 g = ops::To3(win);
  const auto xs = ops::Strides5(x), ws = ops::Strides5(w);
  const int64_t plane = g.out[0] * g.out[1] * g.out[2];
  const T* xp = static_cast<const T*>(x.raw_data());
  const T* wp = static_cast<const T*>(w.raw_data());
  const T* bp = b.defined() ? static_cast<const T*>(b.raw_data()) : nullptr;
  const int64_t bs = b.defined() ? b.strides()[0] : 0;
  T* yp = static_cast<T*>(y.raw_data());
  ParallelFor(0, n_batch * m_all, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(plane);
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t n = i / m_all, m = i % m_all, grp = m / mg;
      std::fill(acc.begin(), acc.end(), bp ? static_cast<A>(bp[m * bs]) : A(0));
      for (int64_t c = 0; c < cg; ++c) {
        const T* xc = xp + n * xs[0] + (grp * cg + c) * xs[1];
        const T* wc = wp + m * ws[0] + c * ws[1];
        for (int64_t kd = 0; kd < g.k[0]; ++kd) {
          const int64_t offd = kd * g.d[0] - g.pb[0];
          auto [d0, d1] = ValidRange(offd, g.s[0], g.in[0], g.out[0]);
          for (int64_t kh = 0; kh < g.k[1]; ++kh) {
            const int64_t offh = kh * g.d[1] - g.pb[1];
            auto [h0, h1] = ValidRange(offh, g.s[1], g.in[1], g.out[1]);
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              const int64_t offw = kw * g.d[2] - g.pb[2];
              auto [w0, w1] = ValidRange(offw, g.s[2], g.in[2], g.out[2]);
              const A wv = static_cast<A>(wc[kd * ws[2] + kh * ws[3] + kw * ws[4]]);
              for (int64_t od = d0; od < d1; ++od) {
                for (int64_t oh = h0; oh < h1; ++oh) {
                  const T* xrow = xc + (od * g.s[0] + offd) * xs[2] + (oh * g.s[1] + offh) * xs[3];
                  A* arow = acc.data() + (od * g.out[1] + oh) * g.out[2];
                  for (int64_t ow = w0; ow < w1; ++ow)
                    arow[ow] += wv * static_cast<A>(xrow[(ow * g.s[2] + offw) * xs[4]]);
                }
              }
            }
          }
        }
      }
      T* yo = yp + i * plane;
      for (int64_t j = 0; j < plane; ++j) yo[j] = static_cast<T>(acc[j]);
    }
  });
}

// FusedConv's epilogue on the convolution's result y (float32, NCHW): y +=
// z (NCHW, or undefined), then the activation.
void Epilogue(const Tensor& out, const Tensor& z_in, const ConvAttrs& a) {
  float* y = static_cast<float*>(out.raw_data());
  const Tensor z = z_in.defined() ? z_in.Contiguous() : Tensor();
  const float* zp = z.defined() ? static_cast<const float*>(z.raw_data()) : nullptr;
  const int64_t n = out.numel();
  if (zp)
    for (int64_t i = 0; i < n; ++i) y[i] += zp[i];
  ops::ApplyFusedActivation(y, n, a.activation, a.alpha, a.beta);
}

bool HasEpilogue(KernelCtx& k, const ConvAttrs& a) {
  return k.has_input(3) || !a.activation.empty();
}

void ConvReference(KernelCtx& k, const ConvAttrs& a) {
  if (k.output(0).empty()) return;
  ops::Window win = KernelWindow(k, a);
  const Tensor b = k.has_input(2) ? k.input(2) : Tensor();
  const Tensor x = a.blocked & kBlockedX ? du::Unblock(k.input(0), false) : k.input(0);
  const Tensor y =
      a.blocked & kBlockedY ? Tensor(k.output(0).shape(), k.output(0).dtype()) : k.output(0);
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) { ConvLoop<T>(x, k.input(1), b, y, win, a.group); });
  if (HasEpilogue(k, a)) {
    const Tensor z = !k.has_input(3)         ? Tensor()
                     : a.blocked & kBlockedZ ? du::Unblock(k.input(3), false)
                                             : k.input(3);
    Epilogue(y, z, a);
  }
  if (a.blocked & kBlockedY) cpu::ConvertCopy(du::Unblock(y, true), k.output(0));
}

// ---- fast path: oneDNN ----------------------------------------------------

struct ConvPrim {
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward prim;
  memory::desc src_plain, wei_plain, dst_plain;   // plain row-major descriptors
  bool src_is_plain, wei_is_plain, dst_is_plain;  // the primitive takes the plain layout
  std::string layout;                             // names the candidate in its reorders' cache keys
  bool sum = false;     // a sum post-op: dst holds Z before the convolution runs
  int64_t blocked = 0;  // FusedConv's: X / Y / Z are nChw<B>c buffers (src / dst layouts)
};

// W [M, C/g, k...] as oneDNN's grouped weights [g, M/g, C/g, k...] (a view).
memory::desc WeightsDesc(const Tensor& w, int64_t group) {
  if (group == 1) return du::Desc(w);
  memory::dims dims = {group, w.dim(0) / group},
               strides = {w.strides()[0] * (w.dim(0) / group), w.strides()[0]};
  for (int64_t i = 1; i < w.ndim(); ++i) {
    dims.push_back(w.dim(i));
    strides.push_back(w.strides()[i]);
  }
  return memory::desc(dims, du::ToDnnl(w.dtype()), strides);
}

// The cache key of the reorder of w into the layout of the candidate `layout`
// of the convolution keyed `key`.
std::string WeightsReorderKey(const std::string& key, const std::string& layout, const Tensor& w) {
  std::string rk = key + "|" + layout + "|wei|";
  du::AppendKey(rk, w);
  return rk;
}

// One call of p: reorders x and w into p's layouts where they differ, the
// convolution (with Z in dst first for a sum post-op), and the reorder of
// its result into y. `key` is the convolution's cache key.
void RunConv(const ConvPrim& p, const std::string& key, const Tensor& x, const Tensor& w,
             const Tensor& b, const Tensor& z, const Tensor& y, int64_t group) {
  const std::string base = key + "|" + p.layout;
  memory src, wei, dst;
  if (p.blocked & kBlockedX) {
    src = memory(p.pd.src_desc(), du::Engine(), x.raw_data());
  } else if (p.src_is_plain && x.is_contiguous()) {
    src = du::Mem(x, p.src_plain);
  } else {
    src = du::ScratchMem(p.pd.src_desc(), du::kScratchFirstInput);
    std::string rk = base + "|src|";
    du::AppendKey(rk, x);
    du::Reorder(rk, du::Mem(x), src);
  }
  if (p.wei_is_plain && w.is_contiguous()) {
    wei = du::Mem(w, p.wei_plain);
  } else {
    wei = du::PackedWeights(w, WeightsDesc(w, group), p.pd.weights_desc(),
                            WeightsReorderKey(key, p.layout, w));
  }
  const bool y_blocked = p.blocked & kBlockedY;
  dst = y_blocked        ? memory(p.pd.dst_desc(), du::Engine(), y.raw_data())
        : p.dst_is_plain ? du::Mem(y, p.dst_plain)
                         : du::ScratchMem(p.pd.dst_desc(), du::kScratchOutput);
  if (p.sum) {
    std::string rk = base + "|z|";
    du::AppendKey(rk, z);
    du::Reorder(
        rk,
        p.blocked & kBlockedZ ? memory(p.pd.dst_desc(), du::Engine(), z.raw_data()) : du::Mem(z),
        dst);
  }
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
  if (b.defined()) args[DNNL_ARG_BIAS] = du::Mem(b);
  du::Execute(p.prim, args);
  if (!p.dst_is_plain && !y_blocked) du::Reorder(base + "|dst", dst, du::Mem(y, p.dst_plain));
}

// The index of the fastest of n candidates, run(i) running candidate i on
// the call's own tensors: a warm-up round (JIT code, first touch), then at
// least 3 timed rounds, more (up to 10) while the whole timing stays under
// 50 ms, interleaved, keeping each one's minimum.
template <class Run>
size_t Fastest(size_t n, Run&& run) {
  std::vector<double> best(n, std::numeric_limits<double>::infinity());
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r <= 3 || (r <= 10 && std::chrono::steady_clock::now() - start <
                                            std::chrono::milliseconds(50));
       ++r) {
    for (size_t i = 0; i < n; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      run(i);
      const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
      if (r > 0) best[i] = std::min(best[i], took.count());
    }
  }
  return std::min_element(best.begin(), best.end()) - best.begin();
}

// NOTE: which layout is fastest depends on the shape, so ConvCandidates builds
// up to three candidates, which RunEntry times on the key's calls (ConvTrial):
//  - "plain": src/dst in plain NCHW, for a float32 pointwise (1x1, unpadded,
//    ungrouped) convolution: one GEMM per image without any reorder, the
//    fastest for some of MobileNet-V2's and ShuffleNet-V2's 1x1 layers.
//    (oneDNN's plain bf16/f16 1x1 convolution is its slow reference
//    implementation, so those dtypes skip it.) Not with a Swish or
//    HardSwish activation, which the GEMM applies in a pass of its own:
//    YOLO's 128 -> 64 1x1 at 40x40 took 0.39 ms with Swish against 0.06
//    without and 0.14 for the jit kernel with both reorders, PP-LCNet's
//    512 -> 512 at 6x2x6 0.21 ms with HardSwish against 0.08. (Timing it
//    anyway cost a fresh process 22 ms: its first call generates oneDNN's
//    GEMM kernels.)
//  - "any": format_tag::any everywhere; oneDNN's own pick, for ResNet shapes
//    brgconv on nhwc (plain NCHW would make it fall back to a slow GEMM).
//  - "c16": src/dst forced to channel-blocked nC[d][h]w16c (both channel
//    counts multiples of 16; 8c on a CPU without AVX-512), weights any: the
//    jit:avx512_core (jit:avx2) kernel torch uses. For x 16x512x7x7, W 512x512x3x3, pads 1
//    brgconv/nhwc took 23.4 ms and jit/nChw16c 15.6 ms; at batch 16 the 3x3 layers with small
//    spatial size were 3-23% slower than torch with "any" alone.
//  - DirectConv (kDirectLayout), added by RunEntry for a held-layout
//    convolution whose class has no pick yet.
// Each candidate is timed as a whole call (src/weights reorders, the
// convolution, the dst reorder) on the convolution's own calls, in turn
// (ConvTrial): each call runs one candidate, so a first run pays for making
// the candidates but not for 4-11 timed rounds of each (the DB text
// detector's fresh-process first run: 41-45 -> 24-28 ms). The fastest is
// kept for the key.
// The pick is also kept for the key's shape class (`family`: the same
// convolution with the batch and spatial sizes rounded down to powers of
// two): a model called on inputs of ever new sizes (text lines of any
// width) times its convolutions once per class, and a new size of a known
// class builds the class's pick alone. The class leaves out the thread
// count: a busy machine switches ops to one thread (parallel.h), and
// timing every class again then would be slow and noisy. The picks are
// kept across processes (cpu::TuningFile::Layouts()): a model's first run
// in a new process times only classes no earlier process timed. A pick
// that is not one of the candidates built here is timed again.
// Candidates that oneDNN rejects, duplicates, and reference implementations
// (when another exists) are dropped first. The pick can differ between
// processes on a noisy machine; every candidate computes the same
// convolution, differing only in summation order.
std::vector<ConvPrim> ConvCandidates(const std::string& key, const std::string& family,
                                     const Tensor& x, const Tensor& w, const Tensor& b,
                                     const Tensor& z, const Tensor& y, const ops::Window& win,
                                     const ConvAttrs& a, const std::string& leading = "") {
  cpu::TuningFile& picks = cpu::TuningFile::Layouts();
  const std::string known = family.empty() ? "" : picks.Lookup(family).value_or(leading);
  const int64_t group = a.group;
  const memory::data_type dt = du::ToDnnl(x.dtype());
  const memory::desc src_plain = du::PlainDesc(x.shape(), x.dtype());
  const memory::desc dst_plain = du::PlainDesc(y.shape(), y.dtype());
  const memory::desc wei_plain = WeightsDesc(w.Contiguous(), group);
  memory::dims strides(win.stride.begin(), win.stride.end()), dilates, pad_l, pad_r;
  for (int64_t i = 0; i < win.nd; ++i) {
    dilates.push_back(win.dilation[i] - 1);  // oneDNN counts the gaps
    pad_l.push_back(win.pad_begin[i]);
    pad_r.push_back(win.pad_end[i]);
  }
  auto all_are = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
  };
  const bool try_plain = dt == memory::data_type::f32 && group == 1 && all_are(win.kernel, 1) &&
                         all_are(win.pad_begin, 0) && all_are(win.pad_end, 0) &&
                         a.activation != "Swish" && a.activation != "HardSwish";
  const bool blocked = x.dim(1) % du::ChannelBlock() == 0 && y.dim(1) % du::ChannelBlock() == 0;

  dnnl::post_ops post;
  if (z.defined()) post.append_sum(1.f);
  if (a.activation == "Relu" || a.activation == "LeakyRelu")
    post.append_eltwise(dnnl::algorithm::eltwise_relu, a.activation == "Relu" ? 0.f : a.alpha, 0.f);
  if (a.activation == "Clip") post.append_eltwise(dnnl::algorithm::eltwise_clip, a.alpha, a.beta);
  if (a.activation == "Swish") post.append_eltwise(dnnl::algorithm::eltwise_swish, 1.f, 0.f);
  if (a.activation == "HardSwish")
    post.append_eltwise(dnnl::algorithm::eltwise_hardswish, 1.f / 6, 0.5f);
  dnnl::primitive_attr pattr = du::UserScratchpad();
  pattr.set_post_ops(post);

  std::vector<ConvPrim> cands;
  auto add = [&](const std::string& layout, const memory::desc& src, const memory::desc& dst) {
    if (!known.empty() && layout != known) return;
    const memory::desc wei_any(wei_plain.get_dims(), dt, memory::format_tag::any);
    const auto prop = dnnl::prop_kind::forward_inference;
    const auto alg = dnnl::algorithm::convolution_direct;
    try {
      auto pd =
          b.defined()
              ? dnnl::convolution_forward::primitive_desc(du::Engine(), prop, alg, src, wei_any,
                                                          du::PlainDesc(b.shape(), b.dtype()), dst,
                                                          strides, dilates, pad_l, pad_r, pattr)
              : dnnl::convolution_forward::primitive_desc(du::Engine(), prop, alg, src, wei_any,
                                                          dst, strides, dilates, pad_l, pad_r,
                                                          pattr);
      for (const ConvPrim& c : cands)
        if (c.pd.src_desc() == pd.src_desc() && c.pd.weights_desc() == pd.weights_desc() &&
            c.pd.dst_desc() == pd.dst_desc() &&
            std::string_view(c.pd.impl_info_str()) == pd.impl_info_str())
          return;
      cands.push_back(ConvPrim{pd, dnnl::convolution_forward(pd), src_plain, wei_plain, dst_plain,
                               pd.src_desc() == src_plain, pd.weights_desc() == wei_plain,
                               pd.dst_desc() == dst_plain, layout, z.defined(), a.blocked});
    } catch (const dnnl::error&) {
      // No implementation for this layout or dtype (e.g. f16 without
      // hardware support): the other candidates, else the loop kernel.
    }
  };
  auto with_tag = [&](const memory::desc& d, memory::format_tag tag) {
    return memory::desc(d.get_dims(), dt, tag);
  };
  auto is_ref = [](const ConvPrim& c) {
    return std::string_view(c.pd.impl_info_str()).starts_with("ref");
  };
  if (a.blocked) {
    // The planner fixed the blocked sides to nChw<B>c; a free side is timed
    // blocked too (reordered from or to NCHW, padded when its channels are
    // not a multiple of B) and as oneDNN's pick (one fixed side and one
    // `any` can leave oneDNN with its reference kernel only).
    const auto side = [&](const memory::desc& d, bool fixed, bool c16) {
      return with_tag(d, fixed ? du::HeldTag(d.get_dims()[1])
                         : c16 ? du::BlockedTag(2)
                               : memory::format_tag::any);
    };
    add("blocked", side(src_plain, a.blocked & kBlockedX, true),
        side(dst_plain, a.blocked & kBlockedY, true));
    add("blocked-any", side(src_plain, a.blocked & kBlockedX, false),
        side(dst_plain, a.blocked & kBlockedY, false));
  } else {
    if (try_plain) add("plain", src_plain, dst_plain);
    add("any", with_tag(src_plain, memory::format_tag::any),
        with_tag(dst_plain, memory::format_tag::any));
    if (blocked) {
      const memory::format_tag tag = du::BlockedTag(win.nd);
      add("c16", with_tag(src_plain, tag), with_tag(dst_plain, tag));
    }
  }
  // The class's pick has no good implementation at this size: time them all.
  if (!known.empty() && (cands.empty() || is_ref(cands[0])))
    return ConvCandidates(key, "", x, w, b, z, y, win, a);
  if (!std::all_of(cands.begin(), cands.end(), is_ref)) std::erase_if(cands, is_ref);
  return cands;
}

// `key` with x's batch and spatial sizes rounded down to powers of two: the
// convolutions whose layout pick is shared (ConvCandidates).
std::string ShapeClass(const std::string& key, const Tensor& x) {
  Shape rounded = x.shape();
  for (size_t i = 0; i < rounded.size(); ++i)
    if (i != 1 && rounded[i] > 0) rounded[i] = int64_t{1} << (63 - __builtin_clzll(rounded[i]));
  std::string family = key;
  const std::string exact = ToString(x.shape());
  family.replace(family.find(exact), exact.size(), ToString(rounded));
  return family;
}

void AppendInts(std::string& key, const std::vector<int64_t>& v) {
  key += ops::IntsString(v);
  key += ';';
}

// A float32 convolution of at most kSmallConvMacs multiply-adds, ungrouped
// and in NCHW (a streaming audio model's 1-D front end: 1 -> 32 channels over
// 512 samples, then 32 -> 32), where a oneDNN call with its reorders costs
// more than the work (about 4 us each): per image, the input windows as rows
// (im2col, [positions, C * kernel]) times the weights packed for
// cpu::PanelMatMul, then the result transposed into Y and the epilogue.
constexpr int64_t kSmallConvMacs = int64_t{1} << 16;

bool SmallConv(KernelCtx& k, const ConvAttrs& a, const ops::Window& win) {
  const Tensor& x = k.input(0);
  const Tensor& w = k.input(1);
  const Tensor& y = k.output(0);
  const int64_t m = w.dim(0), ck = w.numel() / m, positions = y.numel() / (y.dim(0) * m);
  if (x.dtype() != DType::kFloat32 || a.group != 1 || a.blocked ||
      y.dim(0) * positions * m * ck > kSmallConvMacs)
    return false;
  const ops::Geo3 g = ops::To3(win);
  const Tensor xc = x.Contiguous();
  const Tensor b = k.has_input(2) ? k.input(2).Contiguous() : Tensor();
  const float* panels = cpu::PanelWeights(w.Contiguous().Reshape({m, ck}));
  std::vector<float> rows(positions * ck), out(positions * m);
  const int64_t c_in = x.dim(1), plane = g.in[0] * g.in[1] * g.in[2];
  for (int64_t n = 0; n < y.dim(0); ++n) {
    const float* xn = xc.data<float>() + n * c_in * plane;
    float* r = rows.data();
    for (int64_t o0 = 0; o0 < g.out[0]; ++o0)
      for (int64_t o1 = 0; o1 < g.out[1]; ++o1)
        for (int64_t o2 = 0; o2 < g.out[2]; ++o2)
          for (int64_t c = 0; c < c_in; ++c)
            for (int64_t i0 = 0; i0 < g.k[0]; ++i0)
              for (int64_t i1 = 0; i1 < g.k[1]; ++i1) {
                const int64_t p0 = o0 * g.s[0] - g.pb[0] + i0 * g.d[0],
                              p1 = o1 * g.s[1] - g.pb[1] + i1 * g.d[1], p2 = o2 * g.s[2] - g.pb[2];
                if (p0 < 0 || p0 >= g.in[0] || p1 < 0 || p1 >= g.in[1]) {
                  r = std::fill_n(r, g.k[2], 0.f);
                  continue;
                }
                const float* line = xn + c * plane + (p0 * g.in[1] + p1) * g.in[2];
                for (int64_t i2 = 0; i2 < g.k[2]; ++i2) {
                  const int64_t p = p2 + i2 * g.d[2];
                  *r++ = p >= 0 && p < g.in[2] ? line[p] : 0.f;
                }
              }
    cpu::PanelMatMul(rows.data(), panels, b.defined() ? b.data<float>() : nullptr, out.data(),
                     positions, ck, m);
    float* yn = static_cast<float*>(y.raw_data()) + n * m * positions;
    for (int64_t p = 0; p < positions; ++p)
      for (int64_t j = 0; j < m; ++j) yn[j * positions + p] = out[p * m + j];
  }
  if (HasEpilogue(k, a)) Epilogue(y, k.has_input(3) ? k.input(3) : Tensor(), a);
  return true;
}

// A held-layout convolution's primitive, made once the convolution has run
// RentMs() in cpu::DirectConv: a shape a model meets once or twice (a text
// line's width) costs its run there instead of a oneDNN kernel generated
// for it (about 0.2 ms a 3x3 layer, and the layout timing of a new shape
// class), and a shape run again and again gets the faster primitive after
// a few calls. The rent is kept per key for the process, so a shape seen
// earlier keeps its count when a new plan meets it again.
// SINGA_CONV_RENT_MS sets it (0: the primitive at once), read for each new
// key.
double RentMs() {
  const char* v = std::getenv("SINGA_CONV_RENT_MS");
  return v && *v ? std::max(0.0, std::atof(v)) : 1.0;
}

// The layout pick that names cpu::DirectConv: a held-layout convolution
// times it beside oneDNN's candidates. On an AVX2 host it was the faster
// for every 3x3 layer of the CRNN (0.53 ms against 0.69 for 128 -> 128 at
// 8x32, the jit:avx2 kernel), and the slower for YOLO's 1x1 layers and its
// 3 -> 16 first layer.
constexpr const char* kDirectLayout = "direct";

std::string LayoutName(const std::shared_ptr<const ConvPrim>& cand) {
  return cand ? cand->layout : kDirectLayout;
}

// Layout candidates timed on a convolution's own calls, one after the
// other: a warm-up call each (JIT code, first touch, W packed into its
// layout: timed calls find it packed, as the steady state does; timing that
// reorder on every call made YOLO's 1x1 layers pick oneDNN's gemm
// convolution, whose Swish post-op runs 6x slower than the jit kernel's),
// then kRounds timed calls each, keeping each one's fastest.
struct ConvTrial {
  static constexpr int kRounds = 3;
  // A null candidate is cpu::DirectConv (kDirectLayout).
  std::vector<std::shared_ptr<const ConvPrim>> cands;
  std::vector<double> best;
  int64_t calls = 0;
  std::string family;
  bool done() const { return calls >= static_cast<int64_t>(cands.size()) * (kRounds + 1); }
  size_t fastest() const { return std::min_element(best.begin(), best.end()) - best.begin(); }
};

// The shape classes with a trial under way, each with the layout leading it
// (its fastest so far, else its first candidate): a new shape of the class
// makes that candidate alone. A stream of new sizes, each run a few times,
// would otherwise keep a trial of every candidate per size, none settled
// (the text-direction classifier's stream grew by 28 MiB).
class Leaders {
 public:
  static std::optional<std::string> Of(const std::string& family) {
    std::lock_guard<std::mutex> lock(mu());
    auto it = map().find(family);
    return it == map().end() ? std::nullopt : std::optional(it->second);
  }
  static void Set(const std::string& family, const std::string& layout) {
    std::lock_guard<std::mutex> lock(mu());
    map()[family] = layout;
  }
  static void Drop(const std::string& family) {
    std::lock_guard<std::mutex> lock(mu());
    map().erase(family);
  }

 private:
  static std::mutex& mu() {
    static std::mutex m;
    return m;
  }
  static std::unordered_map<std::string, std::string>& map() {
    static auto* m = new std::unordered_map<std::string, std::string>();
    return *m;
  }
};

struct ConvEntry {
  std::unique_ptr<std::mutex> mu = std::make_unique<std::mutex>();
  double rent_ms = 0, rented_ms = 0;
  bool made = false;
  bool direct = false;                   // cpu::DirectConv computes it
  std::shared_ptr<const ConvPrim> prim;  // none: DirectConv, the loops, or the trial's
  std::unique_ptr<ConvTrial> trial;
  // The trial's pick becomes the convolution's (and the shape class's); the
  // other candidates' copies of W go.
  void Settle(const Tensor& w) {
    const size_t pick = trial->fastest();
    prim = trial->cands[pick];
    direct = !prim;
    for (const auto& c : trial->cands)
      if (!c && !direct)
        cpu::ForgetDirectConvWeights(w);
      else if (c && (direct || c->pd.weights_desc() != prim->pd.weights_desc()))
        du::ForgetPackedWeights(w, c->pd.weights_desc());
    cpu::TuningFile::Layouts().Remember(trial->family, direct ? kDirectLayout : prim->layout);
    Leaders::Drop(trial->family);
    trial.reset();
  }
};

// Whether cpu::DirectConv computes this convolution: float32, 2-D,
// ungrouped, or depthwise between held layouts of whole vectors of
// channels; Z (if any) held as Y is.
bool DirectConvFits(const KernelCtx& k, const ConvAttrs& a, const ops::Window& win) {
  const int64_t c = k.input(0).dim(1);
  const bool depthwise = a.group == c && k.input(1).dim(0) == c && (a.blocked & kBlockedX) &&
                         (a.blocked & kBlockedY) && du::HeldBlock(c) % cpu::DirectConvLanes() == 0;
  return k.input(0).dtype() == DType::kFloat32 && win.nd == 2 && (a.group == 1 || depthwise) &&
         (!k.has_input(3) || !(a.blocked & kBlockedZ) == !(a.blocked & kBlockedY));
}

// Where DirectConv finds the elements of t [N, C, H, W] (contiguous), held
// (nChw<B>c or channels-last) or NCHW.
cpu::ConvLayout LayoutOf(const Tensor& t, bool held) {
  const int64_t c = t.dim(1), h = t.dim(2), w = t.dim(3), block = du::HeldBlock(c);
  if (held) return {block, h * w * block, 1, w * block, block, c * h * w};
  return {1, h * w, 0, w, 1, c * h * w};
}

void RunDirectConv(KernelCtx& k, const ConvAttrs& a, const ops::Window& win) {
  const Tensor& y = k.output(0);
  const Tensor x = k.input(0).Contiguous();
  const Tensor b = k.has_input(2) ? k.input(2).Contiguous() : Tensor();
  const Tensor z = k.has_input(3) ? k.input(3).Contiguous() : Tensor();
  cpu::DirectConvArgs args{x.data<float>(),
                           LayoutOf(x, a.blocked & kBlockedX),
                           x.dim(0),
                           x.dim(1),
                           x.dim(2),
                           x.dim(3),
                           cpu::DirectConvWeights(k.input(1)),
                           b.defined() ? b.data<float>() : nullptr,
                           static_cast<float*>(y.raw_data()),
                           z.defined() ? z.data<float>() : nullptr,
                           LayoutOf(y, a.blocked & kBlockedY),
                           y.dim(1),
                           y.dim(2),
                           y.dim(3),
                           win.kernel[0],
                           win.kernel[1],
                           win.stride[0],
                           win.stride[1],
                           win.dilation[0],
                           win.dilation[1],
                           win.pad_begin[0],
                           win.pad_begin[1],
                           a.group > 1,
                           ops::ParseFusedActivation(a.activation),
                           a.alpha,
                           a.beta};
  cpu::DirectConv(args);
  NoteKernel("singa:direct_conv");
}

// What a recorded convolution keeps between replays (KernelCtx::state): its
// window, whether it is a SmallConv, else its cache key and entry for the
// thread count it ran with.
struct ConvState {
  int threads;
  ops::Window win;
  bool small;
  std::string key;
  std::shared_ptr<ConvEntry> entry;
};

// The convolution of `entry`: DirectConv while it rents, then the
// candidates (made on the call that pays the rent off) timed in turn, then
// the trial's pick: a primitive or DirectConv; else the loops.
void RunEntry(KernelCtx& k, const ConvAttrs& a, const ops::Window& win, const std::string& key,
              ConvEntry& entry) {
  const Tensor& x = k.input(0);
  const Tensor& w = k.input(1);
  const Tensor b = k.has_input(2) ? k.input(2).Contiguous() : Tensor();
  const Tensor z = k.has_input(3) ? k.input(3) : Tensor();
  bool rent = false, direct = false;
  std::shared_ptr<const ConvPrim> prim;
  int64_t trial_call = -1;
  {
    std::lock_guard<std::mutex> lock(*entry.mu);
    const bool direct_fits = a.blocked && DirectConvFits(k, a, win);
    rent = !entry.made && entry.rented_ms < entry.rent_ms && direct_fits;
    if (!rent && !entry.made) {
      entry.made = true;
      const std::string family = ShapeClass(key, x);
      const std::string leading = Leaders::Of(family).value_or("");
      const std::string known = cpu::TuningFile::Layouts().Lookup(family).value_or(leading);
      if (direct_fits && known == kDirectLayout) {
        entry.direct = true;
      } else {
        std::vector<ConvPrim> cands =
            ConvCandidates(key, family, x, w, b, z, k.output(0), win, a, leading);
        std::vector<std::shared_ptr<const ConvPrim>> timed;
        for (ConvPrim& c : cands) timed.push_back(std::make_shared<const ConvPrim>(std::move(c)));
        // A class with no pick yet times DirectConv too; one with a pick
        // builds it alone.
        if (direct_fits && known.empty()) timed.push_back(nullptr);
        if (timed.size() == 1) {
          entry.prim = timed[0];
          entry.direct = !timed[0];
        }
        if (timed.size() > 1) {
          Leaders::Set(family, LayoutName(timed[0]));
          auto t = std::make_unique<ConvTrial>();
          t->cands = std::move(timed);
          t->best.assign(t->cands.size(), std::numeric_limits<double>::infinity());
          t->family = family;
          entry.trial = std::move(t);
        }
      }
    }
    if (!rent && entry.trial) {
      ConvTrial& t = *entry.trial;
      trial_call = t.calls++;
      prim = t.cands[trial_call % t.cands.size()];
      direct = !prim;
    } else {
      prim = entry.prim;
      direct = entry.direct;
    }
  }
  if (rent) {
    const auto t0 = std::chrono::steady_clock::now();
    RunDirectConv(k, a, win);
    const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - t0;
    std::lock_guard<std::mutex> lock(*entry.mu);
    entry.rented_ms += took.count();
    return;
  }
  const auto run = [&] {
    if (direct) return RunDirectConv(k, a, win);
    if (!prim) return ConvReference(k, a);
    RunConv(*prim, key, x, w, b, z, k.output(0), a.group);
  };
  if (trial_call < 0) return run();
  const auto t0 = std::chrono::steady_clock::now();
  run();
  const std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
  std::lock_guard<std::mutex> lock(*entry.mu);
  if (!entry.trial) return;  // settled meanwhile
  ConvTrial& t = *entry.trial;
  const size_t i = trial_call % t.cands.size();
  if (trial_call >= static_cast<int64_t>(t.cands.size())) {
    t.best[i] = std::min(t.best[i], took.count());
    Leaders::Set(t.family, LayoutName(t.cands[t.fastest()]));
  }
  if (t.done() && std::all_of(t.best.begin(), t.best.end(), [](double v) { return v < 1e300; }))
    entry.Settle(w);
}

void ConvForward(KernelCtx& k, const ConvAttrs& a) {
  const Tensor& x = k.input(0);
  const Tensor& w = k.input(1);
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  const DType dt = x.dtype();
  if (dt == DType::kFloat64 || x.empty() || w.empty()) return ConvReference(k, a);
  const int threads = ActiveThreads();
  if (k.state && *k.state) {
    const auto& s = *static_cast<const ConvState*>(k.state->get());
    if (s.small && SmallConv(k, a, s.win)) return;
    if (!s.small && s.threads == threads) return RunEntry(k, a, s.win, s.key, *s.entry);
  }
  ops::Window win = KernelWindow(k, a);
  if (SmallConv(k, a, win)) {
    if (k.state) *k.state = std::make_shared<ConvState>(ConvState{threads, win, true, "", nullptr});
    return;
  }

  std::string key = "Conv;";
  key += Name(dt);
  key += ToString(x.shape()) + ToString(w.shape()) + (k.has_input(2) ? "b;" : ";");
  AppendInts(key, win.stride);
  AppendInts(key, win.dilation);
  AppendInts(key, win.pad_begin);
  AppendInts(key, win.pad_end);
  key += std::to_string(a.group);
  if (a.blocked) key += ";blocked" + std::to_string(a.blocked);
  if (HasEpilogue(k, a)) {
    key += (k.has_input(3) ? ";z;" : ";;") + a.activation + ";" + std::to_string(a.alpha) + ";" +
           std::to_string(a.beta);
  }
  // Only held-layout convolutions rent: the others make their primitive at
  // once. A depthwise one rents a quarter as long: its primitive is cheaper
  // to make (0.08 ms against 0.2) and DirectConv's loops slower against it
  // (1.3-2x, where an ungrouped 3x3 layer is at 1.0-1.1x).
  const auto entry = du::Cached<ConvEntry>(key, [&] {
    ConvEntry e;
    e.rent_ms = !a.blocked ? 0 : a.group > 1 ? RentMs() / 4 : RentMs();
    return e;
  });
  if (k.state) *k.state = std::make_shared<ConvState>(ConvState{threads, win, false, key, entry});
  RunEntry(k, a, win, key, *entry);
}

// ---- backward ---------------------------------------------------------------
// The internal ops take the forward's geometry resolved: explicit pads
// (auto_pad applied), strides, dilations, group, and the shape of the tensor
// whose gradient they compute (X for ConvGradData, W for ConvGradWeight).

struct ConvGradAttrs {
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> pads;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
};

// The window of the forward convolution of x with w that gave dy; checks that
// the three shapes and the attributes fit together.
ops::Window GradWindow(const InferCtx& c, const Shape& x, const Shape& w, const Shape& dy,
                       const ConvGradAttrs& a) {
  const size_t rank = x.size();
  SINGA_CHECK(rank >= 3 && rank <= 5 && w.size() == rank && dy.size() == rank, ShapeError,
              c.where() << ": dY, X and W must have one rank with 1 to 3 spatial dimensions "
                        << "(X " << ToString(x) << ", W " << ToString(w) << ", "
                        << c.inputs_string() << ")");
  SINGA_CHECK(a.group >= 1 && w[1] * a.group == x[1] && w[0] % a.group == 0 && dy[0] == x[0] &&
                  dy[1] == w[0],
              ShapeError,
              c.where() << ": X " << ToString(x) << ", W " << ToString(w) << " and dY "
                        << ToString(dy) << " do not fit a convolution with group " << a.group);
  ops::Window win = ops::ResolveWindow(c, Shape(x.begin() + 2, x.end()), KernelShape(w), a.strides,
                                       a.dilations, a.pads, "NOTSET", false);
  SINGA_CHECK(Shape(win.out) == Shape(dy.begin() + 2, dy.end()), ShapeError,
              c.where() << ": dY " << ToString(dy) << " is not the output shape of X "
                        << ToString(x) << " and W " << ToString(w) << " (strides "
                        << ops::IntsString(a.strides) << ", pads " << ops::IntsString(a.pads)
                        << ")");
  return win;
}

SpecList ConvGradDataInfer(const InferCtx& c, const ConvGradAttrs& a) {
  GradWindow(c, Shape(a.shape), c.shape(1), c.shape(0), a);
  return {{c.dtype(0), Shape(a.shape)}};
}

SpecList ConvGradWeightInfer(const InferCtx& c, const ConvGradAttrs& a) {
  GradWindow(c, c.shape(1), Shape(a.shape), c.shape(0), a);
  return {{c.dtype(0), Shape(a.shape)}, {c.dtype(0), {a.shape[0]}}};
}

// The window in a kernel (the shapes were checked by shape inference).
ops::Window KernelGradWindow(const char* op, const KernelCtx& k, const Shape& x, const Shape& w,
                             const ConvGradAttrs& a) {
  InferCtx c(OpRegistry::Get(op, kLatestOpset, "ai.singa"), k.inputs, k.num_outputs(), "");
  return GradWindow(c, x, w, k.input(0).shape(), a);
}

// dX[n, c] = sum over the group's m and taps of W[m, c, tap] * dY[n, m, o].
template <class T>
void ConvDataLoop(const Tensor& dy, const Tensor& w, const Tensor& dx, const ops::Window& win,
                  int64_t group) {
  using A = Acc<T>;
  const int64_t c_all = dx.dim(1), cg = w.dim(1), mg = w.dim(0) / group;
  const ops::Geo3 g = ops::To3(win);
  const auto ys = ops::Strides5(dy), ws = ops::Strides5(w);
  const int64_t plane = g.in[0] * g.in[1] * g.in[2];
  const T* yp = static_cast<const T*>(dy.raw_data());
  const T* wp = static_cast<const T*>(w.raw_data());
  T* xp = static_cast<T*>(dx.raw_data());
  ParallelFor(0, dx.dim(0) * c_all, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(plane);
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t n = i / c_all, ci = i % c_all, grp = ci / cg, c = ci % cg;
      std::fill(acc.begin(), acc.end(), A(0));
      for (int64_t m = grp * mg; m < (grp + 1) * mg; ++m) {
        const T* yc = yp + n * ys[0] + m * ys[1];
        const T* wc = wp + m * ws[0] + c * ws[1];
        for (int64_t kd = 0; kd < g.k[0]; ++kd) {
          const int64_t offd = kd * g.d[0] - g.pb[0];
          auto [d0, d1] = ValidRange(offd, g.s[0], g.in[0], g.out[0]);
          for (int64_t kh = 0; kh < g.k[1]; ++kh) {
            const int64_t offh = kh * g.d[1] - g.pb[1];
            auto [h0, h1] = ValidRange(offh, g.s[1], g.in[1], g.out[1]);
            for (int64_t kw = 0; kw < g.k[2]; ++kw) {
              const int64_t offw = kw * g.d[2] - g.pb[2];
              auto [w0, w1] = ValidRange(offw, g.s[2], g.in[2], g.out[2]);
              const A wv = static_cast<A>(wc[kd * ws[2] + kh * ws[3] + kw * ws[4]]);
              for (int64_t od = d0; od < d1; ++od) {
                for (int64_t oh = h0; oh < h1; ++oh) {
                  A* arow = acc.data() +
                            ((od * g.s[0] + offd) * g.in[1] + (oh * g.s[1] + offh)) * g.in[2];
                  const T* yrow = yc + od * ys[2] + oh * ys[3];
                  for (int64_t ow = w0; ow < w1; ++ow)
                    arow[ow * g.s[2] + offw] += wv * static_cast<A>(yrow[ow * ys[4]]);
                }
              }
            }
          }
        }
      }
      T* xo = xp + i * plane;
      for (int64_t j = 0; j < plane; ++j) xo[j] = static_cast<T>(acc[j]);
    }
  });
}

// dW[m, c, tap] = sum over n and o of dY[n, m, o] * X[n, group's c, o * s + tap].
template <class T>
void ConvWeightLoop(const Tensor& dy, const Tensor& x, const Tensor& dw, const ops::Window& win,
                    int64_t group) {
  using A = Acc<T>;
  const int64_t n_batch = x.dim(0), m_all = dw.dim(0), cg = dw.dim(1), mg = m_all / group;
  const ops::Geo3 g = ops::To3(win);
  const auto ys = ops::Strides5(dy), xs = ops::Strides5(x);
  const int64_t taps = g.k[0] * g.k[1] * g.k[2];
  const T* yp = static_cast<const T*>(dy.raw_data());
  const T* xp = static_cast<const T*>(x.raw_data());
  T* wp = static_cast<T*>(dw.raw_data());
  ParallelFor(0, m_all * cg, 1, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t m = i / cg, c = i % cg, ci = (m / mg) * cg + c;
      for (int64_t kd = 0; kd < g.k[0]; ++kd) {
        const int64_t offd = kd * g.d[0] - g.pb[0];
        auto [d0, d1] = ValidRange(offd, g.s[0], g.in[0], g.out[0]);
        for (int64_t kh = 0; kh < g.k[1]; ++kh) {
          const int64_t offh = kh * g.d[1] - g.pb[1];
          auto [h0, h1] = ValidRange(offh, g.s[1], g.in[1], g.out[1]);
          for (int64_t kw = 0; kw < g.k[2]; ++kw) {
            const int64_t offw = kw * g.d[2] - g.pb[2];
            auto [w0, w1] = ValidRange(offw, g.s[2], g.in[2], g.out[2]);
            A sum = 0;
            for (int64_t n = 0; n < n_batch; ++n) {
              const T* yc = yp + n * ys[0] + m * ys[1];
              const T* xc = xp + n * xs[0] + ci * xs[1];
              for (int64_t od = d0; od < d1; ++od) {
                for (int64_t oh = h0; oh < h1; ++oh) {
                  const T* xrow = xc + (od * g.s[0] + offd) * xs[2] + (oh * g.s[1] + offh) * xs[3];
                  const T* yrow = yc + od * ys[2] + oh * ys[3];
                  for (int64_t ow = w0; ow < w1; ++ow)
                    sum += static_cast<A>(yrow[ow * ys[4]]) *
                           static_cast<A>(xrow[(ow * g.s[2] + offw) * xs[4]]);
                }
              }
            }
            wp[i * taps + (kd * g.k[1] + kh) * g.k[2] + kw] = static_cast<T>(sum);
          }
        }
      }
    }
  });
}

template <class T>
void ConvBiasLoop(const Tensor& dy, const Tensor& db) {
  using A = Acc<T>;
  const auto ys = ops::Strides5(dy);
  int64_t sp[3] = {1, 1, 1};
  for (int64_t d = 2; d < dy.ndim(); ++d) sp[5 - dy.ndim() + d - 2] = dy.dim(d);
  const T* yp = static_cast<const T*>(dy.raw_data());
  T* bp = static_cast<T*>(db.raw_data());
  ParallelFor(0, db.dim(0), 1, [&](int64_t lo, int64_t hi) {
    for (int64_t m = lo; m < hi; ++m) {
      A sum = 0;
      for (int64_t n = 0; n < dy.dim(0); ++n)
        for (int64_t od = 0; od < sp[0]; ++od)
          for (int64_t oh = 0; oh < sp[1]; ++oh) {
            const T* yrow = yp + n * ys[0] + m * ys[1] + od * ys[2] + oh * ys[3];
            for (int64_t ow = 0; ow < sp[2]; ++ow) sum += static_cast<A>(yrow[ow * ys[4]]);
          }
      bp[m] = static_cast<T>(sum);
    }
  });
}

void ConvGradDataReference(KernelCtx& k, const ConvGradAttrs& a) {
  const Tensor& dx = k.output(0);
  if (dx.empty()) return;
  ops::Window win = KernelGradWindow("ConvGradData", k, dx.shape(), k.input(1).shape(), a);
  VisitFloat(dx.dtype(),
             [&]<class T>(Tag<T>) { ConvDataLoop<T>(k.input(0), k.input(1), dx, win, a.group); });
}

void ConvGradWeightReference(KernelCtx& k, const ConvGradAttrs& a) {
  const Tensor& dw = k.output(0);
  const Tensor* db = k.num_outputs() > 1 ? &k.outputs[1] : nullptr;
  ops::Window win = KernelGradWindow("ConvGradWeight", k, k.input(1).shape(), dw.shape(), a);
  VisitFloat(dw.dtype(), [&]<class T>(Tag<T>) {
    // A zero-sized batch or output gives empty sums: zeros.
    if (!dw.empty()) ConvWeightLoop<T>(k.input(0), k.input(1), dw, win, a.group);
    if (db && !db->empty()) ConvBiasLoop<T>(k.input(0), *db);
  });
}

// oneDNN's convolution geometry.
struct DnnlGeom {
  memory::dims strides, dilates, pad_l, pad_r;
};
DnnlGeom Geom(const ops::Window& win) {
  DnnlGeom g;
  for (int64_t i = 0; i < win.nd; ++i) {
    g.strides.push_back(win.stride[i]);
    g.dilates.push_back(win.dilation[i] - 1);  // oneDNN counts the gaps
    g.pad_l.push_back(win.pad_begin[i]);
    g.pad_r.push_back(win.pad_end[i]);
  }
  return g;
}

// The cache key of a backward primitive: op, dtype, shapes, geometry.
std::string GradKey(const char* op, DType dt, const Shape& x, const Shape& w, const Shape& y,
                    const ops::Window& win, int64_t group, bool bias) {
  std::string key = op;
  key += ';';
  key += Name(dt);
  key += ToString(x) + ToString(w) + ToString(y) + (bias ? "b;" : ";");
  AppendInts(key, win.stride);
  AppendInts(key, win.dilation);
  AppendInts(key, win.pad_begin);
  AppendInts(key, win.pad_end);
  key += std::to_string(group);
  return key;
}

// The forward primitive descriptor oneDNN wants as a hint for backward ones.
dnnl::convolution_forward::primitive_desc HintPd(memory::data_type dt, const memory::desc& src,
                                                 const memory::dims& w, const memory::desc& dst,
                                                 const DnnlGeom& g, bool bias) {
  const memory::desc wei(w, dt, memory::format_tag::any);
  const auto prop = dnnl::prop_kind::forward_training;
  const auto alg = dnnl::algorithm::convolution_direct;
  if (bias)
    return dnnl::convolution_forward::primitive_desc(
        du::Engine(), prop, alg, src, wei,
        memory::desc({dst.get_dims()[1]}, dt, memory::format_tag::a), dst, g.strides, g.dilates,
        g.pad_l, g.pad_r);
  return dnnl::convolution_forward::primitive_desc(du::Engine(), prop, alg, src, wei, dst,
                                                   g.strides, g.dilates, g.pad_l, g.pad_r);
}

// The dims of W as oneDNN's grouped weights [g, M/g, C/g, k...] when group > 1.
memory::dims WeightDims(const Shape& w, int64_t group) {
  memory::dims d(w.begin(), w.end());
  if (group > 1) {
    d[0] /= group;
    d.insert(d.begin(), group);
  }
  return d;
}

// `t` (described by `have`) as a memory of layout `want`: t itself when the
// layouts agree, else a reorder (cached under `key`) into scratch `slot`.
memory InputAs(const std::string& key, const Tensor& t, const memory::desc& have,
               const memory::desc& want, du::ScratchSlot slot) {
  if (have == want) return memory(want, du::Engine(), t.raw_data());
  memory m = du::ScratchMem(want, slot);
  std::string rk = key;
  du::AppendKey(rk, t);
  du::Reorder(rk, memory(have, du::Engine(), t.raw_data()), m);
  return m;
}

// A memory of layout `want` to compute into, for output `t` (plain, described
// by `plain`): t itself when the layouts agree, else the output's scratch.
memory OutputAs(const Tensor& t, const memory::desc& plain, const memory::desc& want) {
  return plain == want ? memory(want, du::Engine(), t.raw_data())
                       : du::ScratchMem(want, du::kScratchOutput);
}

// Copies a scratch result into the plain output `t` (nothing when computed in place).
void Finish(const std::string& key, const memory& result, const Tensor& t,
            const memory::desc& plain) {
  if (result.get_data_handle() == t.raw_data()) return;
  du::Reorder(key, result, memory(plain, du::Engine(), t.raw_data()));
}

// t, or a dense copy when it is a broadcast view (a zero stride), which a
// oneDNN memory descriptor cannot express.
Tensor Dense(const Tensor& t) {
  for (int64_t d = 0; d < t.ndim(); ++d)
    if (t.strides()[d] == 0 && t.dim(d) > 1) return t.Contiguous();
  return t;
}

bool IsRef(const char* impl) { return std::string_view(impl).starts_with("ref"); }

// Layout candidates for the activations (X/dX and dY) of a backward
// primitive, as in the forward: "any" (oneDNN's pick: channel-blocked, with
// reorders from and to the plain tensors) and, for a float32 pointwise
// convolution, "plain" (oneDNN's GEMM kernel on NCHW, no reorders). When both
// exist the faster is kept per key (Fastest).
using Candidates = std::vector<std::pair<std::string, memory::format_tag>>;
Candidates BwdLayouts(memory::data_type dt, const ops::Window& win, int64_t group) {
  Candidates c = {{"any", memory::format_tag::any}};
  bool pointwise = dt == memory::data_type::f32 && group == 1;
  for (int64_t i = 0; i < win.nd; ++i)
    pointwise = pointwise && win.kernel[i] == 1 && win.pad_begin[i] == 0 && win.pad_end[i] == 0;
  static constexpr memory::format_tag kPlain[3] = {
      memory::format_tag::abc, memory::format_tag::abcd, memory::format_tag::abcde};
  if (pointwise) c.emplace_back("plain", kPlain[win.nd - 1]);
  return c;
}

struct ConvBwdData {
  dnnl::convolution_backward_data::primitive_desc pd;
  dnnl::convolution_backward_data prim;
  std::string layout;  // names the candidate in its reorders' cache keys
};

void RunBwdData(const ConvBwdData& p, const std::string& key, const Tensor& dy, const Tensor& w,
                const Tensor& dx, int64_t group) {
  const std::string base = key + "|" + p.layout;
  const memory::desc dx_plain = du::PlainDesc(dx.shape(), dx.dtype());
  memory ddst =
      InputAs(base + "|ddst|", dy, du::Desc(dy), p.pd.diff_dst_desc(), du::kScratchFirstInput);
  memory wei = InputAs(base + "|wei|", w, WeightsDesc(w, group), p.pd.weights_desc(),
                       du::kScratchSecondInput);
  memory dsrc = OutputAs(dx, dx_plain, p.pd.diff_src_desc());
  du::Execute(p.prim,
              {{DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DIFF_SRC, dsrc}});
  Finish(base + "|dsrc", dsrc, dx, dx_plain);
}

std::optional<ConvBwdData> MakeBwdData(const std::string& key, const Tensor& dy, const Tensor& w,
                                       const Tensor& dx, const ops::Window& win, int64_t group) {
  const memory::data_type dt = du::ToDnnl(dy.dtype());
  const DnnlGeom g = Geom(win);
  const memory::dims wd = WeightDims(w.shape(), group);
  std::vector<ConvBwdData> cands;
  for (const auto& [layout, tag] : BwdLayouts(dt, win, group)) {
    try {
      const memory::desc src(du::Dims(dx.shape()), dt, tag), dst(du::Dims(dy.shape()), dt, tag);
      auto hint = HintPd(dt, src, wd, dst, g, false);
      dnnl::convolution_backward_data::primitive_desc pd(
          du::Engine(), dnnl::algorithm::convolution_direct, src,
          memory::desc(wd, dt, memory::format_tag::any), dst, g.strides, g.dilates, g.pad_l,
          g.pad_r, hint);
      // oneDNN's reference implementation is no faster than our loop.
      if (!IsRef(pd.impl_info_str()))
        cands.push_back(ConvBwdData{pd, dnnl::convolution_backward_data(pd), layout});
    } catch (const dnnl::error&) {
      // No implementation for this layout or dtype: the other candidate, else the loop.
    }
  }
  if (cands.empty()) return std::nullopt;
  const size_t pick = cands.size() == 1 ? 0 : Fastest(cands.size(), [&](size_t i) {
    RunBwdData(cands[i], key, dy, w, dx, group);
  });
  return std::move(cands[pick]);
}

void ConvGradDataForward(KernelCtx& k, const ConvGradAttrs& a) {
  const Tensor dy = Dense(k.input(0)), w = Dense(k.input(1));
  const Tensor& dx = k.output(0);
  if (dx.empty()) return;
  if (!du::Supports(dy.dtype()) || dy.empty() || w.empty()) return ConvGradDataReference(k, a);
  ops::Window win = KernelGradWindow("ConvGradData", k, dx.shape(), w.shape(), a);
  const std::string key =
      GradKey("ConvGradData", dy.dtype(), dx.shape(), w.shape(), dy.shape(), win, a.group, false);
  const auto cached = du::Cached<std::optional<ConvBwdData>>(
      key, [&] { return MakeBwdData(key, dy, w, dx, win, a.group); });
  auto& prim = *cached;
  if (!prim) return ConvGradDataReference(k, a);
  RunBwdData(*prim, key, dy, w, dx, a.group);
}

struct ConvBwdWeights {
  dnnl::convolution_backward_weights::primitive_desc pd;
  dnnl::convolution_backward_weights prim;
  std::string layout;
};

void RunBwdWeights(const ConvBwdWeights& p, const std::string& key, const Tensor& dy,
                   const Tensor& x, const Tensor& dw, const Tensor* db, int64_t group) {
  const std::string base = key + "|" + p.layout;
  const memory::desc dw_plain = WeightsDesc(dw, group);
  memory ddst =
      InputAs(base + "|ddst|", dy, du::Desc(dy), p.pd.diff_dst_desc(), du::kScratchFirstInput);
  memory src = InputAs(base + "|src|", x, du::Desc(x), p.pd.src_desc(), du::kScratchSecondInput);
  memory dwei = OutputAs(dw, dw_plain, p.pd.diff_weights_desc());
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_DIFF_DST, ddst}, {DNNL_ARG_SRC, src}, {DNNL_ARG_DIFF_WEIGHTS, dwei}};
  if (db) args[DNNL_ARG_DIFF_BIAS] = du::Mem(*db);
  du::Execute(p.prim, args);
  Finish(base + "|dwei", dwei, dw, dw_plain);
}

std::optional<ConvBwdWeights> MakeBwdWeights(const std::string& key, const Tensor& dy,
                                             const Tensor& x, const Tensor& dw, const Tensor* db,
                                             const ops::Window& win, int64_t group) {
  const memory::data_type dt = du::ToDnnl(dy.dtype());
  const DnnlGeom g = Geom(win);
  const memory::dims wd = WeightDims(dw.shape(), group);
  const auto alg = dnnl::algorithm::convolution_direct;
  std::vector<ConvBwdWeights> cands;
  for (const auto& [layout, tag] : BwdLayouts(dt, win, group)) {
    try {
      const memory::desc src(du::Dims(x.shape()), dt, tag), ddst(du::Dims(dy.shape()), dt, tag),
          dwei(wd, dt, memory::format_tag::any);
      auto hint = HintPd(dt, src, wd, ddst, g, db != nullptr);
      auto pd = db ? dnnl::convolution_backward_weights::primitive_desc(
                         du::Engine(), alg, src, dwei,
                         memory::desc({dw.dim(0)}, dt, memory::format_tag::a), ddst, g.strides,
                         g.dilates, g.pad_l, g.pad_r, hint)
                   : dnnl::convolution_backward_weights::primitive_desc(
                         du::Engine(), alg, src, dwei, ddst, g.strides, g.dilates, g.pad_l, g.pad_r,
                         hint);
      // oneDNN's reference implementation is no faster than our loop.
      if (!IsRef(pd.impl_info_str()))
        cands.push_back(ConvBwdWeights{pd, dnnl::convolution_backward_weights(pd), layout});
    } catch (const dnnl::error&) {
      // No implementation for this layout or dtype: the other candidate, else the loop.
    }
  }
  if (cands.empty()) return std::nullopt;
  const size_t pick = cands.size() == 1 ? 0 : Fastest(cands.size(), [&](size_t i) {
    RunBwdWeights(cands[i], key, dy, x, dw, db, group);
  });
  return std::move(cands[pick]);
}

void ConvGradWeightForward(KernelCtx& k, const ConvGradAttrs& a) {
  const Tensor dy = Dense(k.input(0)), x = Dense(k.input(1));
  const Tensor& dw = k.output(0);
  const Tensor* db = k.num_outputs() > 1 ? &k.outputs[1] : nullptr;
  if (!du::Supports(dy.dtype()) || dy.empty() || x.empty() || dw.empty())
    return ConvGradWeightReference(k, a);
  ops::Window win = KernelGradWindow("ConvGradWeight", k, x.shape(), dw.shape(), a);
  const std::string key = GradKey("ConvGradWeight", dy.dtype(), x.shape(), dw.shape(), dy.shape(),
                                  win, a.group, db != nullptr);
  const auto cached = du::Cached<std::optional<ConvBwdWeights>>(
      key, [&] { return MakeBwdWeights(key, dy, x, dw, db, win, a.group); });
  auto& prim = *cached;
  if (!prim) return ConvGradWeightReference(k, a);
  RunBwdWeights(*prim, key, dy, x, dw, db, a.group);
}

#if SINGA_CUDA
// Convolutions of empty tensors run on the CPU (zeros or the bias).
template <class A>
bool CudaTakes(const InferCtx& c, const A&) {
  return c.input(0).numel() > 0 && c.input(1).numel() > 0;
}

void ConvCuda(KernelCtx& k, const ConvAttrs& a) {
  const ops::Window win = ConvWindow(InferCtx(OpRegistry::Get("Conv"), k.inputs, 1, ""), a);
  cuda::ConvForward(k.input(0), k.input(1), k.has_input(2) ? k.input(2) : Tensor(), k.output(0),
                    ops::ToCuda(win), a.group);
}
void ConvGradDataCuda(KernelCtx& k, const ConvGradAttrs& a) {
  const Tensor& dx = k.output(0);
  const ops::Window win = KernelGradWindow("ConvGradData", k, dx.shape(), k.input(1).shape(), a);
  cuda::ConvBackwardData(k.input(0), k.input(1), dx, ops::ToCuda(win), a.group);
}
void ConvGradWeightCuda(KernelCtx& k, const ConvGradAttrs& a) {
  const Tensor& dw = k.output(0);
  const ops::Window win = KernelGradWindow("ConvGradWeight", k, k.input(1).shape(), dw.shape(), a);
  cuda::ConvBackwardFilter(k.input(0), k.input(1), dw,
                           k.num_outputs() > 1 ? k.outputs[1] : Tensor(), ops::ToCuda(win),
                           a.group);
}
#endif

const OpSchema& GradSchema(const char* op) { return OpRegistry::Get(op, kLatestOpset, "ai.singa"); }

TensorList ConvBackward(const GradCtx& g, const ConvAttrs& a) {
  const Tensor &x = g.input(0), &w = g.input(1), &dy = g.grad_output(0);
  static const OpSchema& conv = OpRegistry::Get("Conv");
  static const OpSchema& data = GradSchema("ConvGradData");
  static const OpSchema& weight = GradSchema("ConvGradWeight");
  const TensorList xw = {x, w};
  const ops::Window win = ConvWindow(InferCtx(conv, xw, 1, ""), a);
  ConvGradAttrs ga{win.dilation, a.group, win.pad_begin, {}, win.stride};
  ga.pads.insert(ga.pads.end(), win.pad_end.begin(), win.pad_end.end());
  TensorList grads(g.num_inputs());
  const bool need_b = g.has_input(2) && g.needs_grad(2);
  if (g.needs_grad(0)) {
    ga.shape = x.shape();
    grads[0] = RunOp(data, TensorList{dy, w}, ga)[0];
  }
  if (g.needs_grad(1)) {
    ga.shape = w.shape();
    TensorList r = RunOp(weight, TensorList{dy, x}, ga, need_b ? 2 : 1);
    grads[1] = r[0];
    if (need_b) grads[2] = r[1];
  } else if (need_b) {
    std::vector<int64_t> axes = {0};
    for (int64_t d = 2; d < dy.ndim(); ++d) axes.push_back(d);
    grads[2] = Call1("ReduceSum", {dy, Tensor::FromVector<int64_t>({dy.ndim() - 1}, axes)},
                     {{"keepdims", int64_t{0}}});
  }
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(Conv, ConvAttrs)
    .since_opset(1)
    .inputs({"X", "W", "B?"})
    .outputs({"Y"})
    .attr("auto_pad", &ConvAttrs::auto_pad)
    .attr("dilations", &ConvAttrs::dilations)
    .attr("group", &ConvAttrs::group)
    .attr("kernel_shape", &ConvAttrs::kernel_shape)
    .attr("pads", &ConvAttrs::pads)
    .attr("strides", &ConvAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(ConvInfer)
    .kernel(ConvForward) SINGA_CUDA_KERNEL(ConvCuda, ops::kCudnnFloats, CudaTakes<ConvAttrs>)
    .reference(ConvReference)
    .backward(ConvBackward)
    // Each output element: C/group x kernel multiply-adds (W is [M, C/group, k...]).
    .flops([](const std::vector<Shape>& in, const Shape& out) {
      return 2 * NumElements(out) * (NumElements(in[1]) / std::max<int64_t>(in[1][0], 1));
    });

SINGA_REGISTER_OP(FusedConv, ConvAttrs)
    .domain("ai.singa")
    .inputs({"X", "W", "B?", "Z?"})
    .outputs({"Y"})
    .attr("activation", &ConvAttrs::activation)
    .attr("alpha", &ConvAttrs::alpha)
    .attr("auto_pad", &ConvAttrs::auto_pad)
    .attr("beta", &ConvAttrs::beta)
    .attr("blocked", &ConvAttrs::blocked)
    .attr("dilations", &ConvAttrs::dilations)
    .attr("group", &ConvAttrs::group)
    .attr("kernel_shape", &ConvAttrs::kernel_shape)
    .attr("pads", &ConvAttrs::pads)
    .attr("strides", &ConvAttrs::strides)
    .dtypes({DType::kFloat32}, {0, 1, 2, 3})
    .infer(FusedConvInfer)
    .kernel(ConvForward)
    .reference(ConvReference);

// Internal ops of Conv's backward.
SINGA_REGISTER_OP(ConvGradData, ConvGradAttrs)
    .domain("ai.singa")
    .inputs({"dY", "W"})
    .outputs({"dX"})
    .attr("dilations", &ConvGradAttrs::dilations)
    .attr("group", &ConvGradAttrs::group)
    .attr("pads", &ConvGradAttrs::pads)
    .attr("shape", &ConvGradAttrs::shape, true)
    .attr("strides", &ConvGradAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(ConvGradDataInfer)
    .kernel(ConvGradDataForward)
        SINGA_CUDA_KERNEL(ConvGradDataCuda, ops::kCudnnFloats, CudaTakes<ConvGradAttrs>)
    .reference(ConvGradDataReference);
SINGA_REGISTER_OP(ConvGradWeight, ConvGradAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X"})
    .outputs({"dW", "dB?"})
    .attr("dilations", &ConvGradAttrs::dilations)
    .attr("group", &ConvGradAttrs::group)
    .attr("pads", &ConvGradAttrs::pads)
    .attr("shape", &ConvGradAttrs::shape, true)
    .attr("strides", &ConvGradAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(ConvGradWeightInfer)
    .kernel(ConvGradWeightForward)
        SINGA_CUDA_KERNEL(ConvGradWeightCuda, ops::kCudnnFloats, CudaTakes<ConvGradAttrs>)
    .reference(ConvGradWeightReference);

}  // namespace singa
