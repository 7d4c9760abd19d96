// Softmax, LogSoftmax, Hardmax along one axis (opset 13), and the opset 1/11
// versions, which coerce the input to 2-D at `axis` and normalize over
// everything from `axis` on. Both are an (outer, n, inner) view of the input
// normalized over n. Float dtypes compute in Acc<T>; the fast path is a loop
// of our own for float32 (InnerAxis along an axis with inner > 1, Rows for
// contiguous rows), oneDNN softmax (accurate or log) for bfloat16.
// https://onnx.ai/onnx/operators/onnx__Softmax.html
// https://onnx.ai/onnx/operators/onnx__LogSoftmax.html
// https://onnx.ai/onnx/operators/onnx__Hardmax.html
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "kernels/cpu/dnnl_util.h"
#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/vec.h"
#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

enum class Mode { kSoftmax, kLogSoftmax, kHardmax };

struct AxisAttrs {
  int64_t axis = -1;  // opset 13
};
struct Axis1Attrs {
  int64_t axis = 1;  // opset 1 and 11
};

struct View {
  int64_t outer = 1, n = 1, inner = 1;
};

View MakeView(const Shape& s, int64_t axis, bool coerce_2d) {
  View v;
  for (int64_t d = 0; d < static_cast<int64_t>(s.size()); ++d) {
    if (d < axis)
      v.outer *= s[d];
    else if (d == axis || coerce_2d)
      v.n *= s[d];
    else
      v.inner *= s[d];
  }
  return v;
}

SpecList Infer13(const InferCtx& c, const AxisAttrs& a) {
  NormalizeAxis(a.axis, c.rank(0), c.where());
  return {{c.dtype(0), c.shape(0)}};
}
SpecList Infer1(const InferCtx& c, const Axis1Attrs& a) {
  // Coercion at axis == rank is legal: the second dimension is empty (size 1).
  SINGA_CHECK(a.axis >= -c.rank(0) && a.axis <= c.rank(0), ShapeError,
              c.where() << ": axis " << a.axis << " is out of range for " << c.inputs_string());
  return {{c.dtype(0), c.shape(0)}};
}

void Loop(const Tensor& x_in, const Tensor& y, const View& v, Mode mode) {
  if (y.numel() == 0) return;
  const Tensor x = x_in.Contiguous();
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* px = x.data<T>();
    T* py = y.data<T>();
    const int64_t n = v.n, inner = v.inner;
    ParallelFor(
        0, v.outer * inner, std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(n, 1)),
        [&](int64_t lo, int64_t hi) {
          for (int64_t r = lo; r < hi; ++r) {
            const int64_t base = (r / inner) * n * inner + r % inner;
            const T* xs = px + base;
            T* ys = py + base;
            A m = xs[0];
            int64_t arg = 0;
            for (int64_t j = 1; j < n; ++j) {
              const A val = xs[j * inner];
              if (val > m) m = val, arg = j;
            }
            if (mode == Mode::kHardmax) {
              for (int64_t j = 0; j < n; ++j) ys[j * inner] = T(j == arg ? 1 : 0);
              continue;
            }
            A sum = 0;
            for (int64_t j = 0; j < n; ++j) sum += std::exp(static_cast<A>(xs[j * inner]) - m);
            if (mode == Mode::kLogSoftmax) {
              const A shift = m + std::log(sum);
              for (int64_t j = 0; j < n; ++j)
                ys[j * inner] = static_cast<T>(static_cast<A>(xs[j * inner]) - shift);
            } else {
              for (int64_t j = 0; j < n; ++j)
                ys[j * inner] = static_cast<T>(std::exp(static_cast<A>(xs[j * inner]) - m) / sum);
            }
          }
        });
  });
}

