// Uniform draws for the random ops (Bernoulli, RandomUniformLike). With a
// `seed` attribute the draws are those of numpy's legacy
// RandomState(seed) (MT19937 seeded by init_genrand, doubles from 53 bits
// of two 32-bit outputs), which the spec's reference uses, so seeded runs
// reproduce it; without one they come from the device's generator, so a
// captured graph draws anew on every replay.
#pragma once

#include <optional>
#include <random>

#include "singa/core/device.h"

namespace singa::ops {

class UniformSource {
 public:
  UniformSource(std::optional<float> seed, const Device& device) : device_(device) {
    if (seed) mt_.emplace(static_cast<uint32_t>(static_cast<int64_t>(*seed)));
  }
  // A double uniform in [0, 1).
  double Next() {
    if (!mt_) return static_cast<double>(device_.rng()() >> 11) * 0x1.0p-53;
    const uint64_t a = (*mt_)() >> 5, b = (*mt_)() >> 6;
    return (static_cast<double>(a) * 67108864.0 + static_cast<double>(b)) / 9007199254740992.0;
  }

 private:
  Device device_;
  std::optional<std::mt19937> mt_;
};

}  // namespace singa::ops
