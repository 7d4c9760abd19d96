// ReduceSum, ReduceMean, ReduceMax, ReduceMin, ReduceProd, ReduceL1, ReduceL2,
// ReduceLogSum, ReduceLogSumExp, ReduceSumSquare: reduce `data` over `axes`
// (all axes when empty, none when noop_with_empty_axes is set), keeping the
// reduced axes as size 1 when keepdims. A reduction over zero elements gives
// the identity: 0 for sums, 1 for Prod, -inf/+inf (or the integer extremes)
// for Max/Min, -inf for the log reductions, NaN for a float Mean.
// Opset 11 takes axes as an attribute; opset 13 (ReduceSum) and 18 (the
// others) take them as an optional input and add noop_with_empty_axes.
// https://onnx.ai/onnx/operators/onnx__ReduceSum.html (and the others alike)
#include <cmath>
#include <limits>
#include <optional>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct ReduceAttrs {
  std::optional<std::vector<int64_t>> axes;  // the attribute (opset 11); unset = all
  int64_t keepdims = 1;
  int64_t noop_with_empty_axes = 0;
};

enum class Kind { kSum, kMean, kMax, kMin, kProd, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

// The axes to reduce, from the attribute or the optional input.
std::vector<int64_t> AxesArg(const std::optional<std::vector<int64_t>>& attr, const Tensor* input) {
  if (input && input->defined()) return input->ToVector<int64_t>();
  return attr.value_or(std::vector<int64_t>{});
}

// reduced[d] for every axis d of a rank-`rank` input. Throws ShapeError
// prefixed with `where` for out-of-range or repeated axes.
std::vector<bool> ReducedMask(int64_t rank, const std::vector<int64_t>& axes, bool noop,
                              const std::string& where) {
  std::vector<bool> mask(rank, axes.empty() && !noop);
  for (int64_t ax : axes) {
    SINGA_CHECK(ax >= -rank && ax < rank, ShapeError,
                where << ": axis " << ax << " is out of range for rank " << rank);
    int64_t d = ax < 0 ? ax + rank : ax;
    SINGA_CHECK(!mask[d], ShapeError, where << ": axis " << ax << " appears twice in axes");
    mask[d] = true;
  }
  return mask;
}

SpecList ReduceInfer(const InferCtx& c, const ReduceAttrs& a) {
  std::vector<int64_t> axes =
      c.has_input(1) ? ops::ReadInts(c, 1) : a.axes.value_or(std::vector<int64_t>{});
  std::vector<bool> mask = ReducedMask(c.rank(0), axes, a.noop_with_empty_axes != 0, c.where());
  Shape out;
  for (int64_t d = 0; d < c.rank(0); ++d) {
    if (!mask[d])
      out.push_back(c.shape(0)[d]);
    else if (a.keepdims)
      out.push_back(1);
  }
  return {{c.dtype(0), out}};
}

template <class T>
constexpr bool kIsFloat =
    std::is_floating_point_v<T> || std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

// One reduction: contributions Map(v, shift) are folded with Combine starting
// from Init; Final turns the accumulator of n elements into the output.
// `shift` is used by the exp-sum pass of LogSumExp only.
template <Kind K, class T>
struct Reducer {
  using A = std::conditional_t<std::is_same_v<T, bool>, bool, Acc<T>>;
  using Out = T;
  static constexpr bool kShift = K == Kind::kLogSumExp;

