// What the CPU kernels report about this machine, for code above the ops
// (the Python binding, tools) that must not see oneDNN or the kernels'
// private headers.
//
//   int64_t block = singa::cpu::ChannelBlock();  // 16 with AVX-512, else 8
//   // FusedConv's `blocked` tensors are nChw<block>c when C % block == 0.
#pragma once

#include <cstdint>

namespace singa::cpu {

// The channel block of oneDNN's fast blocked activation layouts on this
// CPU: 16 (nC[d][h]w16c) with AVX-512, else 8 (nC[d][h]w8c, AVX2). oneDNN
// has no optimized convolution for a block the ISA's vectors do not fit.
int64_t ChannelBlock();

}  // namespace singa::cpu
