// ConvTranspose: the transpose (adjoint) of Conv. X [N, C, D1..Dk] and
// W [C, M/group, k1..kk] give Y [N, M, O1..Ok] with
//   Y[n, m, i*s + t*d - pad_begin] += X[n, c, i] * W[c, m % (M/group), t]
// over the channels c of m's group, plus the optional bias B [M]; 1-3 spatial
// dimensions. O = s*(D-1) + output_padding + (k-1)*d + 1 - pad_begin - pad_end.
// `output_shape` (spatial sizes, or all of Y's) or auto_pad SAME_* (O = D*s)
// derive the pads from O: total = s*(D-1) + output_padding + (k-1)*d + 1 - O,
// SAME_UPPER puts floor(total/2) at the beginning, the others the rest there.
// Pads computed that way may be negative (O beyond the last tap: zeros).
// Opset 1's ConvTranspose is opset 11's (11 only reworded the spec).
// https://onnx.ai/onnx/operators/onnx__ConvTranspose.html
//
// Fast paths: a kernel that tiles the output (Tiling below); else Conv's
// backward-data op ConvGradData (a oneDNN convolution backward, which is
// exactly this) plus the bias, when no pad is negative.
// Reference (and negative pads): the scatter loop above.
// Backward: dX = Conv(dY, W) with the same strides, dilations, group and
// pads; dW = ConvGradWeight(X as the conv's dY, dY as the conv's X); dB sums dY.
#include <array>
#include <utility>

#include "kernels/cpu/vec.h"
#include "ops/common.h"
#include "ops/window.h"
#include "singa/core/profile.h"

