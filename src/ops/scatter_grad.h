// Gradients of gathers along one axis (Gather, Pad's edge/reflect/wrap
// modes): the output's gradient added back into the positions it was read
// from, written with framework ops so that it runs on any device.
#pragma once

#include <vector>

#include "ops/common.h"

namespace singa::ops {

// For dy seen as [outer, k, inner] with k = map.size(): returns dx of shape
// [outer, n, inner] with dx[o, i, j] = sum over m with map[m] == i of dy[o, m, j].
// NOTE: computed as a one-hot [n, k] matrix times dy (a MatMul): the maps are
// small (one axis), and a dense product keeps the sum deterministic.
inline Tensor IndexAdd(const Tensor& dy, int64_t outer, int64_t inner,
                       const std::vector<int64_t>& map, int64_t n) {
  const int64_t k = static_cast<int64_t>(map.size());
  if (outer * n * inner == 0 || k == 0)
    return Tensor::Zeros({outer, n, inner}, dy.dtype(), dy.device());
  std::vector<double> onehot(static_cast<size_t>(n * k), 0.0);
  for (int64_t m = 0; m < k; ++m) onehot[map[m] * k + m] = 1.0;
  const Tensor sel = Tensor::FromVector<double>({n, k}, onehot, dy.device()).AsType(dy.dtype());
  return Call1("MatMul", {sel, dy.Reshape({outer, k, inner})});
}

// IndexAdd along `axis` of dy: the result has dy's shape with n at `axis`.
inline Tensor IndexAddAlong(const Tensor& dy, int64_t axis, const std::vector<int64_t>& map,
                            int64_t n) {
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= dy.shape()[d];
  for (int64_t d = axis + 1; d < dy.ndim(); ++d) inner *= dy.shape()[d];
  Shape out = dy.shape();
  out[axis] = n;
  return IndexAdd(dy, outer, inner, map, n).Reshape(out);
}

}  // namespace singa::ops
