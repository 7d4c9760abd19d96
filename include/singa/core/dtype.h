// DType: the element type of a Tensor. The enumerator values are ONNX's
// TensorProto.DataType codes, so import and export need no mapping table.
//
//   DType dt = DType::kFloat16;
//   SizeOf(dt);                 // 2
//   Name(dt);                   // "float16"
//   VisitDType(dt, [&]<class T>(Tag<T>) { ... T is singa::Half here ... });
//
// Every ONNX element type up to int2 exists. Sub-byte types (int4, uint4,
// float4e2m1, int2, uint2) are held one element per byte in memory; packing
// is a file-format concern only.
// Strings are held as std::string objects.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "singa/core/error.h"

namespace singa {

enum class DType : uint8_t {
  kUndefined = 0,
  kFloat32 = 1,
  kUInt8 = 2,
  kInt8 = 3,
  kUInt16 = 4,
  kInt16 = 5,
  kInt32 = 6,
  kInt64 = 7,
  kString = 8,
  kBool = 9,
  kFloat16 = 10,
  kFloat64 = 11,
  kUInt32 = 12,
  kUInt64 = 13,
  kComplex64 = 14,
  kComplex128 = 15,
  kBFloat16 = 16,
  kFloat8E4M3FN = 17,
  kFloat8E4M3FNUZ = 18,
  kFloat8E5M2 = 19,
  kFloat8E5M2FNUZ = 20,
  kUInt4 = 21,
  kInt4 = 22,
  kFloat4E2M1 = 23,
  kFloat8E8M0 = 24,
  kUInt2 = 25,
  kInt2 = 26,
};
inline constexpr int kNumDTypes = 27;

// IEEE binary16, converted through float. Arithmetic happens in float.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  Half(float f) : bits(FromFloat(f)) {}             // NOLINT: implicit like a float
  operator float() const { return ToFloat(bits); }  // NOLINT
  static uint16_t FromFloat(float f);
  static float ToFloat(uint16_t h);
};

// bfloat16: the top half of a float32, rounded to nearest even.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  BFloat16(float f) : bits(FromFloat(f)) {}  // NOLINT
  operator float() const {                   // NOLINT
    uint32_t u = static_cast<uint32_t>(bits) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  static uint16_t FromFloat(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // NaN
    u += 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>(u >> 16);
  }
};

template <class T>
struct Tag {
  using type = T;
};

// C++ element type of a DType (for the types that have kernels).
template <DType D>
struct CType;
#define SINGA_CTYPE(D, T)  \
  template <>              \
  struct CType<DType::D> { \
    using type = T;        \
  }
SINGA_CTYPE(kFloat32, float);
SINGA_CTYPE(kFloat64, double);
SINGA_CTYPE(kFloat16, Half);
SINGA_CTYPE(kBFloat16, BFloat16);
SINGA_CTYPE(kInt8, int8_t);
SINGA_CTYPE(kInt16, int16_t);
SINGA_CTYPE(kInt32, int32_t);
SINGA_CTYPE(kInt64, int64_t);
SINGA_CTYPE(kUInt8, uint8_t);
SINGA_CTYPE(kUInt16, uint16_t);
SINGA_CTYPE(kUInt32, uint32_t);
SINGA_CTYPE(kUInt64, uint64_t);
SINGA_CTYPE(kBool, bool);
SINGA_CTYPE(kString, std::string);
#undef SINGA_CTYPE

template <class T>
constexpr DType DTypeOf();
template <>
constexpr DType DTypeOf<float>() {
  return DType::kFloat32;
}
template <>
constexpr DType DTypeOf<double>() {
  return DType::kFloat64;
}
template <>
constexpr DType DTypeOf<Half>() {
  return DType::kFloat16;
}
template <>
constexpr DType DTypeOf<BFloat16>() {
  return DType::kBFloat16;
}
template <>
constexpr DType DTypeOf<int8_t>() {
  return DType::kInt8;
}
template <>
constexpr DType DTypeOf<int16_t>() {
  return DType::kInt16;
}
template <>
constexpr DType DTypeOf<int32_t>() {
  return DType::kInt32;
}
template <>
constexpr DType DTypeOf<int64_t>() {
  return DType::kInt64;
}
template <>
constexpr DType DTypeOf<uint8_t>() {
  return DType::kUInt8;
}
template <>
constexpr DType DTypeOf<uint16_t>() {
  return DType::kUInt16;
}
template <>
constexpr DType DTypeOf<uint32_t>() {
  return DType::kUInt32;
}
template <>
constexpr DType DTypeOf<uint64_t>() {
  return DType::kUInt64;
}
template <>
constexpr DType DTypeOf<bool>() {
  return DType::kBool;
}
template <>
constexpr DType DTypeOf<std::string>() {
  return DType::kString;
}