namespace singa {
namespace {

struct ConvTransposeAttrs {
  std::string auto_pad = "NOTSET";
  std::vector<int64_t> dilations;
  int64_t group = 1;
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> output_padding;
  std::vector<int64_t> output_shape;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
};

struct Geometry {
  int64_t nd = 0;
  std::vector<int64_t> in, kernel, stride, dilation, pad_begin, pad_end, out;
  Shape y;
  // Whether Conv over Y (with these pads) gives back X's size: not when an
  // output_padding reaches a stride (the spec forbids it; the loop copes).
  bool conv_fits() const {
    for (int64_t i = 0; i < nd; ++i)
      if ((out[i] + pad_begin[i] + pad_end[i] - (kernel[i] - 1) * dilation[i] - 1) / stride[i] +
              1 !=
          in[i])
        return false;
    return true;
  }
  bool negative_pads() const {
    for (int64_t i = 0; i < nd; ++i)
      if (pad_begin[i] < 0 || pad_end[i] < 0) return true;
    return false;
  }
  std::vector<int64_t> pads() const {
    std::vector<int64_t> p = pad_begin;
    p.insert(p.end(), pad_end.begin(), pad_end.end());
    return p;
  }
};

Geometry Resolve(const std::string& where, const std::string& inputs, const Shape& x,
                 const Shape& w, const ConvTransposeAttrs& a) {
  const size_t rank = x.size();
  SINGA_CHECK(
      rank >= 3 && rank <= 5 && w.size() == rank, ShapeError,
      where << ": X and W must have one rank with 1 to 3 spatial dimensions (" << inputs << ")");
  SINGA_CHECK(a.group >= 1 && x[1] % a.group == 0 && w[0] == x[1], ShapeError,
              where << ": W's dim 0 must be X's channels, a multiple of group " << a.group << " ("
                    << inputs << ")");
  Geometry g;
  g.nd = static_cast<int64_t>(rank) - 2;
  const size_t nd = static_cast<size_t>(g.nd);
  auto check_len = [&](const std::vector<int64_t>& v, size_t n, const char* name) {
    SINGA_CHECK(v.empty() || v.size() == n, ShapeError,
                where << ": attribute '" << name << "' has " << v.size() << " values "
                      << ops::IntsString(v) << ", expected " << n << " (" << inputs << ")");
  };
  check_len(a.kernel_shape, nd, "kernel_shape");
  check_len(a.strides, nd, "strides");
  check_len(a.dilations, nd, "dilations");
  check_len(a.output_padding, nd, "output_padding");
  check_len(a.pads, 2 * nd, "pads");
  SINGA_CHECK(
      a.output_shape.empty() || a.output_shape.size() == nd || a.output_shape.size() == rank,
      ShapeError,
      where << ": attribute 'output_shape' " << ops::IntsString(a.output_shape) << " must list "
            << nd << " spatial sizes (" << inputs << ")");
  SINGA_CHECK(a.auto_pad == "NOTSET" || a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER" ||
                  a.auto_pad == "VALID",
              ShapeError,
              where << ": attribute 'auto_pad' must be NOTSET, SAME_UPPER, SAME_LOWER or VALID, "
                    << "got '" << a.auto_pad << "'");
  const bool from_out =
      !a.output_shape.empty() || a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
  g.y = {x[0], w[1] * a.group};
  for (size_t i = 0; i < nd; ++i) {
    const int64_t k = w[2 + i];
    SINGA_CHECK(a.kernel_shape.empty() || a.kernel_shape[i] == k, ShapeError,
                where << ": kernel_shape " << ops::IntsString(a.kernel_shape)
                      << " differs from W's spatial dims (" << inputs << ")");
    const int64_t s = a.strides.empty() ? 1 : a.strides[i];
    const int64_t d = a.dilations.empty() ? 1 : a.dilations[i];
    const int64_t op = a.output_padding.empty() ? 0 : a.output_padding[i];
    SINGA_CHECK(
        s >= 1 && d >= 1 && op >= 0, ShapeError,
        where << ": strides and dilations must be >= 1 and output_padding >= 0 (" << inputs << ")");
    const int64_t full = s * (x[2 + i] - 1) + op + (k - 1) * d + 1;
    int64_t pb = 0, pe = 0;
    if (from_out) {
      const int64_t o =
          a.output_shape.empty() ? x[2 + i] * s : a.output_shape[a.output_shape.size() - nd + i];
      const int64_t total = full - o;
      const int64_t half = ops::FloorDiv(total, 2);
      pb = a.auto_pad == "SAME_UPPER" ? half : total - half;
      pe = total - pb;
    } else if (a.auto_pad == "NOTSET" && !a.pads.empty()) {
      pb = a.pads[i];
      pe = a.pads[nd + i];
      SINGA_CHECK(
          pb >= 0 && pe >= 0, ShapeError,
          where << ": pads " << ops::IntsString(a.pads) << " must be >= 0 (" << inputs << ")");
    }
    const int64_t o = full - pb - pe;
    SINGA_CHECK(
        o >= 0, ShapeError,
        where << ": the output's spatial dim " << i << " would be " << o << " (" << inputs << ")");
    g.in.push_back(x[2 + i]);
    g.kernel.push_back(k);
    g.stride.push_back(s);
    g.dilation.push_back(d);
    g.pad_begin.push_back(pb);
    g.pad_end.push_back(pe);
    g.out.push_back(o);
    g.y.push_back(o);
  }
  return g;
}

Geometry Resolve(const InferCtx& c, const ConvTransposeAttrs& a) {
  return Resolve(c.where(), c.inputs_string(), c.shape(0), c.shape(1), a);
}

SpecList Infer(const InferCtx& c, const ConvTransposeAttrs& a) {
  const Geometry g = Resolve(c, a);
  if (c.has_input(2))
    SINGA_CHECK(
        c.shape(2) == Shape{g.y[1]}, ShapeError,
        c.where() << ": B must have shape [" << g.y[1] << "] (" << c.inputs_string() << ")");
  return {{c.dtype(0), g.y}};
}

Geometry KernelGeometry(const KernelCtx& k, const ConvTransposeAttrs& a) {
  return Resolve("ConvTranspose", "", k.input(0).shape(), k.input(1).shape(), a);
}

// The geometry padded to 3 spatial dims (leading size-1 dims).
struct Geo3 {
  std::array<int64_t, 3> in{1, 1, 1}, k{1, 1, 1}, s{1, 1, 1}, d{1, 1, 1}, pb{0, 0, 0}, out{1, 1, 1};
};
Geo3 To3(const Geometry& g) {
  Geo3 r;
  for (int64_t i = 0; i < g.nd; ++i) {
    const int64_t j = 3 - g.nd + i;
    r.in[j] = g.in[i];
    r.k[j] = g.kernel[i];
    r.s[j] = g.stride[i];
    r.d[j] = g.dilation[i];
    r.pb[j] = g.pad_begin[i];
    r.out[j] = g.out[i];
  }
  return r;
}

template <class T>
void Loop(const Tensor& x_in, const Tensor& w_in, const Tensor* b_in, const Tensor& y,
          const Geometry& geo, int64_t group) {
  using A = Acc<T>;
  const Tensor x = x_in.Contiguous(), w = w_in.Contiguous();
  const Geo3 g = To3(geo);
  const int64_t n_batch = x.dim(0), c_all = x.dim(1), cg = c_all / group, mg = w.dim(1);
  const int64_t m_all = mg * group;
  const int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  const int64_t taps = g.k[0] * g.k[1] * g.k[2];
  const int64_t out_plane = g.out[0] * g.out[1] * g.out[2];
  const T* px = x.data<T>();
  const T* pw = w.data<T>();
  std::vector<A> bias(m_all, A(0));
  if (b_in) {
    const std::vector<double> b = b_in->ToVector<double>();
    for (int64_t m = 0; m < m_all; ++m) bias[m] = static_cast<A>(b[m]);
  }
  T* py = y.data<T>();
  ParallelFor(0, n_batch * m_all, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> acc(out_plane);
    for (int64_t nm = lo; nm < hi; ++nm) {
      const int64_t n = nm / m_all, m = nm % m_all, grp = m / mg, ml = m % mg;
      std::fill(acc.begin(), acc.end(), bias[m]);
      for (int64_t c = grp * cg; c < (grp + 1) * cg; ++c) {
        const T* xc = px + (n * c_all + c) * in_plane;
        const T* wc = pw + (c * mg + ml) * taps;
        for (int64_t i0 = 0; i0 < g.in[0]; ++i0)
          for (int64_t i1 = 0; i1 < g.in[1]; ++i1)
            for (int64_t i2 = 0; i2 < g.in[2]; ++i2) {
              const A xv = static_cast<A>(xc[(i0 * g.in[1] + i1) * g.in[2] + i2]);
              for (int64_t t0 = 0; t0 < g.k[0]; ++t0) {
                const int64_t o0 = i0 * g.s[0] + t0 * g.d[0] - g.pb[0];
                if (o0 < 0 || o0 >= g.out[0]) continue;
                for (int64_t t1 = 0; t1 < g.k[1]; ++t1) {
                  const int64_t o1 = i1 * g.s[1] + t1 * g.d[1] - g.pb[1];
                  if (o1 < 0 || o1 >= g.out[1]) continue;
                  for (int64_t t2 = 0; t2 < g.k[2]; ++t2) {
                    const int64_t o2 = i2 * g.s[2] + t2 * g.d[2] - g.pb[2];
                    if (o2 < 0 || o2 >= g.out[2]) continue;
                    acc[(o0 * g.out[1] + o1) * g.out[2] + o2] +=
                        xv * static_cast<A>(wc[(t0 * g.k[1] + t1) * g.k[2] + t2]);
                  }
                }
              }
            }
      }
      T* yo = py + nm * out_plane;
      for (int64_t j = 0; j < out_plane; ++j) yo[j] = static_cast<T>(acc[j]);
    }
  });
}

void Reference(KernelCtx& k, const ConvTransposeAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  const Geometry g = KernelGeometry(k, a);
  VisitFloat(y.dtype(), [&]<class T>(Tag<T>) {
    Loop<T>(k.input(0), k.input(1), k.has_input(2) ? &k.input(2) : nullptr, y, g, a.group);
  });
}

namespace tiling {

using cpu::vec::kLanes, cpu::vec::Vec, cpu::vec::Load;
constexpr int kCols = 2 * kLanes;  // input columns a tile computes
constexpr int kTaps = 8;           // the most output taps (m, i, j) a tile computes
// W's most bytes: every tile reads all of W, which beyond about the L2
// cache's size comes from memory each time (512 x 256 x 2 x 2 ran 1.3x
// slower than oneDNN, 256 x 128 x 2 x 2 1.1x faster).
constexpr int64_t kMaxWeightBytes = 512 << 10;

// Whether the kernel tiles Y: float32, 2-D, one group, strides equal to
// the kernel (of at most kTaps columns), no dilation, pads or output
// padding. Each input pixel then writes a k0 x k1 patch of its own in every
// output channel:
//   Y[n, m, h*k0 + i, w*k1 + j] = B[m] + sum_c X[n, c, h, w] * W[c, m, i, j]
// (a decoder's 2x upsampling, a DB text detector's last layer to its one
// probability channel, which oneDNN's backward-data convolution ran 3x
// slower than onnxruntime).
bool Fits(const KernelCtx& k, const Geometry& g, int64_t group) {
  if (g.nd != 2 || group != 1 || k.input(0).dtype() != DType::kFloat32 || g.kernel[1] > kTaps ||
      k.input(1).numel() * int64_t{sizeof(float)} > kMaxWeightBytes)
    return false;
  for (int64_t i = 0; i < 2; ++i)
    if (g.stride[i] != g.kernel[i] || g.dilation[i] != 1 || g.pad_begin[i] != 0 ||
        g.pad_end[i] != 0 || g.out[i] != g.in[i] * g.stride[i])
      return false;
  return true;
}

// Taps [t0, t0 + NT) of kCols input positions: xs [C][kCols] (the
// positions of every channel), w [C][taps] (W as stored), the sums into
// out [NT][kCols].
template <int NT>
void Tile(const float* xs, const float* w, int64_t c, int64_t taps, int64_t t0,
          float (*out)[kCols]) {
  Vec acc[NT][2] = {};
  for (int64_t ci = 0; ci < c; ++ci) {
    const Vec x0 = Load(xs + ci * kCols), x1 = Load(xs + ci * kCols + kLanes);
    const float* wc = w + ci * taps + t0;
    for (int t = 0; t < NT; ++t) {
      acc[t][0] += x0 * wc[t];
      acc[t][1] += x1 * wc[t];
    }
  }
  for (int t = 0; t < NT; ++t) {
    cpu::vec::Store(out[t], acc[t][0]);
    cpu::vec::Store(out[t] + kLanes, acc[t][1]);
  }
}

template <size_t... I>
constexpr auto Tiles(std::index_sequence<I...>) {
  return std::array{&Tile<static_cast<int>(I) + 1>...};
}

// Lanes [kFirst, kFirst + kLanes / 2) of a and of b, alternating.
template <size_t kFirst, size_t... I>
Vec Zip(Vec a, Vec b, std::index_sequence<I...>) {
  return __builtin_shufflevector(a, b, (kFirst + I / 2 + (I % 2) * kLanes)...);
}

// out[0..k1) (the taps j of one output row, kCols positions each) plus
// `bias`, interleaved into line [kCols * k1]: line[v * k1 + j] = out[j][v] +
// bias. Two taps (a 2x upsampling) interleave in registers.
void Interleave(const float (*out)[kCols], int64_t k1, float bias, float* line) {
  if (k1 == 2) {
    constexpr auto kLaneIndices = std::make_index_sequence<kLanes>();
    for (int v = 0; v < kCols; v += kLanes) {
      const Vec a = Load(out[0] + v) + bias, b = Load(out[1] + v) + bias;
      cpu::vec::Store(line + 2 * v, Zip<0>(a, b, kLaneIndices));
      cpu::vec::Store(line + 2 * v + kLanes, Zip<kLanes / 2>(a, b, kLaneIndices));
    }
    return;
  }
  for (int64_t j = 0; j < k1; ++j)
    for (int v = 0; v < kCols; ++v) line[v * k1 + j] = out[j][v] + bias;
}

// A tile is kCols consecutive positions of an image's input plane (H x W
// flattened), across rows when rows are short (a 10 x 10 decoder level would
// fill a third of a tile), copied out of X channel by channel (X's channels
// a plane apart would share a few of the L1 cache's sets), then all taps in
// Tiles of whole output rows (m, i).
void Forward(const Tensor& x_in, const Tensor& w_in, const Tensor* b_in, const Tensor& y) {
  const Tensor x = x_in.Contiguous(), w = w_in.Contiguous();
  const int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), wd = x.dim(3), plane = h * wd;
  const int64_t m = y.dim(1), k0 = y.dim(2) / h, k1 = y.dim(3) / wd, patch = k0 * k1,
                taps = m * patch, tiles = (plane + kCols - 1) / kCols, group = kTaps / k1 * k1;
  std::vector<float> bias(m, 0.f);
  if (b_in) bias = b_in->ToVector<float>();
  const float* px = x.data<float>();
  const float* pw = w.data<float>();
  float* py = y.data<float>();
  static constexpr auto kTile = Tiles(std::make_index_sequence<kTaps>());
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 15) / (kCols * c * taps));
  ParallelFor(0, n * tiles, grain, [&](int64_t lo, int64_t hi) {
    std::vector<float> xs(c * kCols), line(kCols * k1);
    float out[kTaps][kCols];
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t in = r / tiles, p0 = r % tiles * kCols,
                    cols = std::min<int64_t>(kCols, plane - p0);
      for (int64_t ci = 0; ci < c; ++ci) {
        float* dst = xs.data() + ci * kCols;
        std::copy_n(px + (in * c + ci) * plane + p0, cols, dst);
        std::fill(dst + cols, dst + kCols, 0.f);
      }
      for (int64_t t0 = 0; t0 < taps; t0 += group) {
        const int64_t nt = std::min(group, taps - t0);
        kTile[nt - 1](xs.data(), pw, c, taps, t0, out);
        for (int64_t t = 0; t < nt; t += k1) {  // one output row (m, i) of the tile's rows
          const int64_t tap = t0 + t, mm = tap / patch, i = tap % patch / k1;
          Interleave(out + t, k1, bias[mm], line.data());
          float* ym = py + (in * m + mm) * plane * patch;
          for (int64_t p = p0; p < p0 + cols;) {  // the runs of positions in one input row
            const int64_t row = p / wd, col = p % wd, run = std::min(wd - col, p0 + cols - p);
            std::copy_n(line.data() + (p - p0) * k1, run * k1,
                        ym + ((row * k0 + i) * wd + col) * k1);
            p += run;
          }
        }
      }
    }
  });
  NoteKernel("singa:tiling_conv_transpose");
}

}  // namespace tiling

