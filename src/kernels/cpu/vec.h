// One vector register of floats, as the hand-blocked kernels (PanelMatMul,
// DirectConv) compute in: 16 lanes with AVX-512, else 8 (GCC vector
// extensions), and its unaligned load and store.
#pragma once

#include <cstring>

namespace singa::cpu::vec {

#ifdef __AVX512F__
constexpr int kLanes = 16;
#else
constexpr int kLanes = 8;
#endif
using Vec = float __attribute__((vector_size(kLanes * sizeof(float))));

inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

inline void Store(float* p, Vec v) { std::memcpy(p, &v, sizeof v); }

}  // namespace singa::cpu::vec
