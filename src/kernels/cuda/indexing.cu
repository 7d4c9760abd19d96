// CUDA kernels that read by index: Gather along one axis, OneHot, and the
// negative log-likelihood's pick of each target's log-probability.
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace singa::cuda::kernels {
namespace {

constexpr int kF32 = 1, kI64 = 7, kF64 = 11;  // singa DType codes

__device__ __forceinline__ int64_t IndexAt(const void* p, bool i64, int64_t j) {
  return i64 ? static_cast<const int64_t*>(p)[j] : static_cast<const int32_t*>(p)[j];
}

// Elements are moved as opaque words of sizeof(W) bytes (up to 16: several
// elements at once where the gathered slices allow); I is the index
// arithmetic's type, 32 bits where every offset fits.
template <class W, class I>
__global__ void GatherKernel(const W* x, const void* idx, bool i64, W* y, I total, I n, I m,
                             I inner) {
  SINGA_GRID_LOOP(e64, total) {
    const I e = static_cast<I>(e64);
    const I i = e % inner, r = e / inner, j = r % m, o = r / m;
    int64_t k = IndexAt(idx, i64, j);
    if (k < 0) k += n;
    y[e] = k >= 0 && k < n ? x[(o * n + static_cast<I>(k)) * inner + i] : W{};
  }
}

template <class T>
__global__ void OneHotKernel(const void* idx, bool i64, const T* values, T* y, int64_t total,
                             int64_t depth, int64_t inner) {
  SINGA_GRID_LOOP(e, total) {
    const int64_t i = e % inner, j = (e / inner) % depth, o = e / (inner * depth);
    int64_t k = IndexAt(idx, i64, o * inner + i);
    if (k < 0) k += depth;
    y[e] = k == j ? values[1] : values[0];
  }
}

template <class T>
__global__ void NllKernel(const T* lp, const void* target, bool i64, const T* weight,
                          bool has_ignore, int64_t ignore, T* loss, T* coef, int64_t rows,
                          int64_t c, int64_t d) {
  SINGA_GRID_LOOP(r, rows) {
    const int64_t t = IndexAt(target, i64, r);
    if ((has_ignore && t == ignore) || t < 0 || t >= c) {
      loss[r] = 0;
      coef[r] = 0;
      continue;
    }
    const T w = weight ? weight[t] : T(1);
    loss[r] = -w * lp[((r / d) * c + t) * d + r % d];
    coef[r] = w;
  }
}

}  // namespace

void Gather(const void* x, int element_bytes, const void* indices, int index_dtype, void* y,
            int64_t outer, int64_t n, int64_t m, int64_t inner, void* stream) {
  if (outer * m * inner == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const bool i64 = index_dtype == kI64;
  // The widest word that divides a gathered slice and both buffers' alignment.
  const int64_t bytes = inner * element_bytes;
  int word = 16;
  while (word > element_bytes && (bytes % word != 0 || reinterpret_cast<uintptr_t>(x) % word != 0 ||
                                  reinterpret_cast<uintptr_t>(y) % word != 0))
    word /= 2;
  inner = bytes / word;
  const int64_t total = outer * m * inner;
  const bool small = total < (int64_t{1} << 31) && outer * n * inner < (int64_t{1} << 31);
  auto run = [&](auto w) {
    using W = decltype(w);
    const auto* px = static_cast<const W*>(x);
    auto* py = static_cast<W*>(y);
    if (small)
      GatherKernel<W, uint32_t><<<Blocks(total), kThreads, 0, s>>>(
          px, indices, i64, py, static_cast<uint32_t>(total), static_cast<uint32_t>(n),
          static_cast<uint32_t>(m), static_cast<uint32_t>(inner));
    else
      GatherKernel<W, int64_t>
          <<<Blocks(total), kThreads, 0, s>>>(px, indices, i64, py, total, n, m, inner);
  };
  switch (word) {
    case 1:
      run(uint8_t{});
      break;
    case 2:
      run(uint16_t{});
      break;
    case 4:
      run(uint32_t{});
      break;
    case 8:
      run(uint64_t{});
      break;
    case 16:
      run(uint4{});
      break;
    default:
      throw std::runtime_error("CUDA Gather: elements of " + std::to_string(element_bytes) +
                               " bytes");
  }
  CheckLaunch("CUDA Gather");
}

void OneHot(const void* indices, int index_dtype, const void* values, int dtype, void* y,
            int64_t outer, int64_t depth, int64_t inner, void* stream) {
  const int64_t total = outer * depth * inner;
  if (total == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const bool i64 = index_dtype == kI64;
  if (dtype == kF32)
    OneHotKernel<float>
        <<<Blocks(total), kThreads, 0, s>>>(indices, i64, static_cast<const float*>(values),
                                            static_cast<float*>(y), total, depth, inner);
  else if (dtype == kF64)
    OneHotKernel<double>
        <<<Blocks(total), kThreads, 0, s>>>(indices, i64, static_cast<const double*>(values),
                                            static_cast<double*>(y), total, depth, inner);
  else
    throw std::runtime_error("CUDA OneHot: float32 or float64 values only");
  CheckLaunch("CUDA OneHot");
}

void NllPick(const void* log_prob, int dtype, const void* target, int target_dtype,
             const void* weight, bool has_ignore, int64_t ignore, void* loss, void* coef, int64_t n,
             int64_t c, int64_t d, void* stream) {
  const int64_t rows = n * d;
  if (rows == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const bool i64 = target_dtype == kI64;
  if (dtype == kF32)
    NllKernel<float><<<Blocks(rows), kThreads, 0, s>>>(
        static_cast<const float*>(log_prob), target, i64, static_cast<const float*>(weight),
        has_ignore, ignore, static_cast<float*>(loss), static_cast<float*>(coef), rows, c, d);
  else if (dtype == kF64)
    NllKernel<double><<<Blocks(rows), kThreads, 0, s>>>(
        static_cast<const double*>(log_prob), target, i64, static_cast<const double*>(weight),
        has_ignore, ignore, static_cast<double*>(loss), static_cast<double*>(coef), rows, c, d);
  else
    throw std::runtime_error("CUDA NLL loss: float32 or float64 only");
  CheckLaunch("CUDA NLL loss");
}

}  // namespace singa::cuda::kernels
