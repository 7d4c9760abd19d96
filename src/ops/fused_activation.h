// The activations the fused ops (FusedConv, FusedGemm) apply to their
// float32 results in place, as loops: their reference kernels, and the
// fast kernels where oneDNN took no post-op.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string_view>

namespace singa::ops {

// `act`: "" (none), Relu, LeakyRelu (alpha), Clip (alpha, beta: the bounds),
// Swish (x * sigmoid(x)) or HardSwish (x * clip(x / 6 + 1/2, 0, 1)).
inline void ApplyFusedActivation(float* v, int64_t n, std::string_view act, float alpha,
                                 float beta) {
  if (act == "Relu")
    for (int64_t i = 0; i < n; ++i) v[i] = std::max(v[i], 0.f);
  else if (act == "LeakyRelu")
    for (int64_t i = 0; i < n; ++i) v[i] = v[i] < 0 ? alpha * v[i] : v[i];
  else if (act == "Clip")
    for (int64_t i = 0; i < n; ++i) v[i] = std::min(std::max(v[i], alpha), beta);
  else if (act == "Swish")
    for (int64_t i = 0; i < n; ++i) v[i] = v[i] / (1.f + std::exp(-v[i]));
  else if (act == "HardSwish")
    for (int64_t i = 0; i < n; ++i) v[i] *= std::min(std::max(v[i] / 6.f + 0.5f, 0.f), 1.f);
}

}  // namespace singa::ops
