// Elementwise CUDA kernels, one templated family: copies and casts, fills,
// unary and binary ops with numpy broadcasting (strided views, rank <= 8),
// Where, Softmax and sum reductions. float16 and bfloat16 compute in float.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda/kernels.h"
#include "kernels/cuda/launch.cuh"

namespace singa::cuda::kernels {
namespace {

// singa DType codes (ONNX TensorProto).
enum Code : int {
  kF32 = 1,
  kU8 = 2,
  kI8 = 3,
  kU16 = 4,
  kI16 = 5,
  kI32 = 6,
  kI64 = 7,
  kBool = 9,
  kF16 = 10,
  kF64 = 11,
  kU32 = 12,
  kU64 = 13,
  kBF16 = 16,
};

void Check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

struct Index {
  int rank;
  bool small;  // every element index and offset fits 32 bits: cheaper division
  int64_t shape[kMaxRank];
};

// The offset of element i (row-major over `ix`) in a view. Unrolled over
// kMaxRank so that every array index is a constant: the kernel parameters
// stay in the constant bank instead of being copied to local memory.
template <class I>
__device__ __forceinline__ int64_t OffsetOf(I i, const Index& ix, const int64_t* strides) {
  I off = 0;
#pragma unroll
  for (int d = kMaxRank - 1; d >= 0; --d) {
    if (d < ix.rank) {
      const I n = static_cast<I>(ix.shape[d]);
      const I c = i % n;
      i /= n;
      off += c * static_cast<I>(strides[d]);
    }
  }
  return off;
}
__device__ __forceinline__ int64_t Offset(int64_t i, const Index& ix, const int64_t* strides) {
  return ix.small ? OffsetOf<uint32_t>(static_cast<uint32_t>(i), ix, strides)
                  : OffsetOf<int64_t>(i, ix, strides);
}

struct Strides {
  int64_t s[kMaxRank];
  bool dense;
  // > 0 when element i of the iteration is at offset i % mod: a dense view
  // repeated over leading dimensions (a bias, a scalar, or dense: mod = n).
  int64_t mod;
};

// The iteration index over v's shape; `small` when the elements and the
// offsets of every view of the kernel (`views`) fit 32 bits.
Index IndexOf(const View& v, std::initializer_list<const View*> views = {}) {
  Index ix{v.rank, true, {}};
  int64_t n = 1;
  for (int d = 0; d < v.rank; ++d) {
    ix.shape[d] = v.shape[d];
    n *= v.shape[d];
  }
  constexpr int64_t kLimit = int64_t{1} << 31;
  ix.small = n < kLimit;
  for (const View* w : views) {
    int64_t reach = 0;
    for (int d = 0; d < w->rank; ++d) {
      if (w->strides[d] < 0) ix.small = false;
      reach += (w->shape[d] - 1) * w->strides[d];
    }
    if (reach >= kLimit) ix.small = false;
  }
  return ix;
}
Strides StridesOf(const View& v) {
  Strides s{{}, v.dense, 0};
  for (int d = 0; d < v.rank; ++d) s.s[d] = v.strides[d];
  // Trailing dimensions with row-major strides, then only broadcast (stride
  // 0) ones: the offset is the index modulo the trailing block's size.
  int64_t block = 1;
  int d = v.rank - 1;
  for (; d >= 0 && (v.strides[d] == block || v.shape[d] == 1); --d) block *= v.shape[d];
  bool rest_broadcast = true;
  for (int e = d; e >= 0; --e) rest_broadcast &= v.strides[e] == 0 || v.shape[e] == 1;
  if (rest_broadcast) s.mod = block > 0 ? block : 1;
  return s;
}
int64_t Numel(const View& v) {
  int64_t n = 1;
  for (int d = 0; d < v.rank; ++d) n *= v.shape[d];
  return n;
}

// Element i's offset in an operand that is dense, or a dense block repeated
// over leading dimensions (Strides::mod; a single element is mod 1).
__device__ __forceinline__ int64_t Flat(int64_t i, const Strides& s, bool small) {
  if (s.dense) return i;
  return small ? static_cast<uint32_t>(i) % static_cast<uint32_t>(s.mod) : i % s.mod;
}
__device__ __forceinline__ int64_t At(int64_t i, const Index& ix, const Strides& s) {
  return s.dense || s.mod > 0 ? Flat(i, s, ix.small) : Offset(i, ix, s.s);
}

// ---- packed access ----------------------------------------------------------
// Memory-bound kernels move L elements per load and store (16 bytes where
// the operands allow) and compute each offset once per pack.

// L elements of T as one aligned access.
template <class T, int L>
struct alignas(sizeof(T) * L) Vec {
  T v[L];
};

// Elements i .. i + L - 1 (i a multiple of L) of such an operand.
template <int L, class T>
__device__ __forceinline__ Vec<T, L> LoadVec(const T* p, int64_t i, const Strides& s, bool small) {
  if (!s.dense && s.mod == 1) {
    Vec<T, L> r;
#pragma unroll
    for (int j = 0; j < L; ++j) r.v[j] = p[0];
    return r;
  }
  return *reinterpret_cast<const Vec<T, L>*>(p + Flat(i, s, small));
}
// A grid-stride loop over n elements in packs of L: pack(p) for elements
// p * L .. p * L + L - 1, then one(i) for each element of the tail.
template <int L, class P, class O>
__device__ __forceinline__ void ForPacks(int64_t n, P&& pack, O&& one) {
  const int64_t packs = n / L;
  SINGA_GRID_LOOP(p, packs) pack(p);
  SINGA_GRID_LOOP(t, n - packs * L) one(packs * L + t);
}

// Float-like values through float (double stays double).
template <class T>
struct Acc {
  using type = T;
};
template <>
struct Acc<__half> {
  using type = float;
};
template <>
struct Acc<__nv_bfloat16> {
  using type = float;
};

template <class To, class From>
__device__ __forceinline__ To Convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (std::is_same_v<From, __half> || std::is_same_v<From, __nv_bfloat16>) {
    return Convert<To>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __half>) {
    return __float2half(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, __nv_bfloat16>) {
    return __float2bfloat16(static_cast<float>(v));
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else {
    return static_cast<To>(v);
  }
}

// A type as a value: the Visit functions call f(Tag<T>{}), T the C++ type of
// a dtype code.
template <class T>
struct Tag {
  using type = T;
};
// The dtype families of the kernels, each adding to the one before: floats
// (16-bit ones compute in float), arithmetic (plus int32 and int64), and
// every dtype a copy takes.
template <class F>
void VisitFloat(int code, F&& f) {
  switch (code) {
    case kF32:
      return f(Tag<float>{});
    case kF64:
      return f(Tag<double>{});
    case kF16:
      return f(Tag<__half>{});
    case kBF16:
      return f(Tag<__nv_bfloat16>{});
    default:
      throw std::runtime_error("CUDA kernels: no kernel for dtype code " + std::to_string(code));
  }
}
template <class F>
void VisitMath(int code, F&& f) {
  switch (code) {
    case kI32:
      return f(Tag<int32_t>{});
    case kI64:
      return f(Tag<int64_t>{});
    default:
      return VisitFloat(code, f);
  }
}
template <class F>
void VisitAll(int code, F&& f) {
  switch (code) {
    case kI8:
      return f(Tag<int8_t>{});
    case kU8:
      return f(Tag<uint8_t>{});
    case kI16:
      return f(Tag<int16_t>{});
    case kU16:
      return f(Tag<uint16_t>{});
    case kU32:
      return f(Tag<uint32_t>{});
    case kU64:
      return f(Tag<uint64_t>{});
    case kBool:
      return f(Tag<bool>{});
    default:
      return VisitMath(code, f);
  }
}
int Bytes(int code) {
  int n = 0;
  VisitAll(code, [&](auto tag) { n = sizeof(typename decltype(tag)::type); });
  return n;
}

// ---- copies ---------------------------------------------------------------

template <class TI, class TO>
__global__ void CopyKernel(const TI* src, Index ix, Strides ss, TO* dst, Strides ds, int64_t n) {
  SINGA_GRID_LOOP(i, n) dst[At(i, ix, ds)] = Convert<TO>(src[At(i, ix, ss)]);
}

struct InlineBytes {
  unsigned char b[kInlineBytes];
};
__global__ void InlineCopyKernel(InlineBytes src, unsigned char* dst, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) dst[i] = src.b[i];
}

template <class T>
__global__ void FillKernel(T* dst, Index ix, Strides ds, T v, int64_t n) {
  SINGA_GRID_LOOP(i, n) dst[At(i, ix, ds)] = v;
}

// ---- unary ----------------------------------------------------------------

template <Unary op, class A>
__device__ __forceinline__ A ApplyUnary(A x, A alpha, A beta) {
  switch (op) {  // a compile-time constant: one case is compiled
    case Unary::kAbs:
      return x < A(0) ? -x : x;
    case Unary::kNeg:
      return -x;
    case Unary::kExp:
      return exp(x);
    case Unary::kLog:
      return log(x);
    case Unary::kSqrt:
      return sqrt(x);
    case Unary::kReciprocal:
      return A(1) / x;
    case Unary::kSin:
      return sin(x);
    case Unary::kCos:
      return cos(x);
    case Unary::kTan:
      return tan(x);
    case Unary::kAsin:
      return asin(x);
    case Unary::kAcos:
      return acos(x);
    case Unary::kAtan:
      return atan(x);
    case Unary::kSinh:
      return sinh(x);
    case Unary::kCosh:
      return cosh(x);
    case Unary::kTanh:
      return tanh(x);
    case Unary::kAsinh:
      return asinh(x);
    case Unary::kAcosh:
      return acosh(x);
    case Unary::kAtanh:
      return atanh(x);
    case Unary::kCeil:
      return ceil(x);
    case Unary::kFloor:
      return floor(x);
    case Unary::kRound:
      return rint(x);  // half to even, as ONNX
    case Unary::kSign:
      return x > A(0) ? A(1) : (x < A(0) ? A(-1) : A(0));
    case Unary::kErf:
      return erf(x);
    case Unary::kRelu:
      return x > A(0) ? x : A(0);
    case Unary::kSigmoid:
      return x >= A(0) ? A(1) / (A(1) + exp(-x)) : exp(x) / (A(1) + exp(x));
    case Unary::kLeakyRelu:
      return x < A(0) ? alpha * x : x;
    case Unary::kElu:
      return x < A(0) ? alpha * (exp(x) - A(1)) : x;
    case Unary::kSelu:
      return x <= A(0) ? beta * (alpha * exp(x) - alpha) : beta * x;
    case Unary::kHardSigmoid: {
      const A v = alpha * x + beta;
      return v < A(0) ? A(0) : (v > A(1) ? A(1) : v);
    }
    case Unary::kHardSwish: {
      const A v = x / A(6) + A(0.5);
      return x * (v < A(0) ? A(0) : (v > A(1) ? A(1) : v));
    }
    case Unary::kSoftplus:
      return x > A(20) ? x : log1p(exp(x));
    case Unary::kSoftsign:
      return x / (A(1) + (x < A(0) ? -x : x));
    case Unary::kGelu:
      return A(0.5) * x * (A(1) + erf(x * A(0.70710678118654752440)));
    case Unary::kGeluTanh: {
      const A k = A(0.79788456080286535588);  // sqrt(2 / pi)
      return A(0.5) * x * (A(1) + tanh(k * (x + A(0.044715) * x * x * x)));
    }
  }
  return x;
}

// One kernel per op and dtype: the op's code alone, no switch at run time.
// Dense, 16-byte aligned input and output: 16 bytes per load and store.
template <Unary op, class T>
__global__ void UnaryDenseKernel(const T* x, T* y, float alpha, float beta, int64_t n) {
  using A = typename Acc<T>::type;
  constexpr int L = 16 / sizeof(T);
  const A a = static_cast<A>(alpha), b = static_cast<A>(beta);
  ForPacks<L>(
      n,
      [&](int64_t p) {
        const Vec<T, L> in = reinterpret_cast<const Vec<T, L>*>(x)[p];
        Vec<T, L> out;
#pragma unroll
        for (int j = 0; j < L; ++j)
          out.v[j] = Convert<T>(ApplyUnary<op, A>(static_cast<A>(in.v[j]), a, b));
        reinterpret_cast<Vec<T, L>*>(y)[p] = out;
      },
      [&](int64_t i) { y[i] = Convert<T>(ApplyUnary<op, A>(static_cast<A>(x[i]), a, b)); });
}

template <Unary op, class T>
__global__ void UnaryKernel(const T* x, Index ix, Strides xs, T* y, float alpha, float beta,
                            int64_t n) {
  using A = typename Acc<T>::type;
  const A a = static_cast<A>(alpha), b = static_cast<A>(beta);
  SINGA_GRID_LOOP(i, n)
  y[i] = Convert<T>(ApplyUnary<op, A>(static_cast<A>(x[At(i, ix, xs)]), a, b));
}

// ---- binary ---------------------------------------------------------------

template <Binary op, class A>
__device__ __forceinline__ A ApplyArith(A a, A b) {
  switch (op) {
    case Binary::kAdd:
      return a + b;
    case Binary::kSub:
      return a - b;
    case Binary::kMul:
      return a * b;
    case Binary::kDiv:
      return a / b;
    case Binary::kPow:
      if constexpr (std::is_floating_point_v<A>) return pow(a, b);
      return A(0);
    case Binary::kMax:
      return a > b ? a : b;
    case Binary::kMin:
      return a < b ? a : b;
    default:
      return A(0);
  }
}
template <Binary op, class A>
__device__ __forceinline__ bool ApplyCompare(A a, A b) {
  switch (op) {
    case Binary::kEqual:
      return a == b;
    case Binary::kLess:
      return a < b;
    case Binary::kGreater:
      return a > b;
    case Binary::kLessOrEqual:
      return a <= b;
    case Binary::kGreaterOrEqual:
      return a >= b;
    case Binary::kAnd:
      return a != A(0) && b != A(0);
    case Binary::kOr:
      return a != A(0) || b != A(0);
    case Binary::kXor:
      return (a != A(0)) != (b != A(0));
    default:
      return false;
  }
}

template <Binary op, class T>
__global__ void ArithKernel(const T* a, Strides as, const T* b, Strides bs, Index ix, T* c,
                            int64_t n) {
  using A = typename Acc<T>::type;
  SINGA_GRID_LOOP(i, n) {
    const A x = static_cast<A>(a[At(i, ix, as)]), y = static_cast<A>(b[At(i, ix, bs)]);
    c[i] = Convert<T>(ApplyArith<op, A>(x, y));
  }
}
// An arithmetic op's value in A, a comparison's as bool.
template <Binary op, class A>
__device__ __forceinline__ auto ApplyBinary(A x, A y) {
  if constexpr (op >= Binary::kEqual)
    return ApplyCompare<op, A>(x, y);
  else
    return ApplyArith<op, A>(x, y);
}
template <Binary op, class T>
using BinaryOut = std::conditional_t<(op >= Binary::kEqual), bool, T>;

// Operands that are dense, repeated blocks of whole packs, or one element
// (a bias, a scalar), read in packs of L; c dense.
template <Binary op, class T, int L>
__global__ void BinaryPackedKernel(const T* a, Strides as, const T* b, Strides bs, bool small,
                                   BinaryOut<op, T>* c, int64_t n) {
  using A = typename Acc<T>::type;
  using O = BinaryOut<op, T>;
  ForPacks<L>(
      n,
      [&](int64_t p) {
        const Vec<T, L> x = LoadVec<L>(a, p * L, as, small), y = LoadVec<L>(b, p * L, bs, small);
        Vec<O, L> z;
#pragma unroll
        for (int j = 0; j < L; ++j)
          z.v[j] = Convert<O>(ApplyBinary<op, A>(static_cast<A>(x.v[j]), static_cast<A>(y.v[j])));
        reinterpret_cast<Vec<O, L>*>(c)[p] = z;
      },
      [&](int64_t i) {
        c[i] = Convert<O>(ApplyBinary<op, A>(static_cast<A>(a[Flat(i, as, small)]),
                                             static_cast<A>(b[Flat(i, bs, small)])));
      });
}
template <Binary op, class T>
__global__ void CompareKernel(const T* a, Strides as, const T* b, Strides bs, Index ix, bool* c,
                              int64_t n) {
  using A = typename Acc<T>::type;
  SINGA_GRID_LOOP(i, n) {
    c[i] = ApplyCompare<op, A>(static_cast<A>(a[At(i, ix, as)]), static_cast<A>(b[At(i, ix, bs)]));
  }
}

// Calls f(Op<op>{}) with op as a compile-time constant.
template <class E, E V>
struct Op {
  static constexpr E value = V;
};
template <class F>
void VisitUnary(Unary op, F&& f) {
  switch (op) {
#define SINGA_CUDA_CASE(NAME) \
  case Unary::k##NAME:        \
    return f(Op<Unary, Unary::k##NAME>{});
    SINGA_CUDA_UNARY_OPS(SINGA_CUDA_CASE)
#undef SINGA_CUDA_CASE
  }
}
template <class F>
void VisitArith(Binary op, F&& f) {
  switch (op) {
#define SINGA_CUDA_CASE(NAME) \
  case Binary::k##NAME:       \
    return f(Op<Binary, Binary::k##NAME>{});
    SINGA_CUDA_ARITH_OPS(SINGA_CUDA_CASE)
#undef SINGA_CUDA_CASE
    default:
      throw std::runtime_error("CUDA kernels: not an arithmetic op");
  }
}
template <class F>
void VisitCompare(Binary op, F&& f) {
  switch (op) {
#define SINGA_CUDA_CASE(NAME) \
  case Binary::k##NAME:       \
    return f(Op<Binary, Binary::k##NAME>{});
    SINGA_CUDA_COMPARE_OPS(SINGA_CUDA_CASE)
#undef SINGA_CUDA_CASE
    default:
      throw std::runtime_error("CUDA kernels: not a comparison");
  }
}

// Any dtype moves through the unsigned integer of its width.
template <class T>
__global__ void WhereKernel(const bool* cond, Strides cs, const T* a, Strides as, const T* b,
                            Strides bs, Index ix, T* c, int64_t n) {
  SINGA_GRID_LOOP(i, n) c[i] = cond[At(i, ix, cs)] ? a[At(i, ix, as)] : b[At(i, ix, bs)];
}
// Where over packable operands (as BinaryPackedKernel): a gradient mask.
template <class T, int L>
__global__ void WherePackedKernel(const bool* cond, Strides cs, const T* a, Strides as, const T* b,
                                  Strides bs, bool small, T* c, int64_t n) {
  ForPacks<L>(
      n,
      [&](int64_t p) {
        const Vec<bool, L> k = LoadVec<L>(cond, p * L, cs, small);
        const Vec<T, L> x = LoadVec<L>(a, p * L, as, small), y = LoadVec<L>(b, p * L, bs, small);
        Vec<T, L> z;
#pragma unroll
        for (int j = 0; j < L; ++j) z.v[j] = k.v[j] ? x.v[j] : y.v[j];
        reinterpret_cast<Vec<T, L>*>(c)[p] = z;
      },
      [&](int64_t i) {
        c[i] = cond[Flat(i, cs, small)] ? a[Flat(i, as, small)] : b[Flat(i, bs, small)];
      });
}

template <class F>
void VisitWord(int bytes, F&& f) {
  switch (bytes) {
    case 1:
      return f(Tag<uint8_t>{});
    case 2:
      return f(Tag<uint16_t>{});
    case 4:
      return f(Tag<uint32_t>{});
    case 8:
      return f(Tag<uint64_t>{});
    default:
      throw std::runtime_error("CUDA kernels: no copy for elements of " + std::to_string(bytes) +
                               " bytes");
  }
}

// ---- softmax --------------------------------------------------------------

// One block per (outer, inner) row: max, sum of exp, then the outputs.
template <class T>
__global__ void SoftmaxKernel(const T* x, T* y, int64_t n, int64_t inner, bool log_out) {
  using A = typename Acc<T>::type;
  __shared__ A red[kThreads];
  const int64_t row = blockIdx.x;
  const int64_t base = (row / inner) * n * inner + row % inner;
  A m = -INFINITY;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const A v = static_cast<A>(x[base + j * inner]);
    m = v > m ? v : m;
  }
  red[threadIdx.x] = m;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s && red[threadIdx.x + s] > red[threadIdx.x])
      red[threadIdx.x] = red[threadIdx.x + s];
    __syncthreads();
  }
  m = red[0];
  __syncthreads();
  A sum = 0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    sum += exp(static_cast<A>(x[base + j * inner]) - m);
  red[threadIdx.x] = sum;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) red[threadIdx.x] += red[threadIdx.x + s];
    __syncthreads();
  }
  sum = red[0];
  const A lsum = log(sum);
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x) {
    const A v = static_cast<A>(x[base + j * inner]) - m;
    y[base + j * inner] = Convert<T>(log_out ? v - lsum : exp(v) / sum);
  }
}

