// Encoding and decoding of the 8-, 4- and 2-bit element types that have no
// C++ arithmetic type: float8 (e4m3fn, e4m3fnuz, e5m2, e5m2fnuz, e8m0),
// float4e2m1, int4, uint4, int2 and uint2. Each is held one element per byte
// (the low bits for the 4- and 2-bit types). Kernels decode to float/int64,
// compute, and encode back.
//
//   uint8_t b = cpu::EncodeFloat8(DType::kFloat8E4M3FN, 500.0, /*saturate=*/true);  // 448
//   float f = cpu::DecodeFloat8(DType::kFloat8E4M3FN, b);                            // 448
//   uint8_t n = cpu::EncodeSmallInt(DType::kInt4, -3);                               // 0x0d
//   uint8_t e = cpu::EncodeE8M0(0.3f, true, cpu::E8M0Round::kUp);                    // 0.5
#pragma once

#include <cstdint>

#include "singa/core/dtype.h"

namespace singa::cpu {

// float8* (e8m0 included), float4e2m1.
bool IsSmallFloat(DType dt);
// int4, uint4, int2, uint2.
bool IsSmallInt(DType dt);
// IsSmallFloat || IsSmallInt: the types held as raw bytes.
bool IsPacked(DType dt);

// The value of byte `b` of small-float type `dt` (exact in float).
float DecodeFloat8(DType dt, uint8_t b);
// `x` rounded to nearest even in small-float type `dt`. Out of range (and
// infinities) clamp to the largest finite value when `saturate`, else become
// infinity where the type has one (e5m2) and NaN otherwise, as the ONNX Cast
// spec tables say. float4e2m1 has neither infinity nor NaN: it always
// saturates, and NaN becomes -0 (what ml_dtypes does). float8e8m0 is
// encoded as EncodeE8M0(x, saturate, E8M0Round::kUp), Cast's default.
uint8_t EncodeFloat8(DType dt, double x, bool saturate);

// float8e8m0 (a biased power-of-two exponent, no sign, no zero; 0xff is NaN):
// Cast's round_mode. kUp rounds a value between two powers of two away from
// zero, kDown towards zero, kNearest to the nearer one (ties up).
enum class E8M0Round { kUp, kDown, kNearest };
// `x` (as float32) in float8e8m0, bit for bit as onnx's reference
// (numpy_helper.to_float8e8m0): the sign is ignored, infinities and NaN
// become NaN, and a rounding that would pass the largest exponent gives NaN
// unless `saturate`.
uint8_t EncodeE8M0(float x, bool saturate, E8M0Round mode);

// int4/uint4/int2/uint2: the value of the low 4 (or 2) bits, and the low
// bits of `v` (higher bits are discarded, as Cast does for out-of-range
// integers).
inline int64_t DecodeSmallInt(DType dt, uint8_t b) {
  const bool two = dt == DType::kInt2 || dt == DType::kUInt2;
  const int64_t v = b & (two ? 0x03 : 0x0f);
  const int64_t half = two ? 2 : 8;
  return (dt == DType::kInt4 || dt == DType::kInt2) && v >= half ? v - 2 * half : v;
}
inline uint8_t EncodeSmallInt(DType dt, int64_t v) {
  const bool two = dt == DType::kInt2 || dt == DType::kUInt2;
  return static_cast<uint8_t>(v & (two ? 0x03 : 0x0f));
}

}  // namespace singa::cpu