const OpSchema& GradSchema(const char* op) { return OpRegistry::Get(op, kLatestOpset, "ai.singa"); }

AttrMap ConvAttrMap(const Geometry& g, int64_t group, const Shape& shape) {
  return {{"dilations", g.dilation},
          {"group", group},
          {"pads", g.pads()},
          {"shape", std::vector<int64_t>(shape.begin(), shape.end())},
          {"strides", g.stride}};
}

void Forward(KernelCtx& k, const ConvTransposeAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.empty()) return;
  const Geometry g = KernelGeometry(k, a);
  if (g.negative_pads() || !g.conv_fits() || k.input(0).empty() || k.input(1).empty())
    return Reference(k, a);
  if (tiling::Fits(k, g, a.group))
    return tiling::Forward(k.input(0), k.input(1), k.has_input(2) ? &k.input(2) : nullptr, y);
  static const OpSchema& data = GradSchema("ConvGradData");
  const std::array<Tensor, 2> in = {k.input(0), k.input(1)};
  const auto attrs = data.ParseAttrs(ConvAttrMap(g, a.group, y.shape()), in);
  KernelCtx k2{in, k.outputs};
  data.kernel(k2, attrs.get());
  if (!k.has_input(2)) return;
  // y[n, m, ...] += B[m]
  VisitFloat(y.dtype(), [&]<class T>(Tag<T>) {
    const std::vector<double> b = k.input(2).ToVector<double>();
    const int64_t m_all = y.dim(1), plane = y.numel() / (y.dim(0) * m_all);
    T* py = y.data<T>();
    ParallelFor(0, y.dim(0) * m_all, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t nm = lo; nm < hi; ++nm) {
        const Acc<T> bv = static_cast<Acc<T>>(b[nm % m_all]);
        T* row = py + nm * plane;
        for (int64_t j = 0; j < plane; ++j)
          row[j] = static_cast<T>(static_cast<Acc<T>>(row[j]) + bv);
      }
    });
  });
}

