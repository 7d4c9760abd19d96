// The activations the fused ops (FusedConv, FusedGemm) apply to their
// float32 results in place (cpu::Activate): their reference kernels, and
// the fast kernels where oneDNN took no post-op.
#pragma once

#include <cstdint>
#include <string_view>

#include "kernels/cpu/activation.h"

namespace singa::ops {

// `act`: "" (none), Relu, LeakyRelu (alpha), Clip (alpha, beta: the bounds),
// Swish (x * sigmoid(x)) or HardSwish (x * clip(x / 6 + 1/2, 0, 1)).
inline cpu::Activation ParseFusedActivation(std::string_view act) {
  using A = cpu::Activation;
  return act == "Relu"        ? A::kRelu
         : act == "LeakyRelu" ? A::kLeakyRelu
         : act == "Clip"      ? A::kClip
         : act == "Swish"     ? A::kSwish
         : act == "HardSwish" ? A::kHardSwish
                              : A::kNone;
}

inline void ApplyFusedActivation(float* v, int64_t n, std::string_view act, float alpha,
                                 float beta) {
  cpu::ActivateAll(v, n, ParseFusedActivation(act), alpha, beta);
}

}  // namespace singa::ops
