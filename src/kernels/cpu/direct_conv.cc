#include "kernels/cpu/direct_conv.h"

#include <algorithm>
#include <vector>

#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/scratch.h"
#include "kernels/cpu/vec.h"
#include "singa/core/parallel.h"

namespace singa::cpu {
namespace {

using vec::kLanes, vec::Vec, vec::Load, vec::Store;

// Columns per tile: T x NB (2) vectors of sums, and NB of weights, fit in
// the registers (32 with AVX-512, 16 with AVX2).
constexpr int kTile = kLanes == 16 ? 12 : 6;

// Output columns [ow0, ow0 + T) of row oh of image n for the channels from
// c0 (a vector of them, fewer in a last block): sums + bias + z, the
// activation, stored in y's layout.
template <int T>
[[gnu::always_inline]] inline void StoreColumns(const DirectConvArgs& a, const Vec (&acc)[T],
                                                int64_t n, int64_t c0, int64_t oh, int64_t ow0) {
  const ConvLayout& yl = a.yl;
  float* yn = a.y + n * yl.s_n;
  const float* zn = a.z ? a.z + n * yl.s_n : nullptr;
  const int64_t lanes = std::min<int64_t>(kLanes, a.c_out - c0);
  const auto at = [&](int64_t c, int64_t t) {
    return (c / yl.block) * yl.s_block + (c % yl.block) * yl.s_inner + oh * yl.s_h +
           (ow0 + t) * yl.s_w;
  };
  const Vec bias = Load(a.bias + c0);
  // Dense: the channels are one vector at each column (nChw<B>c,
  // channels-last), finished in registers; else (NCHW, a last block of
  // fewer channels) one by one.
  if (lanes == kLanes && yl.s_inner == 1 && c0 % yl.block + kLanes <= yl.block) {
    for (int t = 0; t < T; ++t) {
      const Vec z = zn ? Load(zn + at(c0, t)) : Vec{};
      Store(yn + at(c0, t), Activate(acc[t] + bias + z, a.act, a.alpha, a.beta));
    }
    return;
  }
  float out[T][kLanes];
  for (int t = 0; t < T; ++t) Store(out[t], acc[t] + bias);
  for (int64_t l = 0; l < lanes; ++l)
    for (int t = 0; t < T; ++t) {
      const float z = zn ? zn[at(c0 + l, t)] : 0.f;
      yn[at(c0 + l, t)] = Activate(out[t][l] + z, a.act, a.alpha, a.beta);
    }
}

// Output columns [ow0, ow0 + T) of row oh of image n, for the NB output
// channel blocks from block ob: T x NB vectors of sums kept in registers
// over every input channel and tap, then StoreColumns. Every tap
// of these columns is inside the input's width (WidthPadded). `taps`: where
// the taps (j, c) of a kernel row are in x from its first, in the packed
// weights' order (RowTaps), so that one loop runs over a row's taps whatever
// the layout (a first layer's 3 channels by 3 columns: 9 trips of one loop,
// not 3 of 3 nested). kStep: the floats between two columns' inputs when the
// build knows it (the blocked or plain layout at stride 1), else 0
// (a.xl.s_w * a.stride_w).
template <int NB, int T, int kStep>
void Tile(const DirectConvArgs& a, const int64_t* taps, int64_t n, int64_t ob, int64_t oh,
          int64_t ow0) {
  const ConvLayout& l = a.xl;
  const float* xn = a.x + n * l.s_n + (ow0 * a.stride_w - a.pad_l) * l.s_w;
  const int64_t row_taps = a.kw * a.c_in;
  const int64_t per_block = a.kh * row_taps * kLanes;  // packed weights of one block
  const int64_t step = kStep ? kStep : l.s_w * a.stride_w;
  Vec acc[NB][T] = {};
  for (int64_t i = 0; i < a.kh; ++i) {
    const int64_t ih = oh * a.stride_h - a.pad_t + i * a.dilation_h;
    if (ih < 0 || ih >= a.h_in) continue;
    const float* xr = xn + ih * l.s_h;
    const float* wp = a.w + ob * per_block + i * row_taps * kLanes;
    for (int64_t e = 0; e < row_taps; ++e, wp += kLanes) {
      const float* xc = xr + taps[e];
      Vec w[NB];
      for (int b = 0; b < NB; ++b) w[b] = Load(wp + b * per_block);
      for (int t = 0; t < T; ++t) {
        const float v = xc[t * step];
        for (int b = 0; b < NB; ++b) acc[b][t] += v * w[b];
      }
    }
  }
  for (int b = 0; b < NB; ++b) StoreColumns<T>(a, acc[b], n, (ob + b) * kLanes, oh, ow0);
}

// Where each tap (j, c) of a kernel row is in x from the row's first, j
// major as DirectConvWeights packs them.
std::vector<int64_t> RowTaps(const DirectConvArgs& a) {
  const ConvLayout& l = a.xl;
  std::vector<int64_t> taps;
  taps.reserve(a.kw * a.c_in);
  for (int64_t j = 0; j < a.kw; ++j)
    for (int64_t c = 0; c < a.c_in; ++c)
      taps.push_back(j * a.dilation_w * l.s_w + c / l.block * l.s_block + c % l.block * l.s_inner);
  return taps;
}

// One output row of NB channel blocks, in tiles of kTile columns, then of
// 8, 4, 2 and 1 for the rest.
template <int NB, int kStep>
void Row(const DirectConvArgs& a, const int64_t* taps, int64_t n, int64_t ob, int64_t oh) {
  int64_t ow = 0;
  for (; ow + kTile <= a.w_out; ow += kTile) Tile<NB, kTile, kStep>(a, taps, n, ob, oh, ow);
  if constexpr (kTile > 8)
    if (ow + 8 <= a.w_out) Tile<NB, 8, kStep>(a, taps, n, ob, oh, ow), ow += 8;
  if (ow + 4 <= a.w_out) Tile<NB, 4, kStep>(a, taps, n, ob, oh, ow), ow += 4;
  if (ow + 2 <= a.w_out) Tile<NB, 2, kStep>(a, taps, n, ob, oh, ow), ow += 2;
  if (ow < a.w_out) Tile<NB, 1, kStep>(a, taps, n, ob, oh, ow);
}

template <int NB>
void RowOf(const DirectConvArgs& a, const int64_t* taps, int64_t n, int64_t ob, int64_t oh) {
  const int64_t step = a.xl.s_w * a.stride_w;
  if (step == kLanes) return Row<NB, kLanes>(a, taps, n, ob, oh);
  if (step == 1) return Row<NB, 1>(a, taps, n, ob, oh);
  Row<NB, 0>(a, taps, n, ob, oh);
}

// A depthwise tile: output columns [ow0, ow0 + T) of row oh of image n for
// the channels from c0, each its own input channel's taps: vectors of
// channels (x's blocks a multiple of the vector, their channels adjacent)
// times the taps' weight vectors. kEdge: taps outside the input's width are
// skipped (T 1); DepthwiseRow calls tiles whose taps are all inside.
template <int T, bool kEdge>
void DepthwiseTile(const DirectConvArgs& a, int64_t n, int64_t c0, int64_t oh, int64_t ow0) {
  const ConvLayout& l = a.xl;
  const float* xc = a.x + n * l.s_n + (c0 / l.block) * l.s_block + c0 % l.block;
  const int64_t step = a.stride_w * l.s_w;
  const float* wc = a.w + (c0 / kLanes) * a.kh * a.kw * kLanes;  // DirectConvWeights, C = 1
  Vec acc[T] = {};
  for (int64_t i = 0; i < a.kh; ++i) {
    const int64_t ih = oh * a.stride_h - a.pad_t + i * a.dilation_h;
    if (ih < 0 || ih >= a.h_in) continue;
    for (int64_t j = 0; j < a.kw; ++j) {
      const int64_t iw = ow0 * a.stride_w - a.pad_l + j * a.dilation_w;
      if (kEdge && (iw < 0 || iw >= a.w_in)) continue;
      const Vec w = Load(wc + (i * a.kw + j) * kLanes);
      const float* xr = xc + ih * l.s_h + iw * l.s_w;
      for (int t = 0; t < T; ++t) acc[t] += Load(xr + t * step) * w;
    }
  }
  StoreColumns<T>(a, acc, n, c0, oh, ow0);
}

// The columns whose taps fall inside the input's width in tiles of 8, the
// others one at a time with their taps checked: a depthwise tile's work is
// too small to pay for a widened copy of the input.
void DepthwiseRow(const DirectConvArgs& a, int64_t n, int64_t c0, int64_t oh) {
  const int64_t reach = (a.kw - 1) * a.dilation_w;
  const int64_t first = std::min(a.w_out, (a.pad_l + a.stride_w - 1) / a.stride_w);
  const int64_t last_in = a.w_in - 1 - reach + a.pad_l;  // the last inside column's ow * stride_w
  const int64_t stop =
      std::clamp<int64_t>(last_in < 0 ? 0 : last_in / a.stride_w + 1, first, a.w_out);
  int64_t ow = 0;
  for (; ow < first; ++ow) DepthwiseTile<1, true>(a, n, c0, oh, ow);
  for (; ow + 16 <= stop; ow += 16) DepthwiseTile<16, false>(a, n, c0, oh, ow);
  for (; ow + 4 <= stop; ow += 4) DepthwiseTile<4, false>(a, n, c0, oh, ow);
  for (; ow < stop; ++ow) DepthwiseTile<1, false>(a, n, c0, oh, ow);
  for (; ow < a.w_out; ++ow) DepthwiseTile<1, true>(a, n, c0, oh, ow);
}

// x copied with its rows widened to every column the taps reach, the
// padding columns zero, in x's layout with whole blocks (in the calling
// thread's scratch, valid until its next DirectConv): the tiles then read
// every tap without a bounds check. The copy
// costs a pass over x; tiles that masked the padding took a third more time
// at widths of 32.
DirectConvArgs WidthPadded(const DirectConvArgs& a) {
  const int64_t reach = (a.w_out - 1) * a.stride_w + (a.kw - 1) * a.dilation_w + 1;
  if (a.pad_l == 0 && reach <= a.w_in) return a;
  const ConvLayout& l = a.xl;
  const int64_t block = l.block, blocks = (a.c_in + block - 1) / block, width = reach;
  const ConvLayout p{block, a.h_in * width * block,         1, width * block,
                     block, blocks * a.h_in * width * block};
  thread_local ScratchBuffer into;
  float* dst = static_cast<float*>(into.Get(a.n * p.s_n * sizeof(float), "DirectConv"));
  const int64_t row = a.w_in * block, left = a.pad_l * block;
  ParallelFor(0, a.n * blocks * a.h_in, std::max<int64_t>(1, kSerialBytes / 4 / (width * block)),
              [&](int64_t lo, int64_t hi) {
                for (int64_t r = lo; r < hi; ++r) {
                  const int64_t h = r % a.h_in, cb = r / a.h_in % blocks, n = r / a.h_in / blocks;
                  const float* src = a.x + n * l.s_n + cb * l.s_block + h * l.s_h;
                  float* out = dst + r * width * block;
                  std::fill_n(out, left, 0.f);
                  std::copy_n(src, std::min(row, width * block - left), out + left);
                  std::fill(out + std::min(left + row, width * block), out + width * block, 0.f);
                }
              });
  DirectConvArgs padded = a;
  padded.x = dst;
  padded.xl = p;
  padded.w_in = width;
  padded.pad_l = 0;
  return padded;
}

// The layout DirectConvWeights packs w [M, C, kh, kw] into.
dnnl::memory::desc PackedDesc(const Tensor& w) {
  const int64_t blocks = (w.dim(0) + kLanes - 1) / kLanes;
  return dnnl::memory::desc({blocks, w.dim(2) * w.dim(3), w.dim(1), kLanes},
                            dnnl::memory::data_type::f32, dnnl::memory::format_tag::abcd);
}

}  // namespace

const float* DirectConvWeights(const Tensor& w) {
  const int64_t m = w.dim(0), c = w.dim(1), kh = w.dim(2), kw = w.dim(3);
  const int64_t blocks = (m + kLanes - 1) / kLanes;
  const dnnl::memory::desc want = PackedDesc(w);
  const auto pack = [&](const dnnl::memory& to) {
    float* dst = static_cast<float*>(to.get_data_handle());
    std::fill(dst, dst + blocks * kh * kw * c * kLanes, 0.f);
    const float* src = static_cast<const float*>(w.raw_data());
    const Strides& s = w.strides();
    for (int64_t o = 0; o < m; ++o)
      for (int64_t i = 0; i < kh; ++i)
        for (int64_t j = 0; j < kw; ++j)
          for (int64_t ci = 0; ci < c; ++ci)
            dst[(((o / kLanes) * kh + i) * kw + j) * c * kLanes + ci * kLanes + o % kLanes] =
                src[o * s[0] + ci * s[1] + i * s[2] + j * s[3]];
  };
  return static_cast<const float*>(
      dnnl_util::PackedWeights(w, dnnl_util::Desc(w), want, pack).get_data_handle());
}

void ForgetDirectConvWeights(const Tensor& w) { dnnl_util::ForgetPackedWeights(w, PackedDesc(w)); }

int64_t DirectConvLanes() { return kLanes; }

void DirectConv(const DirectConvArgs& args) {
  const int64_t blocks = (args.c_out + kLanes - 1) / kLanes, nb = blocks % 2 == 0 ? 2 : 1,
                groups = blocks / nb;
  // The bias padded to whole blocks (zeros without one).
  std::vector<float> bias(blocks * kLanes, 0.f);
  if (args.bias) std::copy(args.bias, args.bias + args.c_out, bias.begin());
  DirectConvArgs a = args.depthwise ? args : WidthPadded(args);
  a.bias = bias.data();
  if (a.depthwise) {
    const int64_t row = std::max<int64_t>(1, a.w_out * kLanes * a.kh * a.kw);
    ParallelFor(0, a.n * blocks * a.h_out, std::max<int64_t>(1, (int64_t{1} << 14) / row),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t r = lo; r < hi; ++r)
                    DepthwiseRow(a, r / a.h_out / blocks, r / a.h_out % blocks * kLanes,
                                 r % a.h_out);
                });
    return;
  }
  // A thread takes rows of at least 2^16 multiply-adds in all.
  const int64_t row_macs = std::max<int64_t>(1, a.w_out * nb * kLanes * a.c_in * a.kh * a.kw);
  const int64_t grain = std::max<int64_t>(1, (int64_t{1} << 16) / row_macs);
  const std::vector<int64_t> taps = RowTaps(a);
  ParallelFor(0, a.n * groups * a.h_out, grain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t oh = r % a.h_out, g = r / a.h_out % groups, n = r / a.h_out / groups;
      if (nb == 2)
        RowOf<2>(a, taps.data(), n, g * 2, oh);
      else
        RowOf<1>(a, taps.data(), n, g, oh);
    }
  });
}

}  // namespace singa::cpu