// The fast kernel for float32 Softmax and LogSoftmax along an axis with
// inner > 1 (a detector's box distribution over [1, 16, 4, anchors]),
// where oneDNN has only its serial reference kernel and the loop above
// reads n strided values per output: per outer index and block of inner
// positions, the max, one cpu::FastExp per element and the sum run along
// the inner positions, which are contiguous (vector code).
bool InnerAxis(const Tensor& x_in, const Tensor& y, const View& v, Mode mode) {
  if (mode == Mode::kHardmax || x_in.dtype() != DType::kFloat32 || v.inner == 1 || y.numel() == 0)
    return false;
  const Tensor x = x_in.Contiguous();
  const float* px = x.data<float>();
  float* py = y.data<float>();
  constexpr int64_t kBlock = 256;
  const int64_t n = v.n, inner = v.inner, blocks = (inner + kBlock - 1) / kBlock;
  ParallelFor(0, v.outer * blocks, std::max<int64_t>(1, cpu::kElementwiseGrain / (n * kBlock)),
              [&](int64_t lo, int64_t hi) {
                float m[kBlock], s[kBlock];
                for (int64_t t = lo; t < hi; ++t) {
                  const int64_t i0 = (t % blocks) * kBlock, len = std::min(kBlock, inner - i0);
                  const float* xs = px + (t / blocks) * n * inner + i0;
                  float* ys = py + (t / blocks) * n * inner + i0;
                  std::copy(xs, xs + len, m);
                  for (int64_t j = 1; j < n; ++j)
                    for (int64_t i = 0; i < len; ++i)
                      m[i] = xs[j * inner + i] > m[i] ? xs[j * inner + i] : m[i];
                  std::fill(s, s + len, 0.f);
                  for (int64_t j = 0; j < n; ++j)
                    for (int64_t i = 0; i < len; ++i) {
                      const float e = cpu::FastExp(xs[j * inner + i] - m[i]);
                      s[i] += e;
                      ys[j * inner + i] = e;
                    }
                  if (mode == Mode::kLogSoftmax) {
                    for (int64_t i = 0; i < len; ++i) s[i] = m[i] + std::log(s[i]);
                    for (int64_t j = 0; j < n; ++j)
                      for (int64_t i = 0; i < len; ++i)
                        ys[j * inner + i] = xs[j * inner + i] - s[i];
                  } else {
                    for (int64_t i = 0; i < len; ++i) s[i] = 1.f / s[i];
                    for (int64_t j = 0; j < n; ++j)
                      for (int64_t i = 0; i < len; ++i) ys[j * inner + i] *= s[i];
                  }
                }
              });
  return true;
}

// The longest rows StridedRows takes (a block of them in a stack array).
constexpr int64_t kStridedMaxN = 64;

// One block of StridedRows: rows [r0, r0 + len) of a vector's width, x
// their first element (each row's elements `stride` apart, the rows' first
// elements adjacent), y their rows. Plain float arrays with loops over the
// block's width, which the compiler vectorizes throughout (Vec values mixed
// with a per-lane exp were split into halves and stalled on reading them
// back whole).
template <Mode M>
void StridedBlock(const float* xs, int64_t stride, int64_t n, int64_t len, float* ys) {
  constexpr int64_t L = cpu::vec::kLanes;
  alignas(64) float v[kStridedMaxN * L], m[L], sum[L] = {};
  for (int64_t k = 0; k < n; ++k) {
    float* vk = v + k * L;
    const float* xk = xs + k * stride;
    if (len == L)
      for (int64_t l = 0; l < L; ++l) vk[l] = xk[l];
    else
      for (int64_t l = 0; l < L; ++l) vk[l] = l < len ? xk[l] : 0.f;
  }
  std::fill_n(m, L, -std::numeric_limits<float>::infinity());
  for (int64_t k = 0; k < n; ++k)
    for (int64_t l = 0; l < L; ++l) m[l] = v[k * L + l] > m[l] ? v[k * L + l] : m[l];
  for (int64_t k = 0; k < n; ++k)
    for (int64_t l = 0; l < L; ++l) {
      const float e = cpu::FastExp(v[k * L + l] - m[l]);
      sum[l] += e;
      if constexpr (M == Mode::kSoftmax) v[k * L + l] = e;
    }
  for (int64_t l = 0; l < L; ++l)
    sum[l] = M == Mode::kSoftmax ? 1.f / sum[l] : m[l] + std::log(sum[l]);
  for (int64_t k = 0; k < n; ++k)
    for (int64_t l = 0; l < L; ++l)
      v[k * L + l] = M == Mode::kSoftmax ? v[k * L + l] * sum[l] : v[k * L + l] - sum[l];
  for (int64_t l = 0; l < len; ++l)
    for (int64_t k = 0; k < n; ++k) ys[l * n + k] = v[k * L + l];
}

