// Fused optimizer updates on the GPU: one pass over a parameter, its
// gradient and its slots (SGD with momentum, Adam), in the CPU loops' order
// of operations (src/opt/optimizer.cc).
#include <cuda_runtime.h>

#include <cmath>
#include <stdexcept>
#include <string>

#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace singa::cuda::kernels {
namespace {

template <class T>
__global__ void Sgd(T* p, const T* g, T* buf, int64_t n, T lr, T wd, T mom, T damp, bool first,
                    bool nesterov) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    T d = g[i] + wd * p[i];
    if (buf) {
      buf[i] = first ? d : mom * buf[i] + damp * d;
      d = nesterov ? d + mom * buf[i] : buf[i];
    }
    p[i] -= lr * d;
  }
}

template <class T>
__global__ void Adam(T* p, const T* g, T* m, T* v, int64_t n, T step, T root_bc2, T b1, T b2, T eps,
                     T wd) {
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<int64_t>(blockDim.x) * gridDim.x) {
    const T d = g[i] + wd * p[i];
    m[i] = b1 * m[i] + (1 - b1) * d;
    v[i] = b2 * v[i] + (1 - b2) * d * d;
    p[i] -= step * m[i] / (sqrt(v[i]) / root_bc2 + eps);
  }
}

}  // namespace

void SgdUpdate(int dtype, void* p, const void* g, void* buf, int64_t n, double lr, double wd,
               double momentum, double damp, bool first, bool nesterov, void* stream) {
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    Sgd<T><<<Blocks(n), kThreads, 0, s>>>(static_cast<T*>(p), static_cast<const T*>(g),
                                          static_cast<T*>(buf), n, T(lr), T(wd), T(momentum),
                                          T(damp), first, nesterov);
  };
  dtype == 11 ? run(double{}) : run(float{});
  CheckLaunch("SGD update");
}

void AdamUpdate(int dtype, void* p, const void* g, void* m, void* v, int64_t n, double step,
                double root_bc2, double b1, double b2, double eps, double wd, void* stream) {
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  auto run = [&](auto zero) {
    using T = decltype(zero);
    Adam<T><<<Blocks(n), kThreads, 0, s>>>(static_cast<T*>(p), static_cast<const T*>(g),
                                           static_cast<T*>(m), static_cast<T*>(v), n, T(step),
                                           T(root_bc2), T(b1), T(b2), T(eps), T(wd));
  };
  dtype == 11 ? run(double{}) : run(float{});
  CheckLaunch("Adam update");
}

}  // namespace singa::cuda::kernels
