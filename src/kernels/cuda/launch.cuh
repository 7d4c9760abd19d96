// Launch helpers of the CUDA kernel files (.cu only): the block size, a
// grid for n elements, the grid-stride loop and the check after a launch.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace singa::cuda::kernels {

constexpr int kThreads = 256;

// Blocks of kThreads for n elements, capped (the grid-stride loop does the rest).
inline int Blocks(int64_t n) {
  const int64_t b = (n + kThreads - 1) / kThreads;
  return static_cast<int>(b < 65535 * 32 ? b : 65535 * 32);
}

// Throws the last launch's error, naming `what`.
inline void CheckLaunch(const char* what) {
  const cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

}  // namespace singa::cuda::kernels

#define SINGA_GRID_LOOP(i, n)                                                            \
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)
