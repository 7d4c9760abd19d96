// Encoding and decoding of the 8- and 4-bit element types that have no C++
// arithmetic type: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz), float4e2m1,
// int4 and uint4. Each is held one element per byte (the low bits for the
// 4-bit types). Kernels decode to float/int64, compute, and encode back.
//
//   uint8_t b = cpu::EncodeFloat8(DType::kFloat8E4M3FN, 500.0, /*saturate=*/true);  // 448
//   float f = cpu::DecodeFloat8(DType::kFloat8E4M3FN, b);                            // 448
//   uint8_t n = cpu::EncodeInt4(DType::kInt4, -3);                                    // 0x0d
#pragma once

#include <cstdint>

#include "singa/core/dtype.h"

namespace singa::cpu {

// float8*, float4e2m1.
bool IsSmallFloat(DType dt);
// float8*, float4e2m1, int4, uint4: the types held as raw bytes.
bool IsPacked(DType dt);

// The value of byte `b` of small-float type `dt` (exact in float).
float DecodeFloat8(DType dt, uint8_t b);
// `x` rounded to nearest even in small-float type `dt`. Out of range (and
// infinities) clamp to the largest finite value when `saturate`, else become
// infinity where the type has one (e5m2) and NaN otherwise, as the ONNX Cast
// spec tables say. float4e2m1 has neither infinity nor NaN: it always
// saturates, and NaN becomes -0 (what ml_dtypes does).
uint8_t EncodeFloat8(DType dt, double x, bool saturate);

// int4/uint4: the value of the low nibble, and the low nibble of `v` (higher
// bits are discarded, as Cast does for out-of-range integers).
inline int64_t DecodeInt4(DType dt, uint8_t b) {
  int64_t v = b & 0x0f;
  return dt == DType::kInt4 && v >= 8 ? v - 16 : v;
}
inline uint8_t EncodeInt4(DType, int64_t v) { return static_cast<uint8_t>(v & 0x0f); }

}  // namespace singa::cpu
