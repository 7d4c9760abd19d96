// The activations fused into a convolution's or a Gemm's epilogue
// (FusedConv, FusedGemm), one expression for a float and for a vector of
// them (GCC vector extensions): a select per element, so the loops over
// arrays and the kernels that apply them to registers compile to vector
// code. Swish's sigmoid is cpu::FastSigmoid, within a few ulp of std::exp's.
#pragma once

#include <cstdint>

#include "kernels/cpu/fast_math.h"

namespace singa::cpu {

// Relu, LeakyRelu (alpha), Clip (alpha, beta: the bounds), Swish
// (x * sigmoid(x)), HardSwish (x * clip(x / 6 + 1/2, 0, 1)).
enum class Activation { kNone, kRelu, kLeakyRelu, kClip, kSwish, kHardSwish };

template <class V>
inline V Activate(V x, Activation act, float alpha, float beta) {
  const V zero = V{} + 0.f, one = zero + 1.f;
  switch (act) {
    case Activation::kNone:
      return x;
    case Activation::kRelu:
      return x > zero ? x : zero;
    case Activation::kLeakyRelu:
      return x < zero ? alpha * x : x;
    case Activation::kClip: {
      const V lo = zero + alpha, hi = zero + beta;
      return x < lo ? lo : (x > hi ? hi : x);
    }
    case Activation::kSwish:
      if constexpr (sizeof(V) == sizeof(float))
        return x * FastSigmoid(x);
      else
        return x * FastSigmoidVec(x);
    case Activation::kHardSwish: {
      const V t = x * (1.f / 6.f) + 0.5f;
      return x * (t < zero ? zero : (t > one ? one : t));
    }
  }
  return x;
}

// v[0, n) = Activate(v), the activation fixed per loop.
inline void ActivateAll(float* v, int64_t n, Activation act, float alpha, float beta) {
  const auto loop = [&]<Activation A>() {
    for (int64_t i = 0; i < n; ++i) v[i] = Activate(v[i], A, alpha, beta);
  };
  switch (act) {
    case Activation::kNone:
      return;
    case Activation::kRelu:
      return loop.template operator()<Activation::kRelu>();
    case Activation::kLeakyRelu:
      return loop.template operator()<Activation::kLeakyRelu>();
    case Activation::kClip:
      return loop.template operator()<Activation::kClip>();
    case Activation::kSwish:
      return loop.template operator()<Activation::kSwish>();
    case Activation::kHardSwish:
      return loop.template operator()<Activation::kHardSwish>();
  }
}

}  // namespace singa::cpu