// Rows of at most 1024 contiguous elements: one warp per row, the row in
// registers (kPer elements a lane, in packs of L), max and sum by warp
// shuffles; each exp is computed once.
template <class T, int kPer, int L>
__global__ void SoftmaxWarpKernel(const T* x, T* y, int64_t rows, int n, bool log_out) {
  using A = typename Acc<T>::type;
  constexpr int kPacks = kPer / L;
  const int64_t row = blockIdx.x * static_cast<int64_t>(blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows) return;
  const T* xr = x + row * n;
  T* yr = y + row * n;
  A v[kPer];
  A m = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int k = (lane + j * 32) * L;
    if (k < n) {
      const Vec<T, L> in = *reinterpret_cast<const Vec<T, L>*>(xr + k);
#pragma unroll
      for (int q = 0; q < L; ++q) {
        v[j * L + q] = static_cast<A>(in.v[q]);
        m = v[j * L + q] > m ? v[j * L + q] : m;
      }
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) {
    const A other = __shfl_xor_sync(0xffffffff, m, o);
    m = other > m ? other : m;
  }
  A sum = 0;
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    if ((lane + j * 32) * L >= n) continue;
#pragma unroll
    for (int q = 0; q < L; ++q) {
      const A e = exp(v[j * L + q] - m);
      sum += e;
      if (!log_out) v[j * L + q] = e;
    }
  }
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, o);
  const A lsum = log(sum), r = A(1) / sum;
