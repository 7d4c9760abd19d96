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
#include <optional>
#include <string>
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
// GPU `index` made current on this thread; its stream (a cudaStream_t).
void* Stream(int index);
// "NVIDIA H200 (sm_90, 139 GiB)".
std::string DeviceName(int index);

// Whether a GPU holds a dtype (numeric and bool; not strings, float8, 4-bit).
bool CopyDType(DType dtype);

// dst = src converted to dst's dtype and broadcast to dst's shape; either may
// be on the host. A copy to the host waits for the GPU.
void Copy(const Tensor& src, const Tensor& dst);
// Copies from a GPU to the host so far in this process; each waits for the
// GPU's queued work, which stalls the host's queueing of more.
int64_t HostCopies();
void Fill(const Tensor& dst, double value);

// y = op(x): float dtypes.
void UnaryOp(Unary op, const Tensor& x, const Tensor& y, float alpha = 0, float beta = 0);
// c = a op b with numpy broadcasting; comparisons and logic write bool.
void BinaryOp(Binary op, const Tensor& a, const Tensor& b, const Tensor& c);
// Clip of a float x into y (kernels::Clip) and its gradient dx from dy;
// lo and hi are one element of x's dtype, or undefined for no bound.
void Clip(const Tensor& x, const Tensor& lo, const Tensor& hi, const Tensor& y);
void ClipGrad(const Tensor& dy, const Tensor& x, const Tensor& lo, const Tensor& hi,
              const Tensor& dx);
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

// y = x gathered along `axis` by `indices` (int32 or int64, negative ones
// from the end); an index out of range gives zeros (the CPU kernel raises:
// checking would wait for the GPU).
void Gather(const Tensor& x, const Tensor& indices, const Tensor& y, int64_t axis);
// y = values[1] where the position along `axis` is the index, else
// values[0] (float32 or float64 values on the GPU).
void OneHot(const Tensor& indices, const Tensor& values, const Tensor& y, int64_t axis);
// The negative log-likelihood of log_prob [N, C, d...] at target [N, d...]:
// -weight[t] * log_prob[n, t, d] per element (weight may be undefined; 0 at
// ignored targets), reduced into loss by `reduction` (none, sum, or mean:
// the sum over the weights of the targets not ignored).
void NllLoss(const Tensor& log_prob, const Tensor& target, const Tensor& weight, const Tensor& loss,
             std::optional<int64_t> ignore, const std::string& reduction);

// float32 x's rows (its dims from `axis` on) normalized to zero mean and
// unit variance into y (dense); mean and inv_std = 1 / sqrt(var + epsilon)
// into dense float32 tensors of one element per row.
void RowNormalize(const Tensor& x, const Tensor& y, const Tensor& mean, const Tensor& inv_std,
                  int64_t axis, float epsilon);

// ---- cuDNN (src/kernels/cuda/cudnn.cc) ------------------------------------
// Dense NCHW tensors (views are made dense) with 1 to 3 spatial dimensions,
// float32, float64 or float16; `Window` is the geometry per spatial dimension.
struct Window {
  std::vector<int64_t> kernel, stride, dilation, pad_begin, pad_end;
};

// y = conv(x, w) (+ b when defined) in `group` groups; w is [M, C/group, k...].
void ConvForward(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& y,
                 const Window& win, int64_t group);
// dx from dy and w.
void ConvBackwardData(const Tensor& dy, const Tensor& w, const Tensor& dx, const Window& win,
                      int64_t group);
// dw (and db when defined) from dy and x.
void ConvBackwardFilter(const Tensor& dy, const Tensor& x, const Tensor& dw, const Tensor& db,
                        const Window& win, int64_t group);

enum class Pool { kMax, kAverageIncludePad, kAverageExcludePad };
// Whether cuDNN pools this geometry (input sizes `in`, output sizes `out`):
// no dilation, pads equal on both sides and smaller than the kernel, and the
// output sizes floor division gives (ceil_mode may give others).
bool PoolTakes(const Window& win, const std::vector<int64_t>& in, const std::vector<int64_t>& out);
void PoolForward(Pool mode, const Tensor& x, const Tensor& y, const Window& win);
// dx from dy and x (the forward is run again for y).
void PoolBackward(Pool mode, const Tensor& dy, const Tensor& x, const Tensor& dx,
                  const Window& win);

// Batch normalization over dim 1 of x (every other dim reduced); scale,
// bias, mean and var are [C], float32 (float64 for a float64 x).
void BatchNormInference(const Tensor& x, const Tensor& scale, const Tensor& bias,
                        const Tensor& mean, const Tensor& var, const Tensor& y, double epsilon);
// y with the batch's statistics, which it writes to batch_mean and batch_var
// (the population variance).
void BatchNormTraining(const Tensor& x, const Tensor& scale, const Tensor& bias, const Tensor& y,
                       const Tensor& batch_mean, const Tensor& batch_var, double epsilon);
// The training forward's gradients: dx, dscale and dbias from dy.
void BatchNormBackward(const Tensor& dy, const Tensor& x, const Tensor& scale, const Tensor& dx,
                       const Tensor& dscale, const Tensor& dbias, double epsilon);

// Fused optimizer updates in place, on GPU `device`'s memory (opt::SGD and
// opt::Adam; float32 or float64).
void SgdUpdate(int device, DType dtype, void* p, const void* g, void* buf, int64_t n, double lr,
               double wd, double momentum, double damp, bool first, bool nesterov);
void AdamUpdate(int device, DType dtype, void* p, const void* g, void* m, void* v, int64_t n,
                double step, double root_bc2, double b1, double b2, double eps, double wd);

}  // namespace singa::cuda