// Bytes per element in memory (sub-byte types take one byte).
size_t SizeOf(DType dt);
// numpy-style lower-case name: "float32", "bfloat16", "float8e4m3fn", ...
std::string_view Name(DType dt);
// Inverse of Name; throws DTypeError for an unknown name.
DType DTypeFromName(std::string_view name);
bool IsFloat(DType dt);       // float16/bfloat16/float32/float64 (the computable floats)
bool IsInteger(DType dt);     // signed or unsigned 8..64-bit integers
bool IsSigned(DType dt);      // signed integers and floats
bool IsNumeric(DType dt);     // IsFloat || IsInteger
bool IsComputable(DType dt);  // has a C++ element type (CType) and kernels may use it

// Named groups for op type constraints. Inline variables: each is initialized
// before any op registration that follows this header in a file, whatever the
// link order.
namespace dtypes {
inline const std::vector<DType> kFloats = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                           DType::kFloat64};
inline const std::vector<DType> kSignedInts = {DType::kInt8, DType::kInt16, DType::kInt32,
                                               DType::kInt64};
inline const std::vector<DType> kUnsignedInts = {DType::kUInt8, DType::kUInt16, DType::kUInt32,
                                                 DType::kUInt64};
inline const std::vector<DType> kInts = {DType::kInt8,   DType::kInt16, DType::kInt32,
                                         DType::kInt64,  DType::kUInt8, DType::kUInt16,
                                         DType::kUInt32, DType::kUInt64};
inline const std::vector<DType> kNumeric = {DType::kFloat16, DType::kBFloat16, DType::kFloat32,
                                            DType::kFloat64, DType::kInt8,     DType::kInt16,
                                            DType::kInt32,   DType::kInt64,    DType::kUInt8,
                                            DType::kUInt16,  DType::kUInt32,   DType::kUInt64};
inline const std::vector<DType> kSignedNumeric = {
    DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64,
    DType::kInt8,    DType::kInt16,    DType::kInt32,   DType::kInt64};
inline const std::vector<DType> kAllButString = [] {
  auto v = kNumeric;
  v.push_back(DType::kBool);
  return v;
}();
inline const std::vector<DType> kAll = [] {
  auto v = kAllButString;
  v.push_back(DType::kString);
  return v;
}();
}  // namespace dtypes

// Calls f(Tag<T>{}) with T the C++ type of numeric `dt` (no bool). Throws
// DTypeError (naming `what`) for any other dtype. This and VisitDType are the
// one place where kernels turn a runtime dtype into a template argument.
template <class F>
decltype(auto) VisitNumeric(DType dt, F&& f, std::string_view what = "") {
  switch (dt) {
    case DType::kFloat32:
      return f(Tag<float>{});
    case DType::kFloat64:
      return f(Tag<double>{});
    case DType::kFloat16:
      return f(Tag<Half>{});
    case DType::kBFloat16:
      return f(Tag<BFloat16>{});
    case DType::kInt8:
      return f(Tag<int8_t>{});
    case DType::kInt16:
      return f(Tag<int16_t>{});
    case DType::kInt32:
      return f(Tag<int32_t>{});
    case DType::kInt64:
      return f(Tag<int64_t>{});
    case DType::kUInt8:
      return f(Tag<uint8_t>{});
    case DType::kUInt16:
      return f(Tag<uint16_t>{});
    case DType::kUInt32:
      return f(Tag<uint32_t>{});
    case DType::kUInt64:
      return f(Tag<uint64_t>{});
    default:
      throw DTypeError(std::string(what) + (what.empty() ? "" : ": ") + "no kernel for dtype " +
                       std::string(Name(dt)));
  }
}

// Same, for numeric types and bool.
template <class F>
decltype(auto) VisitDType(DType dt, F&& f, std::string_view what = "") {
  if (dt == DType::kBool) return f(Tag<bool>{});
  return VisitNumeric(dt, std::forward<F>(f), what);
}

// Same, for float types only.
template <class F>
decltype(auto) VisitFloat(DType dt, F&& f, std::string_view what = "") {
  switch (dt) {
    case DType::kFloat32:
      return f(Tag<float>{});
    case DType::kFloat64:
      return f(Tag<double>{});
    case DType::kFloat16:
      return f(Tag<Half>{});
    case DType::kBFloat16:
      return f(Tag<BFloat16>{});
    default:
      throw DTypeError(std::string(what) + (what.empty() ? "" : ": ") +
                       "expects a float dtype, got " + std::string(Name(dt)));
  }
}

// The type arithmetic on T happens in: float for the 16-bit floats, T otherwise.
template <class T>
struct AccType {
  using type = T;
};
template <>
struct AccType<Half> {
  using type = float;
};
template <>
struct AccType<BFloat16> {
  using type = float;
};
template <class T>
using Acc = typename AccType<T>::type;

}  // namespace singa