#pragma unroll
  for (int j = 0; j < kPacks; ++j) {
    const int k = (lane + j * 32) * L;
    if (k >= n) continue;
    Vec<T, L> out;
#pragma unroll
    for (int q = 0; q < L; ++q)
      out.v[q] = Convert<T>(log_out ? v[j * L + q] - m - lsum : v[j * L + q] * r);
    *reinterpret_cast<Vec<T, L>*>(yr + k) = out;
  }
}

// ---- reductions -----------------------------------------------------------

// One thread per output element; it walks the reduced dimensions.
template <class T>
__global__ void ReduceKernel(const T* x, Index xi, Strides xs, Index red, T* y, Index yi,
                             int64_t count, bool mean, int64_t n) {
  using A = typename Acc<T>::type;
  SINGA_GRID_LOOP(o, n) {
    // The input offset of this output's first element.
    int64_t base = 0, r = o;
#pragma unroll
    for (int d = kMaxRank - 1; d >= 0; --d) {
      if (d < yi.rank) {
        base += (r % yi.shape[d]) * xs.s[d];
        r /= yi.shape[d];
      }
    }
    A acc = 0;
    for (int64_t k = 0; k < count; ++k) {
      int64_t off = base, q = k;
#pragma unroll
      for (int d = kMaxRank - 1; d >= 0; --d) {
        if (d < red.rank && red.shape[d] != 1) {
          off += (q % red.shape[d]) * xs.s[d];
          q /= red.shape[d];
        }
      }
      acc += static_cast<A>(x[off]);
    }
    if (mean) acc = acc / static_cast<A>(count);
    y[o] = Convert<T>(acc);
  }
}