// The fast kernel for float32 Softmax and LogSoftmax along a last axis of
// at most kStridedMaxN elements that is strided in memory while the axis before it
// is contiguous: a transposed view (a detector's box distribution
// [1, 4, anchors, 16] read through a Transpose of [1, 4, 16, anchors]),
// which the kernels below would first copy into rows (0.22 ms through
// oneDNN for 2100 anchors). Per block of a vector of rows, the max, exp and
// sum run across the block (vector code), and the block is written out as
// rows.
bool StridedRows(const Tensor& x, const Tensor& y, int64_t axis, Mode mode) {
  const int64_t nd = x.ndim(), lanes = cpu::vec::kLanes;
  if (mode == Mode::kHardmax || x.dtype() != DType::kFloat32 || nd < 2 || axis != nd - 1 ||
      y.numel() == 0 || x.strides()[nd - 2] != 1 || x.strides()[nd - 1] == 1 ||
      x.dim(nd - 1) > kStridedMaxN)
    return false;
  const int64_t n = x.dim(nd - 1), rows = x.dim(nd - 2), stride = x.strides()[nd - 1];
  const int64_t outer = x.numel() / (n * rows), blocks = (rows + lanes - 1) / lanes;
  // Where each index of the dims before the last two starts.
  std::vector<int64_t> starts(outer, 0);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t d = nd - 3, rest = o; d >= 0; rest /= x.dim(d), --d)
      starts[o] += rest % x.dim(d) * x.strides()[d];
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const auto block =
      mode == Mode::kSoftmax ? &StridedBlock<Mode::kSoftmax> : &StridedBlock<Mode::kLogSoftmax>;
  ParallelFor(0, outer * blocks, std::max<int64_t>(1, cpu::kElementwiseGrain / (n * lanes)),
              [&](int64_t lo, int64_t hi) {
                for (int64_t t = lo; t < hi; ++t) {
                  const int64_t o = t / blocks, r0 = t % blocks * lanes;
                  block(px + starts[o] + r0, stride, n, std::min(lanes, rows - r0),
                        py + (o * rows + r0) * n);
                }
              });
  return true;
}

// Max or sum of v[0, n) in 16 running partials, which vectorize where one
// running value (a reduction the compiler may not reorder) would not.
template <bool kMax>
float Reduce16(const float* v, int64_t n) {
  float part[16];
  for (int l = 0; l < 16; ++l) part[l] = kMax ? v[0] : 0.f;
  int64_t j = 0;
  for (; j + 16 <= n; j += 16)
    for (int l = 0; l < 16; ++l)
      part[l] = kMax ? (v[j + l] > part[l] ? v[j + l] : part[l]) : part[l] + v[j + l];
  for (; j < n; ++j) part[0] = kMax ? (v[j] > part[0] ? v[j] : part[0]) : part[0] + v[j];
  float r = part[0];
  for (int l = 1; l < 16; ++l) r = kMax ? (part[l] > r ? part[l] : r) : r + part[l];
  return r;
}

// The fast kernel for float32 Softmax and LogSoftmax over contiguous rows
// (inner == 1) of up to 2^14 elements in all: per row the max, one
// cpu::FastExp per element, the sum, each a loop over the row (vector
// code). The same loops for every shape, where oneDNN's softmax primitive is
// generated for each (0.05-0.1 ms, at every new sequence length of a CRNN's
// per-step class scores): 94 rows of 37 took 5.1 us against oneDNN's 4.9,
// 32 rows 2.5 against 3.5. Above the bound oneDNN's kernel is faster (12 x
// 128 rows of 128: 43 us against 59).
bool Rows(const Tensor& x_in, const Tensor& y, const View& v, Mode mode) {
  if (mode == Mode::kHardmax || x_in.dtype() != DType::kFloat32 || v.inner != 1 || v.n == 0 ||
      y.numel() == 0 || y.numel() > (int64_t{1} << 14))
    return false;
  const Tensor x = x_in.Contiguous();
  const float* px = x.data<float>();
  float* py = y.data<float>();
  const int64_t n = v.n;
  ParallelFor(0, v.outer, std::max<int64_t>(1, cpu::kElementwiseGrain / n),
              [&](int64_t lo, int64_t hi) {
                for (int64_t r = lo; r < hi; ++r) {
                  const float* xs = px + r * n;
                  float* ys = py + r * n;
                  const float m = Reduce16<true>(xs, n);
                  for (int64_t j = 0; j < n; ++j) ys[j] = cpu::FastExp(xs[j] - m);
                  const float sum = Reduce16<false>(ys, n);
                  if (mode == Mode::kLogSoftmax) {
                    const float shift = m + std::log(sum);
                    for (int64_t j = 0; j < n; ++j) ys[j] = xs[j] - shift;
                  } else {
                    const float scale = 1.f / sum;
                    for (int64_t j = 0; j < n; ++j) ys[j] *= scale;
                  }
                }
              });
  return true;
}

