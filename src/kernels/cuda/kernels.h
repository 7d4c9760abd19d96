// The CUDA kernels' interface: plain structs and enums, no singa headers, so
// that the .cu files compile with nvcc alone. src/kernels/cuda/cuda.cc turns
// Tensors into these.
#pragma once

#include <cstdint>

namespace singa::cuda::kernels {

constexpr int kMaxRank = 8;

// A strided view over `shape` (the iteration shape of the kernel: a
// broadcast input has stride 0 along the dimensions it is broadcast along).
// `dtype` is singa's DType code (the ONNX TensorProto code).
struct View {
  void* data = nullptr;
  int dtype = 0;
  int rank = 0;
  int64_t shape[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};  // in elements
  bool dense = false;              // strides are shape's row-major ones
};

// The ops of the unary and binary families, each a kernel of its own.
// clang-format off
#define SINGA_CUDA_UNARY_OPS(X)                                                              \
  X(Abs) X(Neg) X(Exp) X(Log) X(Sqrt) X(Reciprocal) X(Sin) X(Cos) X(Tan) X(Asin) X(Acos)     \
  X(Atan) X(Sinh) X(Cosh) X(Tanh) X(Asinh) X(Acosh) X(Atanh) X(Ceil) X(Floor) X(Round)       \
  X(Sign) X(Erf) X(Relu) X(Sigmoid) X(LeakyRelu) X(Elu) X(Selu) X(HardSigmoid) X(HardSwish)  \
  X(Softplus) X(Softsign) X(Gelu) X(GeluTanh)
// clang-format on
// Arithmetic keeps the dtype; comparisons and logic write bool.
#define SINGA_CUDA_ARITH_OPS(X) X(Add) X(Sub) X(Mul) X(Div) X(Pow) X(Max) X(Min)
#define SINGA_CUDA_COMPARE_OPS(X) \
  X(Equal) X(Less) X(Greater) X(LessOrEqual) X(GreaterOrEqual) X(And) X(Or) X(Xor)

#define SINGA_CUDA_ENUMERATOR(NAME) k##NAME,
enum class Unary : int { SINGA_CUDA_UNARY_OPS(SINGA_CUDA_ENUMERATOR) };
enum class Binary : int {
  SINGA_CUDA_ARITH_OPS(SINGA_CUDA_ENUMERATOR) SINGA_CUDA_COMPARE_OPS(SINGA_CUDA_ENUMERATOR)
};
#undef SINGA_CUDA_ENUMERATOR

// Whether the kernels handle a dtype in copies and casts (numeric and bool).
bool CopyDType(int dtype);

// dst[i] = convert(src[i]) over dst's shape; src has dst's rank.
void Copy(const View& src, const View& dst, void* stream);
// Up to kInlineBytes of host memory to the GPU inside a kernel launch's
// parameters: queued like a kernel, where a copy from pageable host memory
// (cudaMemcpyAsync) first waits for the stream's queued work.
constexpr int64_t kInlineBytes = 1024;
void CopyInline(const void* host, int64_t bytes, void* dst, void* stream);
void Fill(const View& dst, double value, void* stream);
// y = op(x) with parameters alpha, beta (LeakyRelu's slope, Selu's scale).
void UnaryOp(Unary op, const View& x, const View& y, float alpha, float beta, void* stream);
void BinaryOp(Binary op, const View& a, const View& b, const View& c, void* stream);
// c = cond ? a : b.
void WhereOp(const View& cond, const View& a, const View& b, const View& c, void* stream);
// Clip of n dense elements, y = min(max(x, lo), hi) as the CPU loop orders
// it (NaN passes); lo and hi point at one element of the dtype, or are null
// for no bound. ClipGrad: dx = dy where neither bound applied, else 0.
void Clip(const void* x, const void* lo, const void* hi, void* y, int dtype, int64_t n,
          void* stream);
void ClipGrad(const void* dy, const void* x, const void* lo, const void* hi, void* dx, int dtype,
              int64_t n, void* stream);
// Softmax or LogSoftmax over the middle axis of a dense [outer, n, inner].
void Softmax(const void* x, void* y, int dtype, int64_t outer, int64_t n, int64_t inner, bool log,
             void* stream);
// y[o] = sum (or mean) of x over the elements of x that map to output o;
// x is a view over the input's shape whose strides skip nothing, `out`
// the dense output, `reduced` per dimension whether it is reduced.
void ReduceSum(const View& x, const View& y, const bool* reduced, bool mean, void* stream);

// y[o, j, i] = x[o, indices[j], i] for x [outer, n, inner] and y [outer, m,
// inner], elements of element_bytes bytes; indices int32 or int64, negative
// ones from the end, out-of-range ones giving zeros.
void Gather(const void* x, int element_bytes, const void* indices, int index_dtype, void* y,
            int64_t outer, int64_t n, int64_t m, int64_t inner, void* stream);
// y[o, j, i] = indices[o, i] == j ? values[1] : values[0] (float32 or
// float64), negative indices from the end.
void OneHot(const void* indices, int index_dtype, const void* values, int dtype, void* y,
            int64_t outer, int64_t depth, int64_t inner, void* stream);
// Per target of log_prob [n, c, d]: loss = -weight[t] * log_prob[., t, .] and
// coef = weight[t] (1 without weights), both 0 where t is ignored or out of
// range (float32 or float64).
void NllPick(const void* log_prob, int dtype, const void* target, int target_dtype,
             const void* weight, bool has_ignore, int64_t ignore, void* loss, void* coef, int64_t n,
             int64_t c, int64_t d, void* stream);

// Each row of a dense float32 [rows, n] normalized to zero mean and unit
// variance: y = (x - mean) * inv_std, inv_std = 1 / sqrt(var + epsilon),
// both [rows].
void RowNormalize(const float* x, float* y, float* mean, float* inv_std, int64_t rows, int64_t n,
                  float epsilon, void* stream);

// Optimizer updates of n elements in place (float32 or float64), as
// singa::opt's CPU loops compute them.
void SgdUpdate(int dtype, void* p, const void* g, void* buf, int64_t n, double lr, double wd,
               double momentum, double damp, bool first, bool nesterov, void* stream);
void AdamUpdate(int dtype, void* p, const void* g, void* m, void* v, int64_t n, double step,
                double root_bc2, double b1, double b2, double eps, double wd, void* stream);

}  // namespace singa::cuda::kernels