// A dense x seen as [outer, r, inner], reduced over r. Blocks of 32 x 8
// threads: x along inner (coalesced reads), y splitting r; the 8 partial
// sums meet in shared memory.
template <class T>
__global__ void ReduceMiddleKernel(const T* x, T* y, int64_t outer, int64_t r, int64_t inner,
                                   bool mean) {
  using A = typename Acc<T>::type;
  __shared__ A part[8][33];
  const int64_t col = blockIdx.x * 32 + threadIdx.x;
  for (int64_t o = blockIdx.y; o < outer; o += gridDim.y) {
    A acc = 0;
    if (col < inner)
      for (int64_t k = threadIdx.y; k < r; k += 8)
        acc += static_cast<A>(x[(o * r + k) * inner + col]);
    part[threadIdx.y][threadIdx.x] = acc;
    __syncthreads();
    if (threadIdx.y == 0 && col < inner) {
      A sum = 0;
      for (int j = 0; j < 8; ++j) sum += part[j][threadIdx.x];
      if (mean) sum = sum / static_cast<A>(r);
      y[o * inner + col] = Convert<T>(sum);
    }
    __syncthreads();
  }
}

// A dense x seen as [rows, r], each row summed by a block.
template <class T>
__global__ void ReduceRowsKernel(const T* x, T* y, int64_t rows, int64_t r, bool mean) {
  using A = typename Acc<T>::type;
  __shared__ A part[kThreads / 32];
  for (int64_t o = blockIdx.x; o < rows; o += gridDim.x) {
    A acc = 0;
    for (int64_t k = threadIdx.x; k < r; k += blockDim.x) acc += static_cast<A>(x[o * r + k]);
    for (int m = 16; m > 0; m >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, m);
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = acc;
    __syncthreads();
    if (threadIdx.x == 0) {
      A sum = 0;
      for (int j = 0; j < kThreads / 32; ++j) sum += part[j];
      if (mean) sum = sum / static_cast<A>(r);
      y[o] = Convert<T>(sum);
    }
    __syncthreads();
  }
}

