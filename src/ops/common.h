// Helpers shared by op files: shape inference for common patterns.
#pragma once

#include "kernels/cpu/loops.h"
#include "kernels/cuda/cuda.h"
#include "singa/ops/export_ctx.h"
#include "singa/ops/op.h"

// Registers an op's GPU kernel in a builder chain, in builds with CUDA:
//   .kernel(ReluFast)
//   SINGA_CUDA_KERNEL([](KernelCtx& k, const NoAttrs&) {
//     cuda::UnaryOp(cuda::Unary::kRelu, k.input(0), k.output(0)); }, kCudaFloats)
// Without CUDA the kernel is not compiled (the cuda:: functions are not built).
#if SINGA_CUDA
#define SINGA_CUDA_KERNEL(...) .cuda_kernel(__VA_ARGS__)
#else
#define SINGA_CUDA_KERNEL(...)
#endif

namespace singa::ops {

#if SINGA_CUDA
// The GPU kernels of unary and binary elementwise ops (Relu, Add, Less, ...).
template <cuda::Unary op, class A>
void CudaUnary(KernelCtx& k, const A&) {
  cuda::UnaryOp(op, k.input(0), k.output(0));
}
template <cuda::Binary op, class A>
void CudaBinary(KernelCtx& k, const A&) {
  cuda::BinaryOp(op, k.input(0), k.input(1), k.output(0));
}
// The GPU kernel of an op whose CPU kernel reads its inputs' shapes and
// dtypes alone (Shape, Size): it runs on the host with the inputs where they
// are, and its outputs are copied to the GPU without waiting for it.
template <class A>
auto MetadataOnHost(void (*cpu)(KernelCtx&, const A&)) {
  return [cpu](KernelCtx& k, const A& a) {
    TensorList out;
    for (const Tensor& t : k.outputs) out.emplace_back(t.shape(), t.dtype());
    KernelCtx host{k.inputs, out};
    cpu(host, a);
    for (size_t i = 0; i < out.size(); ++i) k.outputs[i].CopyFrom(out[i]);
  };
}
#endif

// The dtypes of the GPU's elementwise kernels.
inline const std::vector<DType> kCudaFloats = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                               DType::kBFloat16};
// cuDNN's (convolution, pooling).
inline const std::vector<DType> kCudnnFloats = {DType::kFloat32, DType::kFloat64, DType::kFloat16};
// Those a GPU holds (copies, casts).
inline const std::vector<DType> kCudaCopy = {
    DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt8,
    DType::kUInt8,   DType::kInt16,   DType::kUInt16,  DType::kInt32,    DType::kUInt32,
    DType::kInt64,   DType::kUInt64,  DType::kBool};
inline const std::vector<DType> kCudaMath = {DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                             DType::kBFloat16, DType::kInt32,   DType::kInt64};

// Every dtype but bfloat16: the type lists of op versions from before ONNX
// added bfloat16 to them.
inline const std::vector<DType> kAllButBFloat16 = [] {
  std::vector<DType> v;
  for (DType dt : dtypes::kAll)
    if (dt != DType::kBFloat16) v.push_back(dt);
  return v;
}();

// Output: dtype of input 0 (or `out` when given), the broadcast shape of all inputs.
inline SpecList BroadcastSpec(const InferCtx& c, DType out = DType::kUndefined) {
  Shape s = c.shape(0);
  for (int i = 1; i < c.num_inputs(); ++i)
    if (c.has_input(i)) s = BroadcastShapes(s, c.shape(i), c.where());
  return {{out == DType::kUndefined ? c.dtype(0) : out, s}};
}

// Reads a 1-D int64/int32 input as a vector (shape-carrying inputs such as
// Reshape's `shape`).
inline std::vector<int64_t> ReadInts(const InferCtx& c, int i) {
  const Tensor& t = c.value(i);
  SINGA_CHECK(t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32, DTypeError,
              c.where() << ": input " << i << " must be int64, got " << t.ToString());
  SINGA_CHECK(t.ndim() <= 1, ShapeError,
              c.where() << ": input " << i << " must be 1-D, got " << t.ToString());
  return t.ToVector<int64_t>();
}

// Sums a broadcast gradient back to the shape of the input it came from
// (the backward of numpy broadcasting).
inline Tensor SumToShape(const Tensor& g, const Shape& shape) {
  if (g.shape() == shape) return g;
  const int64_t lead = g.ndim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < g.ndim(); ++d)
    if (d < lead || (shape[d - lead] == 1 && g.shape()[d] != 1)) axes.push_back(d);
  Tensor s = g;
  if (!axes.empty()) {
    Tensor ax = Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
    s = Call1("ReduceSum", {g, ax}, {{"keepdims", int64_t{1}}});
  }
  return s.Reshape(shape);
}

}  // namespace singa::ops