  static A Init() {
    if constexpr (K == Kind::kProd) return A(1);
    if constexpr (K == Kind::kMax) {
      if constexpr (kIsFloat<T>) return -std::numeric_limits<A>::infinity();
      return std::numeric_limits<A>::lowest();
    }
    if constexpr (K == Kind::kMin) {
      if constexpr (kIsFloat<T>) return std::numeric_limits<A>::infinity();
      return std::numeric_limits<A>::max();
    }
    return A(0);
  }
  static A Map(T x, A shift) {
    A v = static_cast<A>(x);
    if constexpr (K == Kind::kL1) {
      if constexpr (std::is_signed_v<A>) return v < 0 ? A(-v) : v;
      return v;
    }
    if constexpr (K == Kind::kL2 || K == Kind::kSumSquare) return A(v * v);
    if constexpr (K == Kind::kLogSumExp) return std::exp(v - shift);
    return v;
  }
  static A Combine(A a, A b) {
    if constexpr (K == Kind::kMax || K == Kind::kMin) {
      if constexpr (std::is_same_v<A, bool>) return K == Kind::kMax ? (a || b) : (a && b);
      // NaN wins, as numpy's maximum/minimum propagate it.
      if constexpr (kIsFloat<T>)
        if (b != b) return b;
      return K == Kind::kMax ? (b > a ? b : a) : (b < a ? b : a);
    } else if constexpr (K == Kind::kProd) {
      return A(a * b);
    } else {
      return A(a + b);
    }
  }
  static T Final(A a, int64_t n, A shift) {
    if constexpr (K == Kind::kMean) {
      if constexpr (kIsFloat<T>) return static_cast<T>(a / static_cast<A>(n));
      return n == 0 ? T(0) : static_cast<T>(a / static_cast<A>(n));
    } else if constexpr (K == Kind::kL2) {
      return static_cast<T>(std::sqrt(static_cast<double>(a)));
    } else if constexpr (K == Kind::kLogSum) {
      return static_cast<T>(std::log(a));
    } else if constexpr (K == Kind::kLogSumExp) {
      return static_cast<T>(std::log(a) + shift);
    } else {
      return static_cast<T>(a);
    }
  }
};

// LogSumExp's first pass: the largest finite value (0 when there is none), by
// which the exp-sum pass shifts its arguments so exp cannot overflow.
template <class T>
struct MaxFinite {
  using A = Acc<T>;
  using Out = A;
  static constexpr bool kShift = false;
  static A Init() { return -std::numeric_limits<A>::infinity(); }
  static A Map(T x, A) {
    A v = static_cast<A>(x);
    return std::isfinite(v) ? v : -std::numeric_limits<A>::infinity();
  }
  static A Combine(A a, A b) { return b > a ? b : a; }
  static A Final(A a, int64_t, A) { return std::isfinite(a) ? a : A(0); }
};

constexpr int64_t kGrain = 1 << 15;  // elements per task below which a loop stays serial
constexpr int64_t kBlock = 256;      // inner columns accumulated together

// A row of n contiguous elements, folded with 8 independent accumulators so
// the loop vectorizes.
template <class R, class T, class A>
A ReduceRow(const T* p, int64_t n, A shift) {
  A acc[8];
  for (A& v : acc) v = R::Init();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int u = 0; u < 8; ++u) acc[u] = R::Combine(acc[u], R::Map(p[i + u], shift));
  for (; i < n; ++i) acc[0] = R::Combine(acc[0], R::Map(p[i], shift));
  for (int u = 1; u < 8; ++u) acc[0] = R::Combine(acc[0], acc[u]);
  return acc[0];
}

// y[o, i] = reduce over j of x[o, j, i] for a dense x of shape (outer, n, inner).
// `shift` (R::kShift only) holds one value per output.
template <class R, class T>
void ReduceLoop(const T* x, typename R::Out* y, int64_t outer, int64_t n, int64_t inner,
                const typename R::A* shift) {
  using A = typename R::A;
  if (inner == 1) {
    // Few long rows (e.g. reducing everything): split each row across threads.
    int64_t splits = 1;
    if (outer < ActiveThreads() && n >= 2 * kGrain)
      splits = std::min<int64_t>(n / kGrain, 4 * ActiveThreads());
    if (splits == 1) {
      ParallelFor(0, outer, std::max<int64_t>(1, kGrain / std::max<int64_t>(n, 1)),
                  [&](int64_t lo, int64_t hi) {
                    for (int64_t o = lo; o < hi; ++o) {
                      A s = R::kShift ? shift[o] : A();
                      y[o] = R::Final(ReduceRow<R>(x + o * n, n, s), n, s);
                    }
                  });
      return;
    }
    std::vector<A> part(outer * splits);
    ParallelFor(0, outer * splits, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t t = lo; t < hi; ++t) {
        int64_t o = t / splits, j = t % splits;
        int64_t b = n * j / splits, e = n * (j + 1) / splits;
        part[t] = ReduceRow<R>(x + o * n + b, e - b, R::kShift ? shift[o] : A());
      }
    });
    for (int64_t o = 0; o < outer; ++o) {
      A acc = part[o * splits];
      for (int64_t j = 1; j < splits; ++j) acc = R::Combine(acc, part[o * splits + j]);
      y[o] = R::Final(acc, n, R::kShift ? shift[o] : A());
    }
    return;
  }
  const int64_t nb = (inner + kBlock - 1) / kBlock;
  const int64_t work = std::max<int64_t>(1, n) * std::min(inner, kBlock);
  ParallelFor(0, outer * nb, std::max<int64_t>(1, kGrain / work), [&](int64_t lo, int64_t hi) {
    A acc[kBlock];
    for (int64_t t = lo; t < hi; ++t) {
      const int64_t o = t / nb, i0 = (t % nb) * kBlock, m = std::min(kBlock, inner - i0);
      const T* base = x + o * n * inner + i0;
      const A* sh = R::kShift ? shift + o * inner + i0 : nullptr;
      for (int64_t i = 0; i < m; ++i) acc[i] = R::Init();
      for (int64_t j = 0; j < n; ++j) {
        const T* row = base + j * inner;
        if constexpr (R::kShift) {
          for (int64_t i = 0; i < m; ++i) acc[i] = R::Combine(acc[i], R::Map(row[i], sh[i]));
        } else {
          for (int64_t i = 0; i < m; ++i) acc[i] = R::Combine(acc[i], R::Map(row[i], A()));
        }
      }
      typename R::Out* out = y + o * inner + i0;
      for (int64_t i = 0; i < m; ++i) out[i] = R::Final(acc[i], n, R::kShift ? sh[i] : A());
    }
  });
}