// Clip and its gradient over dense tensors in packs of L, as the CPU loops
// compute them: t = x < lo ? lo : x; y = t > hi ? hi : t (NaN passes); the
// gradient passes dy where neither bound applied. lo and hi point at one
// element, or are null.
template <class A>
struct Bounds {
  bool has_lo, has_hi;
  A lo, hi;
  template <class T>
  __device__ Bounds(const T* l, const T* h)
      : has_lo(l != nullptr),
        has_hi(h != nullptr),
        lo(has_lo ? static_cast<A>(*l) : A(0)),
        hi(has_hi ? static_cast<A>(*h) : A(0)) {}
  __device__ A Clip(A t) const {
    if (has_lo && t < lo) t = lo;
    if (has_hi && t > hi) t = hi;
    return t;
  }
  __device__ bool Passes(A v) const {
    const bool below = has_lo && v < lo;
    return !below && !(has_hi && v > hi);
  }
};

template <class T, int L>
__global__ void ClipKernel(const T* x, const T* lo, const T* hi, T* y, int64_t n) {
  using A = typename Acc<T>::type;
  const Bounds<A> bounds(lo, hi);
  ForPacks<L>(
      n,
      [&](int64_t p) {
        const Vec<T, L> in = reinterpret_cast<const Vec<T, L>*>(x)[p];
        Vec<T, L> out;
#pragma unroll
        for (int j = 0; j < L; ++j) out.v[j] = Convert<T>(bounds.Clip(static_cast<A>(in.v[j])));
        reinterpret_cast<Vec<T, L>*>(y)[p] = out;
      },
      [&](int64_t i) { y[i] = Convert<T>(bounds.Clip(static_cast<A>(x[i]))); });
}

