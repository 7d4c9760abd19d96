// The CUDA device: its runtime (one stream and one cuBLAS handle per GPU, a
// caching allocator of device memory) and the Tensor-level kernels that op
// files register with OpBuilder::cuda_kernel. Compiled only with SINGA_CUDA;
// op files name these functions inside SINGA_CUDA_KERNEL(...) only.
//
//   Device gpu = Device::Cuda(0);
//   Tensor x = Tensor::FromVector<float>({2}, {1, 2}, gpu);  // copied to the GPU
//   cuda::Unary(cuda::kernels::Unary::kExp, x, y);          // queued on its stream
//   y.ToVector<float>();                                      // copied back (waits)
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/cuda/kernels.h"
#include "singa/core/tensor.h"

namespace singa::cuda {

using kernels::Binary;
using kernels::Unary;

// GPUs the driver reports (0 when there is no driver or GPU).
int DeviceCount();
// The runtime of GPU `index` (created on first use).
DeviceRuntime& Runtime(int index);
// Waits for GPU `index`'s stream.
void Sync(int index);
// "NVIDIA H200 (sm_90, 139 GiB)".
std::string DeviceName(int index);

// Whether a GPU holds a dtype (numeric and bool; not strings, float8, 4-bit).
bool CopyDType(DType dtype);

// dst = src converted to dst's dtype and broadcast to dst's shape; either may
// be on the host. A copy to the host waits for the GPU.
void Copy(const Tensor& src, const Tensor& dst);
void Fill(const Tensor& dst, double value);

// y = op(x): float dtypes.
void UnaryOp(Unary op, const Tensor& x, const Tensor& y, float alpha = 0, float beta = 0);
// c = a op b with numpy broadcasting; comparisons and logic write bool.
void BinaryOp(Binary op, const Tensor& a, const Tensor& b, const Tensor& c);
// c = cond ? a : b with numpy broadcasting.
void Where(const Tensor& cond, const Tensor& a, const Tensor& b, const Tensor& c);
// Softmax (or LogSoftmax) over x's dimensions [axis, end) when `flatten`
// (opsets before 13), else over dimension `axis` alone.
void Softmax(const Tensor& x, const Tensor& y, int64_t axis, bool flatten, bool log);
// y = sum (mean) of x over the dimensions `axes` (normalized, sorted); y is
// dense with x's shape less those dimensions (or with them 1 when keepdims).
void Reduce(const Tensor& x, const Tensor& y, const std::vector<int64_t>& axes, bool mean);
// numpy matmul of float tensors (cuBLAS), with batch broadcasting.
void MatMul(const Tensor& a, const Tensor& b, const Tensor& c);
// y = alpha * op(a) * op(b) + beta * c (c absent: undefined), float dtypes.
void Gemm(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& y, bool trans_a,
          bool trans_b, float alpha, float beta);

// Fused optimizer updates in place, on GPU `device`'s memory (opt::SGD and
// opt::Adam; float32 or float64).
void SgdUpdate(int device, DType dtype, void* p, const void* g, void* buf, int64_t n, double lr,
               double wd, double momentum, double damp, bool first, bool nesterov);
void AdamUpdate(int device, DType dtype, void* p, const void* g, void* m, void* v, int64_t n,
                double step, double root_bc2, double b1, double b2, double eps, double wd);

}  // namespace singa::cuda