// The input as a dense (outer, n, inner) block: used as is when the reduced
// axes are adjacent (size-1 axes do not count) and the input is dense, else
// copied with the kept axes first and the reduced ones last (inner = 1).
struct Layout {
  Tensor x;
  int64_t outer = 1, n = 1, inner = 1;
};

Layout Plan(const Tensor& x, const std::vector<bool>& mask) {
  Layout l;
  int blocks = 0;  // runs of reduced axes, ignoring size-1 axes
  bool in_block = false;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    if (x.shape()[d] == 1) continue;
    if (mask[d] && !in_block) ++blocks;
    in_block = mask[d];
  }
  if (blocks <= 1) {
    l.x = x.Contiguous();
    bool after = false;
    for (int64_t d = 0; d < x.ndim(); ++d) {
      int64_t s = x.shape()[d];
      if (mask[d] && s != 1) {
        l.n *= s;
        after = true;
      } else if (s != 1) {
        (after ? l.inner : l.outer) *= s;
      }
    }
    return l;
  }
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (!mask[d]) {
      perm.push_back(d);
      l.outer *= x.shape()[d];
    }
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (mask[d]) {
      perm.push_back(d);
      l.n *= x.shape()[d];
    }
  l.x = x.Permute(perm).Contiguous();
  return l;
}

template <Kind K, class T>
constexpr bool Supported() {
  if constexpr (K == Kind::kMax || K == Kind::kMin)
    return !std::is_same_v<T, int16_t> && !std::is_same_v<T, uint16_t>;
  if constexpr (K == Kind::kLogSum || K == Kind::kLogSumExp) return kIsFloat<T>;
  return kIsFloat<T> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
         std::is_same_v<T, uint32_t> || std::is_same_v<T, uint64_t>;
}

template <Kind K>
void ReduceForward(KernelCtx& k, const ReduceAttrs& a) {
  const Tensor& x = k.input(0);
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  std::vector<int64_t> axes = AxesArg(a.axes, k.has_input(1) ? &k.input(1) : nullptr);
  Layout l = Plan(x, ReducedMask(x.ndim(), axes, a.noop_with_empty_axes != 0, "Reduce"));
  VisitDType(x.dtype(), [&]<class T>(Tag<T>) {
    if constexpr (Supported<K, T>()) {
      using R = Reducer<K, T>;
      const T* px = l.n == 0 ? nullptr : static_cast<const T*>(l.x.raw_data());
      T* py = static_cast<T*>(y.raw_data());
      if constexpr (K == Kind::kLogSumExp) {
        std::vector<Acc<T>> shift(y.numel());
        ReduceLoop<MaxFinite<T>>(px, shift.data(), l.outer, l.n, l.inner, nullptr);
        ReduceLoop<R>(px, py, l.outer, l.n, l.inner, shift.data());
      } else {
        ReduceLoop<R>(px, py, l.outer, l.n, l.inner, nullptr);
      }
    }
  });
}