template <class T, int L>
__global__ void ClipGradKernel(const T* dy, const T* x, const T* lo, const T* hi, T* dx,
                               int64_t n) {
  using A = typename Acc<T>::type;
  const Bounds<A> bounds(lo, hi);
  const T zero = Convert<T>(A(0));
  ForPacks<L>(
      n,
      [&](int64_t p) {
        const Vec<T, L> g = reinterpret_cast<const Vec<T, L>*>(dy)[p];
        const Vec<T, L> v = reinterpret_cast<const Vec<T, L>*>(x)[p];
        Vec<T, L> out;
#pragma unroll
        for (int j = 0; j < L; ++j)
          out.v[j] = bounds.Passes(static_cast<A>(v.v[j])) ? g.v[j] : zero;
        reinterpret_cast<Vec<T, L>*>(dx)[p] = out;
      },
      [&](int64_t i) { dx[i] = bounds.Passes(static_cast<A>(x[i])) ? dy[i] : zero; });
}

bool Aligned16(const void* p) { return reinterpret_cast<uintptr_t>(p) % 16 == 0; }

// Calls f with the pack width for dense buffers of T: 16 bytes where every
// pointer is aligned to it, else one element.
template <class T, class F>
void WithLanes(std::initializer_list<const void*> ptrs, F&& f) {
  bool aligned = true;
  for (const void* p : ptrs) aligned &= Aligned16(p);
  if (aligned)
    f(std::integral_constant<int, 16 / sizeof(T)>{});
  else
    f(std::integral_constant<int, 1>{});
}

}  // namespace

void Clip(const void* x, const void* lo, const void* hi, void* y, int dtype, int64_t n,
          void* stream) {
  if (n == 0) return;
  VisitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithLanes<T>({x, y}, [&](auto lanes) {
      constexpr int L = decltype(lanes)::value;
      ClipKernel<T, L><<<Blocks(n / L + 1), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
          static_cast<const T*>(x), static_cast<const T*>(lo), static_cast<const T*>(hi),
          static_cast<T*>(y), n);
    });
  });
  Check(cudaGetLastError(), "clip kernel");
}

void ClipGrad(const void* dy, const void* x, const void* lo, const void* hi, void* dx, int dtype,
              int64_t n, void* stream) {
  if (n == 0) return;
  VisitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    WithLanes<T>({dy, x, dx}, [&](auto lanes) {
      constexpr int L = decltype(lanes)::value;
      ClipGradKernel<T, L><<<Blocks(n / L + 1), kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
          static_cast<const T*>(dy), static_cast<const T*>(x), static_cast<const T*>(lo),
          static_cast<const T*>(hi), static_cast<T*>(dx), n);
    });
  });
  Check(cudaGetLastError(), "clip gradient kernel");
}

bool CopyDType(int dtype) {
  switch (dtype) {
    case kF32:
    case kU8:
    case kI8:
    case kU16:
    case kI16:
    case kI32:
    case kI64:
    case kBool:
    case kF16:
    case kF64:
    case kU32:
    case kU64:
    case kBF16:
      return true;
    default:
      return false;
  }
}

void Copy(const View& src, const View& dst, void* stream) {
  const int64_t n = Numel(dst);
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  if (src.dtype == dst.dtype) {
    if (src.dense && dst.dense) {
      Check(cudaMemcpyAsync(dst.data, src.data, n * Bytes(dst.dtype), cudaMemcpyDeviceToDevice, s),
            "cudaMemcpyAsync");
      return;
    }
    VisitWord(Bytes(dst.dtype), [&](auto tag) {
      using W = typename decltype(tag)::type;
      CopyKernel<W, W><<<Blocks(n), kThreads, 0, s>>>(static_cast<const W*>(src.data),
                                                      IndexOf(dst, {&src, &dst}), StridesOf(src),
                                                      static_cast<W*>(dst.data), StridesOf(dst), n);
    });
  } else {
    VisitAll(src.dtype, [&](auto ti) {
      VisitAll(dst.dtype, [&](auto to) {
        using TI = typename decltype(ti)::type;
        using TO = typename decltype(to)::type;
        CopyKernel<TI, TO><<<Blocks(n), kThreads, 0, s>>>(
            static_cast<const TI*>(src.data), IndexOf(dst, {&src, &dst}), StridesOf(src),
            static_cast<TO*>(dst.data), StridesOf(dst), n);
      });
    });
  }
  Check(cudaGetLastError(), "copy kernel");
}

