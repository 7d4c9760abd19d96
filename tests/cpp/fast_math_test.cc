// src/kernels/cpu/fast_math.h against libm in double over (-100, 100):
// every 4096th float of each sign (all 2.2 billion would take minutes).
#include "kernels/cpu/fast_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace singa::cpu {
namespace {

template <class F>
void ForFloats(F&& check) {
  const uint32_t end = std::bit_cast<uint32_t>(100.f);
  for (uint32_t bits = 0; bits < end; bits += 4096) {
    check(std::bit_cast<float>(bits));
    check(-std::bit_cast<float>(bits));
  }
}

TEST(FastMath, ExpIsWithinTwoUlpWhereTheResultIsANormalFloat) {
  double worst = 0;
  ForFloats([&](float x) {
    const double want = std::exp(double(x));
    if (want < 1.2e-38 || want > 3.4e38) return;
    const double ulp = std::ldexp(1.0, std::ilogb(want) - 23);
    worst = std::max(worst, std::abs(FastExp(x) - want) / ulp);
  });
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(FastExp(-1000.f), 0.f);
  EXPECT_EQ(FastExp(-std::numeric_limits<float>::infinity()), 0.f);
  EXPECT_FLOAT_EQ(FastExp(1000.f), FastExp(88.72283f));
  EXPECT_TRUE(std::isfinite(FastExp(1000.f)));
}

TEST(FastMath, SigmoidAndTanhAreWithin2e7AbsoluteAndRelative) {
  double sig_abs = 0, sig_rel = 0, tanh_abs = 0, tanh_rel = 0;
  ForFloats([&](float x) {
    const double s = 1 / (1 + std::exp(-double(x))), t = std::tanh(double(x));
    const double ds = std::abs(FastSigmoid(x) - s), dt = std::abs(FastTanh(x) - t);
    sig_abs = std::max(sig_abs, ds);
    if (s > 1e-30) sig_rel = std::max(sig_rel, ds / s);
    tanh_abs = std::max(tanh_abs, dt);
    if (t != 0) tanh_rel = std::max(tanh_rel, dt / std::abs(t));
  });
  EXPECT_LE(sig_abs, 2e-7);
  EXPECT_LE(sig_rel, 2e-7);
  EXPECT_LE(tanh_abs, 2e-7);
  EXPECT_LE(tanh_rel, 2e-7);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(FastExp(nan)));
  EXPECT_TRUE(std::isnan(FastSigmoid(nan)));
  EXPECT_TRUE(std::isnan(FastTanh(nan)));
  EXPECT_EQ(FastTanh(0.f), 0.f);
  EXPECT_EQ(FastTanh(50.f), 1.f);
  EXPECT_EQ(FastTanh(-50.f), -1.f);
  EXPECT_LT(FastSigmoid(-200.f), 1e-37f);
  EXPECT_EQ(FastSigmoid(200.f), 1.f);
  EXPECT_EQ(FastSigmoid(200.f), 1.f);
}

TEST(FastMath, TheVectorExpAndSigmoidAreTheScalarOnesLaneByLane) {
  using V = float __attribute__((vector_size(4 * sizeof(float))));
  constexpr size_t kLanes = sizeof(V) / sizeof(float);
  const auto same = [](float a, float b) {
    return std::isnan(a) ? std::isnan(b) : std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b);
  };
  const float inf = std::numeric_limits<float>::infinity();
  const float specials[] = {0.f,       -0.f,       1000.f,
                            -1000.f,   inf,        -inf,
                            88.72283f, -87.33654f, std::numeric_limits<float>::quiet_NaN()};
  std::vector<float> xs(std::begin(specials), std::end(specials));
  ForFloats([&](float x) { xs.push_back(x); });
  while (xs.size() % kLanes) xs.push_back(0.f);
  for (size_t i = 0; i < xs.size(); i += kLanes) {
    V v;
    std::memcpy(&v, &xs[i], sizeof v);
    const V e = FastExpVec(v), s = FastSigmoidVec(v);
    for (size_t l = 0; l < kLanes; ++l) {
      const float x = xs[i + l];
      ASSERT_TRUE(same(e[l], FastExp(x))) << x << ": " << e[l] << " against " << FastExp(x);
      ASSERT_TRUE(same(s[l], FastSigmoid(x))) << x << ": " << s[l] << " against " << FastSigmoid(x);
    }
  }
}

TEST(FastMath, ErfIsWithin4e7RelativeWhereTheResultIsANormalFloat) {
  double worst = 0, subnormal = 0;
  ForFloats([&](float x) {
    const double want = std::erf(double(x)), err = std::abs(FastErf(x) - want);
    if (std::abs(want) >= std::numeric_limits<float>::min())
      worst = std::max(worst, err / std::abs(want));
    else
      subnormal = std::max(subnormal, err);
  });
  EXPECT_LE(worst, 4e-7);
  EXPECT_LE(subnormal, 2 * std::numeric_limits<float>::denorm_min());
  EXPECT_TRUE(std::isnan(FastErf(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_EQ(FastErf(std::numeric_limits<float>::infinity()), 1.f);
  EXPECT_EQ(FastErf(-std::numeric_limits<float>::infinity()), -1.f);
  EXPECT_EQ(FastErf(0.f), 0.f);
  EXPECT_EQ(FastErf(3.95f), 1.f);
}

}  // namespace
}  // namespace singa::cpu