#if SINGA_CUDA
// cuDNN's convolution backward data, as Forward's ConvGradData on the CPU;
// the bias a broadcasting pass.
void ForwardCuda(KernelCtx& k, const ConvTransposeAttrs& a) {
  const Tensor& y = k.output(0);
  const Geometry g = KernelGeometry(k, a);
  cuda::ConvBackwardData(k.input(0), k.input(1), y,
                         {g.kernel, g.stride, g.dilation, g.pad_begin, g.pad_end}, a.group);
  if (!k.has_input(2)) return;
  Shape bias(y.ndim() - 1, 1);
  bias[0] = y.dim(1);
  cuda::BinaryOp(cuda::Binary::kAdd, y, k.input(2).Reshape(bias), y);
}
// What ForwardCuda computes: no negative pads, an output_padding below the
// stride, no empty tensor.
bool CudaTakes(const InferCtx& c, const ConvTransposeAttrs& a) {
  if (c.input(0).numel() == 0 || c.input(1).numel() == 0) return false;
  const Geometry g = Resolve(c, a);
  return !g.negative_pads() && g.conv_fits() && NumElements(g.y) > 0;
}
#endif

// dY with the pads applied as Conv's input would see them (negative ones crop).
Tensor PaddedGrad(const Tensor& dy, const Geometry& g) {
  std::vector<int64_t> p(2 * (g.nd + 2), 0);
  for (int64_t i = 0; i < g.nd; ++i) {
    p[2 + i] = g.pad_begin[i];
    p[g.nd + 4 + i] = g.pad_end[i];
  }
  return Call1("Pad", {dy, Tensor::FromVector<int64_t>({static_cast<int64_t>(p.size())}, p)});
}

