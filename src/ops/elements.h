// Shared by GatherElements and ScatterElements/Scatter: the element-wise
// index walk. Every element of `indices` (shape [s_0, ..., s_{r-1}]) names one
// element of `data`: the same coordinates except along `axis`, where the
// index value is used (negative values count from the end).
#pragma once

#include <string>
#include <vector>

#include "ops/movement.h"

namespace singa::ops {

// Checks rank and shapes for GatherElements/ScatterElements: indices (and
// updates) have data's rank and no dimension larger than data's except along
// `axis`. Returns the normalized axis.
inline int64_t CheckElementsShapes(const InferCtx& c, int64_t axis, int indices_input) {
  const int64_t rank = c.rank(0);
  SINGA_CHECK(rank >= 1, ShapeError,
              c.where() << ": data must have rank >= 1 (" << c.inputs_string() << ")");
  const int64_t ax = CheckAxis(c, axis, rank);
  const Shape& data = c.shape(0);
  const Shape& idx = c.shape(indices_input);
  SINGA_CHECK(static_cast<int64_t>(idx.size()) == rank, ShapeError,
              c.where() << ": indices must have the rank of data (" << c.inputs_string() << ")");
  for (int64_t d = 0; d < rank; ++d)
    SINGA_CHECK(d == ax || idx[d] <= data[d], ShapeError,
                c.where() << ": indices dimension " << d << " exceeds data's (" << c.inputs_string()
                          << ")");
  return ax;
}

// The data offsets (in elements of a dense tensor of shape `data`) that the
// elements of `indices` (as int64, row-major) address along `axis`; throws
// ShapeError naming `op` for an index out of range.
inline std::vector<int64_t> ElementOffsets(const Shape& data, const Tensor& indices, int64_t axis,
                                           std::string_view op) {
  const std::vector<int64_t> idx = indices.ToVector<int64_t>();
  const Shape& ishape = indices.shape();
  const int64_t rank = static_cast<int64_t>(data.size());
  const int64_t n = data[axis];
  for (int64_t v : idx)
    SINGA_CHECK(v >= -n && v < n, ShapeError,
                op << ": index " << v << " is out of range for axis " << axis << " of data "
                   << ToString(data));
  Strides st(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d) st[d] = st[d + 1] * data[d + 1];
  std::vector<int64_t> off(idx.size());
  const int64_t total = static_cast<int64_t>(idx.size());
  if (total == 0) return off;
  const int64_t inner = ishape[rank - 1];
  ParallelFor(0, total / inner, std::max<int64_t>(1, cpu::kElementwiseGrain / inner),
              [&](int64_t lo, int64_t hi) {
                std::vector<int64_t> pos(rank, 0);
                int64_t r = lo;
                for (int64_t d = rank - 2; d >= 0; --d) pos[d] = r % ishape[d], r /= ishape[d];
                for (int64_t row = lo; row < hi; ++row) {
                  int64_t base = 0;
                  for (int64_t d = 0; d + 1 < rank; ++d)
                    if (d != axis) base += pos[d] * st[d];
                  for (int64_t i = 0; i < inner; ++i) {
                    const int64_t e = row * inner + i;
                    const int64_t k = idx[e] < 0 ? idx[e] + n : idx[e];
                    off[e] = base + (axis == rank - 1 ? 0 : i) + k * st[axis];
                  }
                  for (int64_t d = rank - 2; d >= 0; --d) {
                    if (++pos[d] < ishape[d]) break;
                    pos[d] = 0;
                  }
                }
              });
  return off;
}

}  // namespace singa::ops
