// Elementwise loop machinery for CPU kernels: N-d strided, broadcasting
// iteration with coalesced dimensions, split over the thread pool, and fast
// paths (contiguous, scalar operand) that the compiler vectorizes.
//
//   cpu::Binary<float, float, float>(a, b, y, [](float x, float z) { return x + z; });
//   cpu::Unary<float, float>(x, y, [](float v) { return v > 0 ? v : 0; });
//
// Outputs are dense tensors of the broadcast shape (allocated by the caller);
// inputs may have any strides, including 0 (broadcast) and negative.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "singa/core/parallel.h"
#include "singa/core/tensor.h"

namespace singa::cpu {

// Items per thread chunk below which an elementwise loop stays on one thread.
inline constexpr int64_t kElementwiseGrain = 1 << 15;

// Strides (in elements) of `t` when broadcast to `shape` (right-aligned, 0 for
// broadcast dimensions).
inline Strides BroadcastStrides(const Tensor& t, const Shape& shape) {
  Strides s(shape.size(), 0);
  size_t lead = shape.size() - t.shape().size();
  for (size_t i = 0; i < t.shape().size(); ++i)
    s[lead + i] = t.shape()[i] == 1 ? 0 : t.strides()[i];
  return s;
}

// Calls row(n, ptrs, strides) for every innermost row of the iteration space
// `shape`, where ptrs[k] points at operand k's first element of the row and
// strides[k] is its stride in elements along the row. Dimensions that all
// operands traverse contiguously are merged first, so a dense tensor is one row.
template <size_t K, class Row>
void ForEachRow(const Shape& shape, std::array<char*, K> base, std::array<int64_t, K> itemsize,
                std::array<Strides, K> strides, Row&& row, int64_t grain = kElementwiseGrain) {
  // Coalesce: drop size-1 dims, merge dim i into i+1 where every operand allows.
  std::vector<int64_t> dims;
  std::array<std::vector<int64_t>, K> st;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty()) {
      bool merge = true;
      for (size_t k = 0; k < K; ++k)
        if (st[k].back() != strides[k][d] * shape[d]) merge = false;
      if (merge) {
        dims.back() *= shape[d];
        for (size_t k = 0; k < K; ++k) st[k].back() = strides[k][d];
        continue;
      }
    }
    dims.push_back(shape[d]);
    for (size_t k = 0; k < K; ++k) st[k].push_back(strides[k][d]);
  }
  if (dims.empty()) {  // a scalar
    dims.push_back(1);
    for (size_t k = 0; k < K; ++k) st[k].push_back(0);
  }
  const int64_t rank = static_cast<int64_t>(dims.size());
  const int64_t inner = dims.back();
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < rank; ++d) rows *= dims[d];
  if (inner == 0 || rows == 0) return;
  std::array<int64_t, K> inner_stride;
  for (size_t k = 0; k < K; ++k) inner_stride[k] = st[k].back();

  if (rows == 1) {  // one long row: split it
    ParallelFor(0, inner, grain, [&](int64_t lo, int64_t hi) {
      std::array<char*, K> p;
      for (size_t k = 0; k < K; ++k) p[k] = base[k] + lo * inner_stride[k] * itemsize[k];
      row(hi - lo, p, inner_stride);
    });
    return;
  }
  ParallelFor(0, rows, std::max<int64_t>(1, grain / inner), [&](int64_t lo, int64_t hi) {
    std::vector<int64_t> idx(rank - 1);
    int64_t r = lo;
    for (int64_t d = rank - 2; d >= 0; --d) {
      idx[d] = r % dims[d];
      r /= dims[d];
    }
    std::array<char*, K> p;
    for (size_t k = 0; k < K; ++k) {
      int64_t off = 0;
      for (int64_t d = 0; d + 1 < rank; ++d) off += idx[d] * st[k][d];
      p[k] = base[k] + off * itemsize[k];
    }
    for (int64_t i = lo; i < hi; ++i) {
      row(inner, p, inner_stride);
      for (int64_t d = rank - 2; d >= 0; --d) {  // increment the multi-index
        for (size_t k = 0; k < K; ++k) p[k] += st[k][d] * itemsize[k];
        if (++idx[d] < dims[d]) break;
        for (size_t k = 0; k < K; ++k) p[k] -= st[k][d] * dims[d] * itemsize[k];
        idx[d] = 0;
      }
    }
  });
}

// y = f(x) elementwise; y has x's shape (or a shape x broadcasts to).
template <class TI, class TO, class F>
void Unary(const Tensor& x, const Tensor& y, F f) {
  const int64_t n = y.numel();
  if (n == 0) return;
  TO* out = static_cast<TO*>(y.raw_data());
  const TI* in = static_cast<const TI*>(x.raw_data());
  if (x.is_contiguous() && y.is_contiguous() && x.numel() == n) {
    ParallelFor(0, n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
      for (int64_t i = lo; i < hi; ++i) out[i] = f(in[i]);
    });
    return;
  }
  ForEachRow<2>(y.shape(), {reinterpret_cast<char*>(out), (char*)in}, {sizeof(TO), sizeof(TI)},
                {y.strides(), BroadcastStrides(x, y.shape())},
                [&](int64_t m, std::array<char*, 2> p, std::array<int64_t, 2> s) {
                  TO* o = reinterpret_cast<TO*>(p[0]);
                  const TI* a = reinterpret_cast<const TI*>(p[1]);
                  if (s[0] == 1 && s[1] == 1) {
                    for (int64_t i = 0; i < m; ++i) o[i] = f(a[i]);
                  } else {
                    for (int64_t i = 0; i < m; ++i) o[i * s[0]] = f(a[i * s[1]]);
                  }
                });
}