void CopyInline(const void* host, int64_t bytes, void* dst, void* stream) {
  if (bytes == 0) return;
  if (bytes > kInlineBytes) throw std::runtime_error("CopyInline: more than kInlineBytes");
  InlineBytes p;
  std::memcpy(p.b, host, static_cast<size_t>(bytes));
  InlineCopyKernel<<<1, kThreads, 0, static_cast<cudaStream_t>(stream)>>>(
      p, static_cast<unsigned char*>(dst), static_cast<int>(bytes));
  Check(cudaGetLastError(), "inline copy kernel");
}

void Fill(const View& dst, double value, void* stream) {
  const int64_t n = Numel(dst);
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  if (value == 0 && dst.dense) {
    Check(cudaMemsetAsync(dst.data, 0, n * Bytes(dst.dtype), s), "cudaMemsetAsync");
    return;
  }
  VisitAll(dst.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T v;
    if constexpr (std::is_same_v<T, __half>)
      v = __float2half(static_cast<float>(value));
    else if constexpr (std::is_same_v<T, __nv_bfloat16>)
      v = __float2bfloat16(static_cast<float>(value));
    else if constexpr (std::is_same_v<T, bool>)
      v = value != 0;
    else
      v = static_cast<T>(value);
    FillKernel<T><<<Blocks(n), kThreads, 0, s>>>(static_cast<T*>(dst.data), IndexOf(dst, {&dst}),
                                                 StridesOf(dst), v, n);
  });
  Check(cudaGetLastError(), "fill kernel");
}

// Whether an operand can be read in packs of `lanes` elements of `bytes`
// each (LoadVec): one element, or dense or a repeated block of whole packs,
// aligned to a pack.
bool Packable(const View& v, const Strides& s, int lanes, int bytes) {
  if (!s.dense && s.mod == 1) return true;
  if (!s.dense && (s.mod <= 0 || s.mod % lanes != 0)) return false;
  return reinterpret_cast<uintptr_t>(v.data) % (lanes * bytes) == 0;
}

void UnaryOp(Unary op, const View& x, const View& y, float alpha, float beta, void* stream) {
  const int64_t n = Numel(y);
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const bool packed = x.dense && Aligned16(x.data) && Aligned16(y.data);
  VisitFloat(y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    VisitUnary(op, [&](auto o) {
      constexpr Unary kOp = decltype(o)::value;
      if (packed)
        UnaryDenseKernel<kOp, T><<<Blocks(n / (16 / sizeof(T)) + 1), kThreads, 0, s>>>(
            static_cast<const T*>(x.data), static_cast<T*>(y.data), alpha, beta, n);
      else
        UnaryKernel<kOp, T><<<Blocks(n), kThreads, 0, s>>>(static_cast<const T*>(x.data),
                                                           IndexOf(y, {&x}), StridesOf(x),
                                                           static_cast<T*>(y.data), alpha, beta, n);
    });
  });
  Check(cudaGetLastError(), "unary kernel");
}

void BinaryOp(Binary op, const View& a, const View& b, const View& c, void* stream) {
  const int64_t n = Numel(c);
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const Index ix = IndexOf(c, {&a, &b});
  const Strides as = StridesOf(a), bs = StridesOf(b);
  auto launch = [&](auto tag, auto o) {
    using T = typename decltype(tag)::type;
    constexpr Binary kOp = decltype(o)::value;
    constexpr int L = 16 / sizeof(T);
    const T *pa = static_cast<const T*>(a.data), *pb = static_cast<const T*>(b.data);
    auto* pc = static_cast<BinaryOut<kOp, T>*>(c.data);
    if (c.dense && Aligned16(c.data) && Packable(a, as, L, sizeof(T)) &&
        Packable(b, bs, L, sizeof(T)))
      BinaryPackedKernel<kOp, T, L>
          <<<Blocks(n / L + 1), kThreads, 0, s>>>(pa, as, pb, bs, ix.small, pc, n);
    else if constexpr (kOp >= Binary::kEqual)
      CompareKernel<kOp, T><<<Blocks(n), kThreads, 0, s>>>(pa, as, pb, bs, ix, pc, n);
    else
      ArithKernel<kOp, T><<<Blocks(n), kThreads, 0, s>>>(pa, as, pb, bs, ix, pc, n);
  };
  if (op >= Binary::kEqual) {
    auto compare = [&](auto tag) { VisitCompare(op, [&](auto o) { launch(tag, o); }); };
    if (a.dtype == kBool)
      compare(Tag<bool>{});
    else
      VisitMath(a.dtype, compare);
  } else {
    VisitMath(a.dtype, [&](auto tag) { VisitArith(op, [&](auto o) { launch(tag, o); }); });
  }
  Check(cudaGetLastError(), "binary kernel");
}