// oneDNN softmax over dim 1 of (outer, n, inner); false when it cannot run.
// Not float16: on CPUs with AVX512-FP16 oneDNN computes it in float16 (a last
// bit off the float-accumulating loop and onnx's expected outputs), elsewhere
// in float; the loop gives the same result on every CPU.
bool Dnnl(const Tensor& x_in, const Tensor& y, const View& v, Mode mode) {
  const DType dt = x_in.dtype();
  if (mode == Mode::kHardmax || y.numel() == 0) return false;
  if (dt != DType::kFloat32 && dt != DType::kBFloat16) return false;
  const Shape dims = {v.outer, v.n, v.inner};
  const auto alg =
      mode == Mode::kLogSoftmax ? dnnl::algorithm::softmax_log : dnnl::algorithm::softmax_accurate;
  const std::string key = std::string("softmax:") + (mode == Mode::kLogSoftmax ? "log" : "acc") +
                          ':' + std::string(Name(dt)) + ToString(dims);
  using Prim = std::optional<dnnl::softmax_forward>;
  const std::shared_ptr<Prim> cached = cpu::dnnl_util::Cached<Prim>(key, [&]() -> Prim {
    try {
      auto md = cpu::dnnl_util::PlainDesc(dims, dt);
      dnnl::softmax_forward::primitive_desc pd(cpu::dnnl_util::Engine(),
                                               dnnl::prop_kind::forward_inference, alg, md, md, 1);
      // oneDNN's reference implementation (its choice when inner > 1) is a
      // serial loop: ours is parallel.
      if (std::string(pd.impl_info_str()).starts_with("ref")) return std::nullopt;
      return dnnl::softmax_forward(pd);
    } catch (const dnnl::error&) {
      return std::nullopt;  // no implementation for this dtype on this CPU
    }
  });
  const Prim& prim = *cached;
  if (!prim) return false;
  const Tensor x = x_in.Contiguous();
  auto md = cpu::dnnl_util::PlainDesc(dims, dt);
  cpu::dnnl_util::Execute(*prim, {{DNNL_ARG_SRC, cpu::dnnl_util::Mem(x, md)},
                                  {DNNL_ARG_DST, cpu::dnnl_util::Mem(y, md)}});
  return true;
}

template <Mode M, bool kFast>
void Forward13(KernelCtx& k, const AxisAttrs& a) {
  const Tensor& x = k.input(0);
  const int64_t axis = NormalizeAxis(a.axis, x.ndim(), "Softmax");
  const View v = MakeView(x.shape(), axis, false);
  if (!kFast || !(StridedRows(x, k.output(0), axis, M) || InnerAxis(x, k.output(0), v, M) ||
                  Rows(x, k.output(0), v, M) || Dnnl(x, k.output(0), v, M)))
    Loop(x, k.output(0), v, M);
}

template <Mode M, bool kFast>
void Forward1(KernelCtx& k, const Axis1Attrs& a) {
  const Tensor& x = k.input(0);
  const int64_t axis = a.axis < 0 ? a.axis + x.ndim() : a.axis;
  const View v = MakeView(x.shape(), axis, true);
  // (coerced at the last axis, the rows are that axis alone)
  if (!kFast || !(StridedRows(x, k.output(0), axis, M) || Rows(x, k.output(0), v, M) ||
                  Dnnl(x, k.output(0), v, M)))
    Loop(x, k.output(0), v, M);
}

// ---- Backward -----------------------------------------------------------------
// Softmax: dx = y * (dy - sum(dy * y)); LogSoftmax: dx = dy - e^y * sum(dy),
// sums over the normalized axes (kept, so they broadcast back).
Tensor SumOver(const Tensor& t, const std::vector<int64_t>& axes) {
  if (axes.empty()) return t;  // an empty axes input would mean "all axes"
  Tensor ax = Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
  return Call1("ReduceSum", {t, ax}, {{"keepdims", int64_t{1}}});
}

