// Helpers shared by the data-movement ops (Reshape, Transpose, Slice, Gather,
// Pad, Tile, ...): their dtype lists and element moves that never look at a
// value, so one kernel serves every dtype of a given size (strings apart).
#pragma once

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ops/common.h"

namespace singa::ops {

// Every dtype the core holds that the op-table harness can feed: numeric,
// bool, string and the 8-, 4- and 2-bit types (held one per byte).
// NOTE: complex64/complex128 are allowed by the spec but not claimed: the
// harness has no way to generate them yet.
inline const std::vector<DType>& AnyDType() {
  static const std::vector<DType> v = [] {
    std::vector<DType> all = dtypes::kAll;
    for (DType d : {DType::kFloat8E4M3FN, DType::kFloat8E4M3FNUZ, DType::kFloat8E5M2,
                    DType::kFloat8E5M2FNUZ, DType::kUInt4, DType::kInt4, DType::kFloat4E2M1,
                    DType::kFloat8E8M0, DType::kUInt2, DType::kInt2})
      all.push_back(d);
    return all;
  }();
  return v;
}

// A 16-byte element moved as a unit.
struct Bytes16 {
  uint64_t lo, hi;
};

// Calls f(Tag<T>{}) with T an unsigned integer of the element's size (or
// Bytes16), or std::string for strings: kernels that only move elements use it.
template <class F>
decltype(auto) VisitElementSize(DType dt, F&& f, std::string_view op) {
  if (dt == DType::kString) return f(Tag<std::string>{});
  switch (SizeOf(dt)) {
    case 1:
      return f(Tag<uint8_t>{});
    case 2:
      return f(Tag<uint16_t>{});
    case 4:
      return f(Tag<uint32_t>{});
    case 8:
      return f(Tag<uint64_t>{});
    case 16:
      return f(Tag<Bytes16>{});
    default:
      throw DTypeError(std::string(op) + ": no kernel for dtype " + std::string(Name(dt)));
  }
}

// y[o_0, ..., o_{r-1}] = x[maps[0][o_0], ..., maps[r-1][o_{r-1}]]: every
// output axis reads its input axis through an index map (Gather, Pad's
// edge/reflect/wrap, Tile). x may have any strides; y is dense; the maps hold
// valid indices of x (checked by the caller).
inline void GatherAxes(const Tensor& x, const Tensor& y,
                       const std::vector<std::vector<int64_t>>& maps, std::string_view op) {
  if (y.numel() == 0) return;
  const int64_t rank = y.ndim();
  // Offsets in elements of x, per axis and output index.
  std::vector<std::vector<int64_t>> off(rank);
  for (int64_t d = 0; d < rank; ++d) {
    off[d].resize(maps[d].size());
    for (size_t o = 0; o < maps[d].size(); ++o) off[d][o] = maps[d][o] * x.strides()[d];
  }
  VisitElementSize(
      x.dtype(),
      [&]<class T>(Tag<T>) {
        const T* in = static_cast<const T*>(x.raw_data());
        T* out = static_cast<T*>(y.raw_data());
        if (rank == 0) {
          out[0] = in[0];
          return;
        }
        const int64_t inner = y.shape()[rank - 1];
        const int64_t rows = y.numel() / inner;
        const int64_t* inner_off = off[rank - 1].data();
        // Rows read straight from x (Gather on an outer axis, Tile's inner
        // copies) move as one block.
        bool dense_rows = true;
        for (int64_t i = 0; i < inner && dense_rows; ++i) dense_rows = inner_off[i] == i;
        // Rows are independent; a chunk walks its rows with an odometer.
        ParallelFor(0, rows, std::max<int64_t>(1, cpu::kElementwiseGrain / inner),
                    [&](int64_t lo, int64_t hi) {
                      std::vector<int64_t> idx(rank - 1);
                      int64_t r = lo;
                      for (int64_t d = rank - 2; d >= 0; --d) {
                        idx[d] = r % y.shape()[d];
                        r /= y.shape()[d];
                      }
                      for (int64_t row = lo; row < hi; ++row) {
                        int64_t base = 0;
                        for (int64_t d = 0; d + 1 < rank; ++d) base += off[d][idx[d]];
                        const T* src = in + base;
                        T* dst = out + row * inner;
                        if (dense_rows)
                          std::copy(src, src + inner, dst);
                        else
                          for (int64_t i = 0; i < inner; ++i) dst[i] = src[inner_off[i]];
                        for (int64_t d = rank - 2; d >= 0; --d) {
                          if (++idx[d] < y.shape()[d]) break;
                          idx[d] = 0;
                        }
                      }
                    });
      },
      op);
}

// Throws ShapeError unless `axes` (already normalized to [0, rank)) are distinct.
inline void CheckDistinctAxes(const InferCtx& c, const std::vector<int64_t>& axes) {
  std::vector<int64_t> sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  SINGA_CHECK(
      std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(), ShapeError,
      c.where() << ": axes " << ToString(axes) << " repeat an axis (" << c.inputs_string() << ")");
}

// Normalizes an axis in [-rank, rank) with a message naming the op and inputs.
inline int64_t CheckAxis(const InferCtx& c, int64_t axis, int64_t rank) {
  SINGA_CHECK(axis >= -rank && axis < rank, ShapeError,
              c.where() << ": axis " << axis << " is out of range for rank " << rank << " ("
                        << c.inputs_string() << ")");
  return axis < 0 ? axis + rank : axis;
}

// The backward of the ops that only change the shape (Reshape, Flatten,
// Squeeze, Unsqueeze): the output's gradient in the input's shape; shape and
// axes inputs get none.
struct ReshapeGrad {
  template <class A>
  TensorList operator()(const GradCtx& g, const A&) const {
    TensorList d(g.num_inputs());
    d[0] = g.grad_output(0).Reshape(g.input(0).shape());
    return d;
  }
};

}  // namespace singa::ops
