// A float32 2-D convolution, ungrouped or depthwise, computed straight from
// the layouts a plan holds (NCHW, channel-blocked nChw<B>c or channels-last, for the input
// and the output alike), with loops that are the same code for every shape. A oneDNN convolution
// generates its kernel for each shape it is created for (about 0.2 ms for
// a CRNN's 3x3 layer): a model called on inputs of ever new sizes runs its
// new shapes here until a shape has run often enough to pay for a oneDNN
// primitive (ops/conv.cc).
#pragma once

#include <cstdint>

#include "kernels/cpu/activation.h"
#include "singa/core/tensor.h"

namespace singa::cpu {

// Where element (c, h, w) of one image is: (c / block) * s_block +
// (c % block) * s_inner + h * s_h + w * s_w floats from the image's start,
// the images s_n apart. A block's row (its channels over the columns) is
// dense: block 1 and s_w 1 (NCHW), or s_inner 1 and s_w = block (nChw<B>c,
// channels-last).
struct ConvLayout {
  int64_t block, s_block, s_inner, s_h, s_w, s_n;
};

struct DirectConvArgs {
  const float* x;
  ConvLayout xl;
  int64_t n, c_in, h_in, w_in;
  // w packed by DirectConvWeights; bias [c_out] or null.
  const float* w;
  const float* bias;
  // y and z (added to the result before the epilogue; may be null), both
  // in layout yl.
  float* y;
  const float* z;
  ConvLayout yl;
  int64_t c_out, h_out, w_out;
  int64_t kh, kw, stride_h, stride_w, dilation_h, dilation_w, pad_t, pad_l;
  // Depthwise (group = c_in = c_out, w [C, 1, kh, kw]): x's and y's blocks
  // are multiples of DirectConvLanes() with their channels adjacent.
  bool depthwise;
  // Applied to the results after z.
  Activation act;
  float alpha, beta;
};

// w [M, C, kh, kw] (float32) packed for DirectConv (blocks of the output
// channels one vector wide, the last one padded with zeros), kept per
// weight block and version as PanelWeights' are.
const float* DirectConvWeights(const Tensor& w);
// Drops w's packed copy (a convolution that stopped computing in DirectConv).
void ForgetDirectConvWeights(const Tensor& w);
// The channels DirectConv computes in one vector (16 with AVX-512, else 8).
int64_t DirectConvLanes();
void DirectConv(const DirectConvArgs& a);

}  // namespace singa::cpu
