// Row normalization on the GPU: each row of a dense [rows, n] float32 tensor
// to zero mean and unit variance (LayerNormalization's core; its scale and
// bias are broadcasting passes of the elementwise kernels).
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace singa::cuda::kernels {
namespace {

// The sum of v over the block, in every thread; `scratch` holds a value per
// warp.
__device__ float BlockSum(float v, float* scratch) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();  // scratch may still be read by the previous sum
  if (lane == 0) scratch[warp] = v;
  __syncthreads();
  v = lane < blockDim.x / 32 ? scratch[lane] : 0.0f;
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// One block per row: the mean, then the variance of the centred values
// (two passes, as the CPU loop), then the normalized row.
__global__ void RowNormKernel(const float* x, float* y, float* mean, float* inv_std, int64_t n,
                              float epsilon) {
  __shared__ float scratch[kThreads / 32];
  const int64_t row = blockIdx.x;
  const float* xr = x + row * n;
  float* yr = y + row * n;
  float s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += xr[i];
  const float m = BlockSum(s, scratch) / static_cast<float>(n);
  float q = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float d = xr[i] - m;
    q += d * d;
  }
  const float inv = rsqrtf(BlockSum(q, scratch) / static_cast<float>(n) + epsilon);
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) yr[i] = (xr[i] - m) * inv;
  if (threadIdx.x == 0) {
    mean[row] = m;
    inv_std[row] = inv;
  }
}

}  // namespace

void RowNormalize(const float* x, float* y, float* mean, float* inv_std, int64_t rows, int64_t n,
                  float epsilon, void* stream) {
  if (rows == 0 || n == 0) return;
  if (rows > 0x7fffffff) throw std::runtime_error("CUDA row normalization: too many rows");
  RowNormKernel<<<static_cast<unsigned>(rows), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      x, y, mean, inv_std, n, epsilon);
  CheckLaunch("CUDA row normalization");
}

}  // namespace singa::cuda::kernels
