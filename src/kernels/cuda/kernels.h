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

enum class Unary : int {
  kAbs, kNeg, kExp, kLog, kSqrt, kReciprocal, kSin, kCos, kTan, kAsin, kAcos, kAtan,
  kSinh, kCosh, kTanh, kAsinh, kAcosh, kAtanh, kCeil, kFloor, kRound, kSign, kErf,
  kRelu, kSigmoid, kLeakyRelu, kElu, kSelu, kHardSigmoid, kHardSwish, kSoftplus, kSoftsign,
  kGelu, kGeluTanh,
};
enum class Binary : int {
  kAdd, kSub, kMul, kDiv, kPow, kMax, kMin,
  // Comparisons and logic write bool.
  kEqual, kLess, kGreater, kLessOrEqual, kGreaterOrEqual, kAnd, kOr, kXor,
};

// Whether the kernels handle a dtype: as a copy (any dtype of 1, 2, 4 or 8
// bytes), as a cast source or target, as arithmetic.
bool CopyDType(int dtype);
bool CastDType(int dtype);
bool MathDType(int dtype);

// dst[i] = convert(src[i]) over dst's shape; src has dst's rank.
void Copy(const View& src, const View& dst, void* stream);
void Fill(const View& dst, double value, void* stream);
// y = op(x) with parameters alpha, beta (LeakyRelu's slope, Selu's scale).
void UnaryOp(Unary op, const View& x, const View& y, float alpha, float beta, void* stream);
void BinaryOp(Binary op, const View& a, const View& b, const View& c, void* stream);
// c = cond ? a : b.
void WhereOp(const View& cond, const View& a, const View& b, const View& c, void* stream);
// Softmax or LogSoftmax over the middle axis of a dense [outer, n, inner].
void Softmax(const void* x, void* y, int dtype, int64_t outer, int64_t n, int64_t inner, bool log,
             void* stream);
// y[o] = sum (or mean) of x over the elements of x that map to output o;
// x is a view over the input's shape whose strides skip nothing, `out`
// the dense output, `reduced` per dimension whether it is reduced.
void ReduceSum(const View& x, const View& y, const bool* reduced, bool mean, void* stream);

}  // namespace singa::cuda::kernels
