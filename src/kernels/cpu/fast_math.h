// Float exp, sigmoid, tanh and erf written without calls or branches, so that a
// loop over an array of them compiles to vector code (libm's expf and tanhf
// are one scalar call per element; these are always inlined, since a call
// left in a loop keeps it scalar). Errors against libm in double: exp
// within 2 ulp where its result is a normal float, sigmoid and tanh within
// 2e-7 absolute and relative, erf within 4e-7 relative (tests/cpp/fast_math_test.cc
// checks them).
#pragma once

#include <bit>
#include <cstdint>

namespace singa::cpu {

// e^(x - n ln2) for |x - n ln2| <= ln2 / 2, on a float or a vector of them
// (FastExp and FastExpVec, the same steps in each lane): ln2 in two parts,
// the first exact, and the degree-6 Taylor-like (minimax) polynomial.
template <class T>
[[gnu::always_inline]] inline T ExpReduced(T x, T n) {
  T r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  T p = T{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.0f;
}

// e^x: x = n ln2 + r with |r| <= ln2 / 2, e^r by ExpReduced, 2^n by building
// the exponent bits. 0 below -87.3 (where e^x is no longer a normal float: a
// softmax's -inf stays 0), 3.4e38 from 88.7 on.
[[gnu::always_inline]] inline float FastExp(float in) {
  const bool zero = in < -87.33654f, nan = in != in;
  // A NaN goes through as 0 (converting it to an int is undefined) and
  // comes out as NaN.
  const float x = zero ? -87.33654f : (in > 88.72283f ? 88.72283f : (nan ? 0.0f : in));
  const float n = __builtin_rintf(x * 1.44269504f);
  const float p = ExpReduced(x, n);
  // 2^n split in two halves keeps e^88.7 (n = 128) representable.
  const int32_t e = static_cast<int32_t>(n);
  const float half = std::bit_cast<float>((e / 2 + 127) << 23);
  const float rest = std::bit_cast<float>((e - e / 2 + 127) << 23);
  return nan ? in : (zero ? 0.0f : p * half * rest);
}

[[gnu::always_inline]] inline float FastSigmoid(float x) { return 1.0f / (1.0f + FastExp(-x)); }

// FastExp's steps on a vector of floats (GCC vector extensions), lane by
// lane the same result: a loop of FastExp compiles to vector code, but a
// kernel that holds its results in registers (DirectConv's epilogue) calls
// it on one vector. n is rounded by adding and subtracting 1.5 * 2^23
// (|x| log2 e < 2^22 here), which rounds to nearest even as rintf does.
template <class V>
[[gnu::always_inline]] inline V FastExpVec(V in) {
  using I = decltype(in < in);  // the signed int vector of V's lanes
  const V lo = V{} - 87.33654f, hi = V{} + 88.72283f;
  const I zero = in < lo, nan = in != in;
  const V x = zero ? lo : (in > hi ? hi : (nan ? V{} : in));
  const V n = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
  const V p = ExpReduced(x, n);
  const I e = __builtin_convertvector(n, I);
  const V half = std::bit_cast<V>((e / 2 + 127) << 23);
  const V rest = std::bit_cast<V>((e - e / 2 + 127) << 23);
  return nan ? in : (zero ? V{} : p * half * rest);
}

template <class V>
[[gnu::always_inline]] inline V FastSigmoidVec(V x) {
  return 1.0f / (1.0f + FastExpVec(-x));
}

// tanh: an odd polynomial below |x| = 0.625, where 1 - 2 / (e^2|x| + 1)
// would lose the small result's digits; above, that formula, which is +-1 from 10 on.
[[gnu::always_inline]] inline float FastTanh(float x) {
  const float a = x < 0 ? -x : x;
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = p * z * x + x;
  const float big = 1.0f - 2.0f / (FastExp(2.0f * (a > 10.0f ? 10.0f : a)) + 1.0f);
  return a < 0.625f ? small : (x < 0 ? -big : big);
}

// erf: x P(x^2) / Q(x^2), P and Q of degree 5, a rational fit of erf(x) / x
// over [0, 3.95] (by iterated weighted least squares on relative error:
// 2.2e-7 in double, 3e-7 evaluated in float); +-1 from 3.95 on, where erf
// rounds to 1 in float.
[[gnu::always_inline]] inline float FastErf(float in) {
  const float x = in > 3.95f ? 3.95f : (in < -3.95f ? -3.95f : in);
  const float t = x * x;
  float p = 2.0262196e-06f;
  p = p * t + 2.8468305e-04f;
  p = p * t + 3.8074022e-03f;
  p = p * t + 5.2873142e-02f;
  p = p * t + 1.9153094e-01f;
  p = p * t + 1.1283791e+00f;
  float q = 3.7834783e-05f;
  q = q * t + 1.1705647e-03f;
  q = q * t + 1.5053558e-02f;
  q = q * t + 1.1455185e-01f;
  q = q * t + 5.0307256e-01f;
  q = q * t + 1.0f;
  const float r = x * p / q;
  return r > 1.0f ? 1.0f : (r < -1.0f ? -1.0f : r);
}

}  // namespace singa::cpu