TensorList Backward(const GradCtx& gc, const ConvTransposeAttrs& a) {
  const Tensor &x = gc.input(0), &w = gc.input(1), &dy = gc.grad_output(0);
  static const OpSchema& schema = OpRegistry::Get("ConvTranspose");
  const TensorList xw = {x, w};
  const Geometry g = Resolve(InferCtx(schema, xw, 1, ""), a);
  // Conv does not take negative pads: those apply to dY first.
  const bool neg = g.negative_pads();
  const Tensor src = neg ? PaddedGrad(dy, g) : dy;
  Geometry cg = g;
  if (neg) {
    std::fill(cg.pad_begin.begin(), cg.pad_begin.end(), 0);
    std::fill(cg.pad_end.begin(), cg.pad_end.end(), 0);
  }
  TensorList d(gc.num_inputs());
  if (gc.needs_grad(0))
    d[0] = Call1("Conv", {src, w},
                 {{"dilations", cg.dilation},
                  {"group", a.group},
                  {"pads", cg.pads()},
                  {"strides", cg.stride}});
  // An output_padding of a stride or more leaves trailing Y positions no X
  // position reaches: Conv then sees extra windows past X's end.
  if (d[0].defined() && d[0].shape() != x.shape())
    for (int64_t i = 2; i < x.ndim(); ++i) d[0] = d[0].Slice(i, 0, x.dim(i));
  if (gc.needs_grad(1)) {
    static const OpSchema& weight = GradSchema("ConvGradWeight");
    Tensor conv_x = src;
    if (!cg.conv_fits())  // drop the Y positions past the last window (see above)
      for (int64_t i = 0; i < g.nd; ++i) {
        const int64_t need = (g.in[i] - 1) * g.stride[i] + (g.kernel[i] - 1) * g.dilation[i] + 1 -
                             cg.pad_begin[i] - cg.pad_end[i];
        conv_x = conv_x.Slice(2 + i, 0, std::min(need, conv_x.dim(2 + i)));
      }
    const TensorList in = {x, conv_x};
    d[1] = weight.Run(in, weight.ParseAttrs(ConvAttrMap(cg, a.group, w.shape()), in), 1)[0];
  }
  if (gc.has_input(2) && gc.needs_grad(2)) {
    std::vector<int64_t> axes = {0};
    for (int64_t i = 2; i < dy.ndim(); ++i) axes.push_back(i);
    d[2] = Call1("ReduceSum", {dy, Tensor::FromVector<int64_t>({dy.ndim() - 1}, axes)},
                 {{"keepdims", int64_t{0}}});
  }
  return d;
}

}  // namespace

SINGA_REGISTER_OP(ConvTranspose, ConvTransposeAttrs)
    .since_opset(1)
    .inputs({"X", "W", "B?"})
    .outputs({"Y"})
    .attr("auto_pad", &ConvTransposeAttrs::auto_pad)
    .attr("dilations", &ConvTransposeAttrs::dilations)
    .attr("group", &ConvTransposeAttrs::group)
    .attr("kernel_shape", &ConvTransposeAttrs::kernel_shape)
    .attr("output_padding", &ConvTransposeAttrs::output_padding)
    .attr("output_shape", &ConvTransposeAttrs::output_shape)
    .attr("pads", &ConvTransposeAttrs::pads)
    .attr("strides", &ConvTransposeAttrs::strides)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(Infer)
    .kernel(Forward) SINGA_CUDA_KERNEL(ForwardCuda, ops::kCudnnFloats, CudaTakes)
    .reference(Reference)
    .backward(Backward)
    // Each input element is scattered to M/group x kernel outputs (W is [C, M/group, k...]).
    .flops([](const std::vector<Shape>& in, const Shape&) {
      return 2 * NumElements(in[0]) * (NumElements(in[1]) / std::max<int64_t>(in[1][0], 1));
    });

}  // namespace singa