template <Mode M>
TensorList SoftmaxGrad(const GradCtx& g, const std::vector<int64_t>& axes) {
  using grad::Mul, grad::Sub;
  const Tensor &y = g.output(0), &dy = g.grad_output(0);
  if constexpr (M == Mode::kSoftmax)
    return {Mul(y, Sub(dy, SumOver(Mul(dy, y), axes)))};
  else
    return {Sub(dy, Mul(Call1("Exp", {y}), SumOver(dy, axes)))};
}
template <Mode M>
TensorList Backward13(const GradCtx& g, const AxisAttrs& a) {
  return SoftmaxGrad<M>(g, {NormalizeAxis(a.axis, g.input(0).ndim(), "Softmax")});
}
template <Mode M>
TensorList Backward1(const GradCtx& g, const Axis1Attrs& a) {
  const int64_t ndim = g.input(0).ndim();
  std::vector<int64_t> axes;
  for (int64_t d = a.axis < 0 ? a.axis + ndim : a.axis; d < ndim; ++d) axes.push_back(d);
  return SoftmaxGrad<M>(g, axes);
}

}  // namespace

namespace {

// One op of the family at opset 1 (axis 1, the input coerced to 2-d) and at
// opset 13 (one axis, default -1). Hardmax has no backward and no oneDNN path.
template <Mode M, class A>
void Build(OpBuilder<A>& b, SpecList (*infer)(const InferCtx&, const A&),
           void (*dnnl)(KernelCtx&, const A&), void (*loops)(KernelCtx&, const A&),
           TensorList (*backward)(const GradCtx&, const A&)) {
  b.inputs({"input"})
      .outputs({"output"})
      .attr("axis", &A::axis)
      .dtypes(dtypes::kFloats)
      .infer(infer);
  if constexpr (M == Mode::kHardmax) {
    b.kernel(loops);
  } else {
    b.kernel(dnnl).reference(loops).backward(backward);
#if SINGA_CUDA
    b.cuda_kernel(
        [](KernelCtx& k, const A& a) {
          cuda::Softmax(k.input(0), k.output(0), a.axis, std::is_same_v<A, Axis1Attrs>,
                        M == Mode::kLogSoftmax);
        },
        ops::kCudaFloats);
#endif
  }
}

// Opset 13 works along one axis: the opset-1 form (the input seen as 2-d,
// split at `axis`) is the op along the last axis, or of the flattened input
// reshaped back.
void Upgrade1(ExportCtx& c, const Axis1Attrs& a) {
  const int64_t rank = c.input(0).ndim();
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  const std::string& op = c.op().name;
  if (axis == rank - 1) return c.AddNode(op, c.input_names(), c.output_names(), {{"axis", -1L}});
  const std::string flat = c.FreshName(op + "_2d"), y = c.FreshName(op + "_out2d"),
                    shape = c.FreshName(op + "_shape");
  c.AddNode("Flatten", {c.input_name(0)}, {flat}, {{"axis", axis}});
  c.AddNode(op, {flat}, {y}, {{"axis", int64_t{1}}});
  c.AddNode("Shape", {c.input_name(0)}, {shape}, {});
  c.AddNode("Reshape", {y, shape}, c.output_names(), {});
}

template <Mode M>
bool Register(const char* name) {
  RegisterVersions<Axis1Attrs>(name, {1}, [](OpBuilder<Axis1Attrs>& b, int) {
    Build<M>(b, Infer1, Forward1<M, true>, Forward1<M, false>, Backward1<M>);
    b.upgrade(Upgrade1);
  });
  RegisterVersions<AxisAttrs>(name, {13}, [](OpBuilder<AxisAttrs>& b, int) {
    Build<M>(b, Infer13, Forward13<M, true>, Forward13<M, false>, Backward13<M>);
  });
  return true;
}

[[maybe_unused]] const bool kRegistered = Register<Mode::kSoftmax>("Softmax") &&
                                          Register<Mode::kLogSoftmax>("LogSoftmax") &&
                                          Register<Mode::kHardmax>("Hardmax");

}  // namespace

}  // namespace singa