#if SINGA_CUDA
// ReduceSum and ReduceMean on a GPU.
template <Kind K>
void ReduceCuda(KernelCtx& k, const ReduceAttrs& a) {
  const Tensor& x = k.input(0);
  const std::vector<int64_t> axes = AxesArg(a.axes, k.has_input(1) ? &k.input(1) : nullptr);
  const std::vector<bool> mask = ReducedMask(x.ndim(), axes, a.noop_with_empty_axes != 0, "Reduce");
  std::vector<int64_t> reduced;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (mask[d]) reduced.push_back(d);
  if (k.output(0).numel() > 0) cuda::Reduce(x, k.output(0), reduced, K == Kind::kMean);
}
#endif
// The dtypes the GPU kernel of a kind takes: none but for Sum and Mean.
template <Kind K>
std::vector<DType> CudaTypes() {
  return K == Kind::kSum || K == Kind::kMean ? ops::kCudaFloats : std::vector<DType>{};
}

using grad::Scalar;

// The input's gradient, from the output's gradient and the output seen with
// the reduced axes kept (size 1), broadcast back over the reduced axes.
// Max/Min: the gradient goes to the extreme elements, split evenly among ties
// (as torch.amax/amin do).
// Prod: the product of the other elements, exact where the input has zeros.
template <Kind K>
TensorList ReduceBackward(const GradCtx& g, const ReduceAttrs& a) {
  const Tensor& x = g.input(0);
  std::vector<int64_t> axes = AxesArg(a.axes, g.has_input(1) ? &g.input(1) : nullptr);
  const std::vector<bool> mask =
      ReducedMask(x.ndim(), axes, a.noop_with_empty_axes != 0, g.op().name);
  Shape kept = x.shape();
  std::vector<int64_t> reduced;
  int64_t n = 1;
  for (int64_t d = 0; d < x.ndim(); ++d)
    if (mask[d]) {
      n *= kept[d];
      kept[d] = 1;
      reduced.push_back(d);
    }
  const Tensor dy = g.grad_output(0).Reshape(kept);
  const Tensor y = g.output(0).Reshape(kept);
  const Tensor zero = Scalar(0, x), one = Scalar(1, x);
  Tensor dx;
  if constexpr (K == Kind::kSum) {
    dx = dy.BroadcastTo(x.shape()).Contiguous();
  } else if constexpr (K == Kind::kMean) {
    dx = Call1("Div", {dy.BroadcastTo(x.shape()), Scalar(static_cast<double>(n), x)});
  } else if constexpr (K == Kind::kSumSquare) {
    dx = Call1("Mul", {Call1("Mul", {x, dy}), Scalar(2, x)});
  } else if constexpr (K == Kind::kL1) {
    dx = Call1("Mul", {Call1("Sign", {x}), dy});
  } else if constexpr (K == Kind::kL2) {
    // x / ||x||, taken as 0 where the norm is 0.
    const Tensor norm = Call1("Where", {Call1("Equal", {y, zero}), one, y});
    dx = Call1("Mul", {Call1("Div", {x, norm}), dy});
  } else if constexpr (K == Kind::kLogSum) {
    dx = Call1("Div", {dy.BroadcastTo(x.shape()), Call1("Exp", {y})});
  } else if constexpr (K == Kind::kLogSumExp) {
    dx = Call1("Mul", {Call1("Exp", {Call1("Sub", {x, y})}), dy});
  } else if constexpr (K == Kind::kMax || K == Kind::kMin) {
    const Tensor hit = Call1("Where", {Call1("Equal", {x, y}), one, zero});
    Tensor count = hit;
    if (!reduced.empty()) {
      const Tensor ax =
          Tensor::FromVector<int64_t>({static_cast<int64_t>(reduced.size())}, reduced);
      count = Call1("ReduceSum", {hit, ax}, {{"keepdims", int64_t{1}}});
    }
    dx = Call1("Mul", {hit, Call1("Div", {dy, count})});
  } else if constexpr (K == Kind::kProd) {
    // With z zeros among the reduced elements: z = 0 gives y / x; z = 1 gives
    // the product of the others at the zero and 0 elsewhere; z > 1 gives 0.
    const Tensor is_zero = Call1("Equal", {x, zero});
    const Tensor nonzero = Call1("Where", {is_zero, one, x});
    Tensor others = nonzero, zeros = Call1("Where", {is_zero, one, zero});
    if (!reduced.empty()) {
      const Tensor ax =
          Tensor::FromVector<int64_t>({static_cast<int64_t>(reduced.size())}, reduced);
      others = Call1("ReduceProd", {nonzero, ax}, {{"keepdims", int64_t{1}}});
      zeros = Call1("ReduceSum", {zeros, ax}, {{"keepdims", int64_t{1}}});
    }
    const Tensor at_zero = Call1("Where", {Call1("Equal", {zeros, one}), others, zero});
    const Tensor factor =
        Call1("Where", {Call1("Equal", {zeros, zero}), Call1("Div", {others, nonzero}),
                        Call1("Where", {is_zero, at_zero, zero})});
    dx = Call1("Mul", {factor, dy});
  }
  TensorList d(g.num_inputs());
  d[0] = dx;
  return d;
}