void WhereOp(const View& cond, const View& a, const View& b, const View& c, void* stream) {
  const int64_t n = Numel(c);
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  const Strides cs = StridesOf(cond), as = StridesOf(a), bs = StridesOf(b);
  const Index ix = IndexOf(c, {&cond, &a, &b});
  VisitWord(Bytes(c.dtype), [&](auto tag) {
    using W = typename decltype(tag)::type;
    constexpr int L = 16 / sizeof(W);
    const auto* pc = static_cast<const bool*>(cond.data);
    const W *pa = static_cast<const W*>(a.data), *pb = static_cast<const W*>(b.data);
    if (c.dense && Aligned16(c.data) && Packable(cond, cs, L, 1) && Packable(a, as, L, sizeof(W)) &&
        Packable(b, bs, L, sizeof(W)))
      WherePackedKernel<W, L><<<Blocks(n / L + 1), kThreads, 0, s>>>(
          pc, cs, pa, as, pb, bs, ix.small, static_cast<W*>(c.data), n);
    else
      WhereKernel<W>
          <<<Blocks(n), kThreads, 0, s>>>(pc, cs, pa, as, pb, bs, ix, static_cast<W*>(c.data), n);
  });
  Check(cudaGetLastError(), "where kernel");
}

void Softmax(const void* x, void* y, int dtype, int64_t outer, int64_t n, int64_t inner, bool log,
             void* stream) {
  const int64_t rows = outer * inner;
  if (rows == 0 || n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  VisitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if (inner == 1 && n <= 1024) {
      constexpr int kRowsPerBlock = kThreads / 32;
      const auto blocks = static_cast<unsigned>((rows + kRowsPerBlock - 1) / kRowsPerBlock);
      // Packs of up to 16 bytes where the rows are whole packs, aligned.
      auto launch = [&](auto per) {
        constexpr int kPer = decltype(per)::value;
        constexpr int kL = 16 / sizeof(T) < kPer ? 16 / sizeof(T) : kPer;
        const bool packed = n % kL == 0 && reinterpret_cast<uintptr_t>(x) % (kL * sizeof(T)) == 0 &&
                            reinterpret_cast<uintptr_t>(y) % (kL * sizeof(T)) == 0;
        auto go = [&](auto lanes) {
          SoftmaxWarpKernel<T, kPer, decltype(lanes)::value><<<blocks, kThreads, 0, s>>>(
              static_cast<const T*>(x), static_cast<T*>(y), rows, static_cast<int>(n), log);
        };
        if (packed)
          go(std::integral_constant<int, kL>{});
        else
          go(std::integral_constant<int, 1>{});
      };
      const int64_t per = (n + 31) / 32;
      if (per <= 1)
        launch(std::integral_constant<int, 1>{});
      else if (per <= 2)
        launch(std::integral_constant<int, 2>{});
      else if (per <= 4)
        launch(std::integral_constant<int, 4>{});
      else if (per <= 8)
        launch(std::integral_constant<int, 8>{});
      else if (per <= 16)
        launch(std::integral_constant<int, 16>{});
      else
        launch(std::integral_constant<int, 32>{});
      return;
    }
    SoftmaxKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, s>>>(
        static_cast<const T*>(x), static_cast<T*>(y), n, inner, log);
  });
  Check(cudaGetLastError(), "softmax kernel");
}

namespace {
// Whether x's dimensions [from, to) all have size 1.
bool AllOnes(const View& x, int from, int to) {
  for (int d = from; d < to; ++d)
    if (x.shape[d] != 1) return false;
  return true;
}
}  // namespace

void ReduceSum(const View& x, const View& y, const bool* reduced, bool mean, void* stream) {
  const int64_t n = Numel(y);
  if (n == 0) return;
  auto s = static_cast<cudaStream_t>(stream);
  Index red{x.rank, {}};
  int64_t count = 1;
  for (int d = 0; d < x.rank; ++d) {
    red.shape[d] = reduced[d] ? x.shape[d] : 1;
    count *= red.shape[d];
  }
  // A dense x reduced over one run of dimensions [lo, hi] (dimensions of
  // size 1 aside) is [outer, r, inner]: the kernels that split the work over
  // many threads per output. Others walk each output's elements in a thread.
  int lo = -1, hi = -1;
  bool run = x.dense && y.dense;
  for (int d = 0; d < x.rank; ++d) {
    if (x.shape[d] == 1) continue;
    if (reduced[d]) {
      if (lo < 0)
        lo = d;
      else if (hi != d - 1 && !AllOnes(x, hi + 1, d))
        run = false;
      hi = d;
    }
  }
  if (run && lo >= 0) {
    int64_t outer = 1, r = 1, inner = 1;
    for (int d = 0; d < x.rank; ++d) (d < lo ? outer : d <= hi ? r : inner) *= x.shape[d];
    VisitFloat(y.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      const T* px = static_cast<const T*>(x.data);
      T* py = static_cast<T*>(y.data);
      if (inner == 1) {
        const auto blocks = static_cast<unsigned>(outer < (1 << 20) ? outer : (1 << 20));
        ReduceRowsKernel<T><<<blocks, kThreads, 0, s>>>(px, py, outer, r, mean);
      } else {
        const dim3 grid(static_cast<unsigned>((inner + 31) / 32),
                        static_cast<unsigned>(outer < 65535 ? outer : 65535));
        ReduceMiddleKernel<T><<<grid, dim3(32, 8), 0, s>>>(px, py, outer, r, inner, mean);
      }
    });
    Check(cudaGetLastError(), "reduce kernel");
    return;
  }
  VisitFloat(y.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    ReduceKernel<T><<<Blocks(n), kThreads, 0, s>>>(static_cast<const T*>(x.data), IndexOf(x),
                                                   StridesOf(x), red, static_cast<T*>(y.data),
                                                   IndexOf(y), count, mean, n);
  });
  Check(cudaGetLastError(), "reduce kernel");
}

}  // namespace singa::cuda::kernels
