#include "singa/core/dtype.h"

#include <array>
#include <bit>
#include <cmath>

namespace singa {

namespace {
struct Info {
  std::string_view name;
  size_t size;
};
constexpr std::array<Info, kNumDTypes> kInfo = {{
    {"undefined", 0},      {"float32", 4},    {"uint8", 1},
    {"int8", 1},           {"uint16", 2},     {"int16", 2},
    {"int32", 4},          {"int64", 8},      {"string", sizeof(std::string)},
    {"bool", 1},           {"float16", 2},    {"float64", 8},
    {"uint32", 4},         {"uint64", 8},     {"complex64", 8},
    {"complex128", 16},    {"bfloat16", 2},   {"float8e4m3fn", 1},
    {"float8e4m3fnuz", 1}, {"float8e5m2", 1}, {"float8e5m2fnuz", 1},
    {"uint4", 1},          {"int4", 1},       {"float4e2m1", 1},
    {"float8e8m0", 1},     {"uint2", 1},      {"int2", 1},
}};

const Info& InfoOf(DType dt) {
  auto i = static_cast<size_t>(dt);
  if (i >= kInfo.size()) throw DTypeError("unknown dtype code " + std::to_string(i));
  return kInfo[i];
}
}  // namespace

size_t SizeOf(DType dt) { return InfoOf(dt).size; }
std::string_view Name(DType dt) { return InfoOf(dt).name; }

DType DTypeFromName(std::string_view name) {
  for (size_t i = 1; i < kInfo.size(); ++i)
    if (kInfo[i].name == name) return static_cast<DType>(i);
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "half") return DType::kFloat16;
  throw DTypeError("unknown dtype name '" + std::string(name) + "'");
}

bool IsFloat(DType dt) {
  return dt == DType::kFloat32 || dt == DType::kFloat64 || dt == DType::kFloat16 ||
         dt == DType::kBFloat16;
}
bool IsInteger(DType dt) {
  switch (dt) {
    case DType::kInt8:
    case DType::kInt16:
    case DType::kInt32:
    case DType::kInt64:
    case DType::kUInt8:
    case DType::kUInt16:
    case DType::kUInt32:
    case DType::kUInt64:
      return true;
    default:
      return false;
  }
}
bool IsSigned(DType dt) {
  return IsFloat(dt) || dt == DType::kInt8 || dt == DType::kInt16 || dt == DType::kInt32 ||
         dt == DType::kInt64;
}
bool IsNumeric(DType dt) { return IsFloat(dt) || IsInteger(dt); }
bool IsComputable(DType dt) { return IsNumeric(dt) || dt == DType::kBool; }

// Round-to-nearest-even float32 -> binary16, with subnormals, inf and NaN.
uint16_t Half::FromFloat(float f) {
  uint32_t x = std::bit_cast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7fffffffu;
  if (absx >= 0x7f800000u)
    return static_cast<uint16_t>(sign | (absx > 0x7f800000u ? 0x7e00u : 0x7c00u));
  if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow -> inf
  if (absx < 0x38800000u) {  // subnormal half (or zero)
    // Scale by 2^24 through float arithmetic, which rounds to nearest even.
    float a = std::bit_cast<float>(absx) * 16777216.0f;
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(std::nearbyint(a)));
  }
  uint32_t mant_odd = (absx >> 13) & 1u;
  absx += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
  return static_cast<uint16_t>(sign | (absx >> 13));
}

float Half::ToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  if (exp == 0) {
    float v = static_cast<float>(mant) * (1.0f / 16777216.0f);
    return std::bit_cast<float>(std::bit_cast<uint32_t>(v) | sign);
  }
  if (exp == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mant << 13));
  return std::bit_cast<float>(sign | ((exp + 112) << 23) | (mant << 13));
}

}  // namespace singa