// Registers the attribute-axes version (opset 1: opsets 1-10 differ from 11 only
// in rejecting negative axes) and the input-axes version.
template <Kind K>
void RegisterReduce(const char* name, int input_axes_since, const std::vector<DType>& types) {
  OpBuilder<ReduceAttrs>(name)
      .since_opset(1)
      .inputs({"data"})
      .outputs({"reduced"})
      .attr("axes", &ReduceAttrs::axes)
      .attr("keepdims", &ReduceAttrs::keepdims)
      .dtypes(types)
      .infer(ReduceInfer)
      .kernel(ReduceForward<K>) SINGA_CUDA_KERNEL(ReduceCuda<K>, CudaTypes<K>())
      .backward(ReduceBackward<K>)
      .upgrade([](ExportCtx& c, const ReduceAttrs& a) {  // axes an input
        AddWithInputs(c, {a.axes ? c.AddInts(*a.axes, "axes") : ""}, {"axes"});
      });
  OpBuilder<ReduceAttrs>(name)
      .since_opset(input_axes_since)
      .inputs({"data", "axes?"})
      .host_inputs({1})
      .outputs({"reduced"})
      .attr("keepdims", &ReduceAttrs::keepdims)
      .attr("noop_with_empty_axes", &ReduceAttrs::noop_with_empty_axes)
      .dtypes(types)
      .infer(ReduceInfer)
      .kernel(ReduceForward<K>) SINGA_CUDA_KERNEL(ReduceCuda<K>, CudaTypes<K>())
      .backward(ReduceBackward<K>);
}

std::vector<DType> ArithTypes() {
  std::vector<DType> v = dtypes::kFloats;
  for (DType d : {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}) v.push_back(d);
  return v;
}

std::vector<DType> MaxMinTypes() {
  std::vector<DType> v = ArithTypes();
  for (DType d : {DType::kInt8, DType::kUInt8, DType::kBool}) v.push_back(d);
  return v;
}

// NOTE: ReduceLogSum and ReduceLogSumExp claim floats only: opset 28 removed
// the integer types (log and exp are float functions), and onnx's reference
// refuses integer input for every version.
[[maybe_unused]] const bool kRegistered = [] {
  RegisterReduce<Kind::kSum>("ReduceSum", 13, ArithTypes());
  RegisterReduce<Kind::kMean>("ReduceMean", 18, ArithTypes());
  RegisterReduce<Kind::kMax>("ReduceMax", 18, MaxMinTypes());
  RegisterReduce<Kind::kMin>("ReduceMin", 18, MaxMinTypes());
  RegisterReduce<Kind::kProd>("ReduceProd", 18, ArithTypes());
  RegisterReduce<Kind::kL1>("ReduceL1", 18, ArithTypes());
  RegisterReduce<Kind::kL2>("ReduceL2", 18, ArithTypes());
  RegisterReduce<Kind::kLogSum>("ReduceLogSum", 18, dtypes::kFloats);
  RegisterReduce<Kind::kLogSumExp>("ReduceLogSumExp", 18, dtypes::kFloats);
  RegisterReduce<Kind::kSumSquare>("ReduceSumSquare", 18, ArithTypes());
  return true;
}();

}  // namespace
}  // namespace singa