// y = f(a, b) elementwise with broadcasting; y has the broadcast shape.
template <class TA, class TB, class TO, class F>
void Binary(const Tensor& a, const Tensor& b, const Tensor& y, F f) {
  const int64_t n = y.numel();
  if (n == 0) return;
  TO* out = static_cast<TO*>(y.raw_data());
  const TA* pa = static_cast<const TA*>(a.raw_data());
  const TB* pb = static_cast<const TB*>(b.raw_data());
  if (y.is_contiguous() && a.is_contiguous() && b.is_contiguous()) {
    if (a.numel() == n && b.numel() == n) {
      ParallelFor(0, n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) out[i] = f(pa[i], pb[i]);
      });
      return;
    }
    if (a.numel() == n && b.numel() == 1) {
      const TB s = pb[0];
      ParallelFor(0, n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) out[i] = f(pa[i], s);
      });
      return;
    }
    if (a.numel() == 1 && b.numel() == n) {
      const TA s = pa[0];
      ParallelFor(0, n, kElementwiseGrain, [&](int64_t lo, int64_t hi) {
        for (int64_t i = lo; i < hi; ++i) out[i] = f(s, pb[i]);
      });
      return;
    }
  }
  ForEachRow<3>(
      y.shape(), {reinterpret_cast<char*>(out), (char*)pa, (char*)pb},
      {sizeof(TO), sizeof(TA), sizeof(TB)},
      {y.strides(), BroadcastStrides(a, y.shape()), BroadcastStrides(b, y.shape())},
      [&](int64_t m, std::array<char*, 3> p, std::array<int64_t, 3> s) {
        TO* o = reinterpret_cast<TO*>(p[0]);
        const TA* x = reinterpret_cast<const TA*>(p[1]);
        const TB* z = reinterpret_cast<const TB*>(p[2]);
        if (s[0] == 1 && s[1] == 1 && s[2] == 1) {
          for (int64_t i = 0; i < m; ++i) o[i] = f(x[i], z[i]);
        } else if (s[0] == 1 && s[1] == 1 && s[2] == 0) {
          const TB v = z[0];
          for (int64_t i = 0; i < m; ++i) o[i] = f(x[i], v);
        } else if (s[0] == 1 && s[1] == 0 && s[2] == 1) {
          const TA v = x[0];
          for (int64_t i = 0; i < m; ++i) o[i] = f(v, z[i]);
        } else {
          for (int64_t i = 0; i < m; ++i) o[i * s[0]] = f(x[i * s[1]], z[i * s[2]]);
        }
      });
}

// y = f(a, b, c) elementwise with broadcasting (Where, Clip with tensors).
template <class TA, class TB, class TC, class TO, class F>
void Ternary(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& y, F f) {
  if (y.numel() == 0) return;
  ForEachRow<4>(
      y.shape(),
      {static_cast<char*>(y.raw_data()), static_cast<char*>(a.raw_data()),
       static_cast<char*>(b.raw_data()), static_cast<char*>(c.raw_data())},
      {sizeof(TO), sizeof(TA), sizeof(TB), sizeof(TC)},
      {y.strides(), BroadcastStrides(a, y.shape()), BroadcastStrides(b, y.shape()),
       BroadcastStrides(c, y.shape())},
      [&](int64_t m, std::array<char*, 4> p, std::array<int64_t, 4> s) {
        TO* o = reinterpret_cast<TO*>(p[0]);
        const TA* x = reinterpret_cast<const TA*>(p[1]);
        const TB* z = reinterpret_cast<const TB*>(p[2]);
        const TC* w = reinterpret_cast<const TC*>(p[3]);
        for (int64_t i = 0; i < m; ++i) o[i * s[0]] = f(x[i * s[1]], z[i * s[2]], w[i * s[3]]);
      });
}

// `d` rounded to float with round-to-odd: rounding that once more to a type
// at least 2 bits narrower (float16, bfloat16) equals rounding `d` directly.
inline float RoundToOddFloat(double d) {
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d || std::isnan(d)) return f;
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (!(u & 1u)) f = std::nextafter(f, d > f ? INFINITY : -INFINITY);
  return f;
}

// Converts one value between element types (16-bit floats go through float,
// rounding once; anything to bool is `!= 0`).
template <class TO, class TI>
inline TO ConvertValue(TI v) {
  if constexpr (std::is_same_v<TO, TI>) {
    return v;
  } else if constexpr (std::is_same_v<TO, bool>) {
    return static_cast<float>(v) != 0.0f;
  } else if constexpr (std::is_same_v<TI, Half> || std::is_same_v<TI, BFloat16>) {
    return static_cast<TO>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<TO, Half> || std::is_same_v<TO, BFloat16>) {
    if constexpr (sizeof(TI) >= 4 && !std::is_same_v<TI, float>)
      return TO(RoundToOddFloat(static_cast<double>(v)));
    else
      return TO(static_cast<float>(v));
  } else {
    return static_cast<TO>(v);
  }
}

// dst = src converted elementwise (any strides on both sides; src may
// broadcast to dst's shape). Handles every computable dtype and strings.
void ConvertCopy(const Tensor& src, const Tensor& dst);

}  // namespace singa::cpu
