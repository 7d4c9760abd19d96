// Small-float codecs: one generic encoder/decoder parameterized by the
// format's exponent/mantissa widths, bias and special-value rules.
#include "kernels/cpu/float8.h"

#include <array>
#include <bit>
#include <cmath>
#include <limits>

namespace singa::cpu {

namespace {

enum class Specials {
  kFn,    // no infinity; NaN is S.1111.111 (e4m3fn)
  kFnuz,  // no infinity, no -0; NaN is 1.0000.000
  kIeee,  // infinity and NaN as IEEE (e5m2)
  kNone,  // no infinity, no NaN (float4e2m1)
};

struct Format {
  int ebits, mbits, bias;
  Specials specials;
  double max;  // largest finite value
  int bits() const { return 1 + ebits + mbits; }
};

const Format& FormatOf(DType dt) {
  static const Format e4m3fn{4, 3, 7, Specials::kFn, 448.0};
  static const Format e4m3fnuz{4, 3, 8, Specials::kFnuz, 240.0};
  static const Format e5m2{5, 2, 15, Specials::kIeee, 57344.0};
  static const Format e5m2fnuz{5, 2, 16, Specials::kFnuz, 57344.0};
  static const Format e2m1{2, 1, 1, Specials::kNone, 6.0};
  switch (dt) {
    case DType::kFloat8E4M3FN:
      return e4m3fn;
    case DType::kFloat8E4M3FNUZ:
      return e4m3fnuz;
    case DType::kFloat8E5M2:
      return e5m2;
    case DType::kFloat8E5M2FNUZ:
      return e5m2fnuz;
    case DType::kFloat4E2M1:
      return e2m1;
    default:
      throw DTypeError("not a small float dtype: " + std::string(Name(dt)));
  }
}

float Decode(const Format& f, uint8_t b) {
  const int n = f.bits();
  const bool neg = (b >> (n - 1)) & 1;
  const int e = (b >> f.mbits) & ((1 << f.ebits) - 1);
  const int m = b & ((1 << f.mbits) - 1);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  if (f.specials == Specials::kFnuz && neg && e == 0 && m == 0) return nan;
  if (f.specials == Specials::kFn && e == (1 << f.ebits) - 1 && m == (1 << f.mbits) - 1) return nan;
  if (f.specials == Specials::kIeee && e == (1 << f.ebits) - 1)
    return m ? nan : (neg ? -INFINITY : INFINITY);
  double v = e == 0 ? std::ldexp(m, 1 - f.bias - f.mbits)
                    : std::ldexp(1.0 + std::ldexp(m, -f.mbits), e - f.bias);
  return static_cast<float>(neg ? -v : v);
}

// Bits of the representable magnitude `v` (0 < v <= max) with sign `neg`.
uint8_t Pack(const Format& f, bool neg, double v) {
  const int emin = 1 - f.bias;
  int e = 0, m;
  if (v < std::ldexp(1.0, emin)) {
    m = static_cast<int>(std::ldexp(v, f.mbits - emin));
  } else {
    int exp2;
    double frac = std::frexp(v, &exp2);  // v = frac * 2^exp2, frac in [0.5, 1)
    e = exp2 - 1 + f.bias;
    m = static_cast<int>(std::ldexp(2.0 * frac - 1.0, f.mbits));
  }
  return static_cast<uint8_t>((neg ? 1 << (f.bits() - 1) : 0) | (e << f.mbits) | m);
}

uint8_t NaNBits(const Format& f, bool neg) {
  const uint8_t sign = neg ? static_cast<uint8_t>(1 << (f.bits() - 1)) : 0;
  switch (f.specials) {
    case Specials::kFn:
      return sign | 0x7f;
    case Specials::kFnuz:
      return 0x80;
    case Specials::kIeee:
      return sign | 0x7e;
    case Specials::kNone:
      return 0x08;  // -0, as ml_dtypes
  }
  return 0;
}

uint8_t Overflow(const Format& f, bool neg, bool saturate) {
  if (saturate || f.specials == Specials::kNone) return Pack(f, neg, f.max);
  if (f.specials == Specials::kIeee)
    return static_cast<uint8_t>((neg ? 0x80 : 0) | (((1 << f.ebits) - 1) << f.mbits));
  return NaNBits(f, neg);
}

uint8_t Encode(const Format& f, double x, bool saturate) {
  const bool neg = std::signbit(x);
  if (std::isnan(x)) return NaNBits(f, neg);
  const double a = std::fabs(x);
  if (std::isinf(a)) return Overflow(f, neg, saturate);
  const uint8_t zero = (neg && f.specials != Specials::kFnuz) ? 1 << (f.bits() - 1) : 0;
  if (a == 0) return zero;
  int exp2;
  std::frexp(a, &exp2);
  // Quantum of a's binade (subnormals share the smallest normal binade's):
  // scaling by a power of two is exact, so one nearbyint rounds to nearest even.
  const int q = std::max(exp2 - 1, 1 - f.bias) - f.mbits;
  const double v = std::ldexp(std::nearbyint(std::ldexp(a, -q)), q);
  if (v == 0) return zero;
  if (v > f.max) return Overflow(f, neg, saturate);
  return Pack(f, neg, v);
}

using Table = std::array<float, 256>;
Table MakeTable(DType dt) {
  Table t;
  if (dt == DType::kFloat8E8M0) {  // 2^(b - 127); 2^-127 is a float32 subnormal
    for (int b = 0; b < 255; ++b) t[b] = std::ldexp(1.0f, b - 127);
    t[255] = std::numeric_limits<float>::quiet_NaN();
    return t;
  }
  const Format& f = FormatOf(dt);
  for (int b = 0; b < 256; ++b) t[b] = Decode(f, static_cast<uint8_t>(b & ((1 << f.bits()) - 1)));
  return t;
}

}  // namespace

bool IsSmallFloat(DType dt) {
  switch (dt) {
    case DType::kFloat8E4M3FN:
    case DType::kFloat8E4M3FNUZ:
    case DType::kFloat8E5M2:
    case DType::kFloat8E5M2FNUZ:
    case DType::kFloat4E2M1:
    case DType::kFloat8E8M0:
      return true;
    default:
      return false;
  }
}

bool IsSmallInt(DType dt) {
  return dt == DType::kInt4 || dt == DType::kUInt4 || dt == DType::kInt2 || dt == DType::kUInt2;
}

bool IsPacked(DType dt) { return IsSmallFloat(dt) || IsSmallInt(dt); }

float DecodeFloat8(DType dt, uint8_t b) {
  static const Table e4m3fn = MakeTable(DType::kFloat8E4M3FN);
  static const Table e4m3fnuz = MakeTable(DType::kFloat8E4M3FNUZ);
  static const Table e5m2 = MakeTable(DType::kFloat8E5M2);
  static const Table e5m2fnuz = MakeTable(DType::kFloat8E5M2FNUZ);
  static const Table e2m1 = MakeTable(DType::kFloat4E2M1);
  static const Table e8m0 = MakeTable(DType::kFloat8E8M0);
  switch (dt) {
    case DType::kFloat8E4M3FN:
      return e4m3fn[b];
    case DType::kFloat8E4M3FNUZ:
      return e4m3fnuz[b];
    case DType::kFloat8E5M2:
      return e5m2[b];
    case DType::kFloat8E5M2FNUZ:
      return e5m2fnuz[b];
    case DType::kFloat4E2M1:
      return e2m1[b];
    case DType::kFloat8E8M0:
      return e8m0[b];
    default:
      throw DTypeError("not a small float dtype: " + std::string(Name(dt)));
  }
}

uint8_t EncodeFloat8(DType dt, double x, bool saturate) {
  if (dt == DType::kFloat8E8M0) return EncodeE8M0(static_cast<float>(x), saturate, E8M0Round::kUp);
  return Encode(FormatOf(dt), x, saturate);
}

// The float32 exponent field is the e8m0 code of the value rounded down;
// the mantissa bits decide whether to step up one code.
uint8_t EncodeE8M0(float x, bool saturate, E8M0Round mode) {
  const uint32_t bits = std::bit_cast<uint32_t>(x);
  const uint32_t e = (bits >> 23) & 0xffu;
  if (e == 0xffu) return 0xff;  // infinity, NaN
  bool up = false;
  switch (mode) {
    case E8M0Round::kUp:
      up = (bits & 0x7fffffu) != 0;
      break;
    case E8M0Round::kDown:
      break;
    case E8M0Round::kNearest: {
      // NOTE: as the reference: guard bit set, and any lower bit or a normal
      // value (lsb = exponent > 0), so a subnormal tie rounds down.
      const bool guard = bits & 0x400000u, round = bits & 0x200000u, sticky = bits & 0x1fffffu;
      up = guard && (round || sticky || e > 0);
      break;
    }
  }
  if (up && saturate && e == 0xfeu) up = false;
  return static_cast<uint8_t>(e + (up ? 1 : 0));
}

}  // namespace singa::cpu
