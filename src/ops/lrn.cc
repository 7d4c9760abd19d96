// LRN (opsets 1; 13 adds bfloat16): local response normalization across
// channels of X (N, C, spatial...):
//   D[n, c, s] = bias + alpha / size * sum of X[n, c', s]^2 over
//                c' in [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
//   Y = X * D^-beta
// Backward: the internal op LRNGrad (a loop; the channel window would take a
// convolution to express with framework ops):
//   dX[i] = dY[i] D[i]^-beta
//           - 2 alpha beta / size * X[i] * sum over c with i in window(c) of
//             dY[c] X[c] D[c]^(-beta - 1)
// https://onnx.ai/onnx/operators/onnx__LRN.html
#include <cmath>

#include "ops/common.h"

namespace singa {
namespace {

struct LrnAttrs {
  float alpha = 1e-4f;
  float beta = 0.75f;
  float bias = 1.0f;
  int64_t size = 0;
};

SpecList Infer(const InferCtx& c, const LrnAttrs& a) {
  SINGA_CHECK(c.rank(0) >= 2, ShapeError,
              c.where() << ": X must be (N, C, ...) (" << c.inputs_string() << ")");
  SINGA_CHECK(a.size > 0, ShapeError, c.where() << ": size must be positive, got " << a.size);
  return {{c.dtype(0), c.shape(0)}};
}

struct View {
  int64_t n, c, spatial, lo, hi;  // window of channel c: [c - lo, c + hi]
};

View MakeView(const Tensor& x, const LrnAttrs& a) {
  const int64_t n = x.shape()[0], c = x.shape()[1];
  return {n, c, n * c ? x.numel() / (n * c) : 0, (a.size - 1) / 2, a.size / 2};
}

// D (Acc<T>) for every element of x (contiguous).
template <class T>
std::vector<Acc<T>> Denominators(const T* x, const View& v, const LrnAttrs& a) {
  using A = Acc<T>;
  std::vector<A> d(v.n * v.c * v.spatial);
  // alpha / size in float, the attributes' type (as the spec's reference).
  const A k = static_cast<A>(a.alpha / static_cast<float>(a.size));
  ParallelFor(0, v.n * v.spatial, 64, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      const int64_t b = r / v.spatial, s = r % v.spatial;
      for (int64_t ch = 0; ch < v.c; ++ch) {
        A sum = 0;
        for (int64_t j = std::max<int64_t>(0, ch - v.lo); j <= std::min(v.c - 1, ch + v.hi); ++j) {
          const A xv = static_cast<A>(x[(b * v.c + j) * v.spatial + s]);
          sum += xv * xv;
        }
        d[(b * v.c + ch) * v.spatial + s] = static_cast<A>(a.bias) + k * sum;
      }
    }
  });
  return d;
}

void Forward(KernelCtx& k, const LrnAttrs& a) {
  const Tensor x = k.input(0).Contiguous();
  if (x.numel() == 0) return;
  const View v = MakeView(x, a);
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* px = x.data<T>();
    const std::vector<A> d = Denominators(px, v, a);
    T* py = k.output(0).data<T>();
    for (int64_t i = 0; i < x.numel(); ++i)
      py[i] = static_cast<T>(static_cast<A>(px[i]) * std::pow(d[i], -static_cast<A>(a.beta)));
  });
}

// LRNGrad (domain ai.singa): (dY, X) -> dX.
SpecList GradInfer(const InferCtx& c, const LrnAttrs&) {
  SINGA_CHECK(c.shape(0) == c.shape(1), ShapeError,
              c.where() << ": dY must have X's shape (" << c.inputs_string() << ")");
  return {{c.dtype(1), c.shape(1)}};
}

void GradLoop(KernelCtx& k, const LrnAttrs& a) {
  const Tensor dy = k.input(0).Contiguous(), x = k.input(1).Contiguous();
  if (x.numel() == 0) return;
  const View v = MakeView(x, a);
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const T* px = x.data<T>();
    const T* pdy = dy.data<T>();
    const std::vector<A> d = Denominators(px, v, a);
    const A beta = static_cast<A>(a.beta);
    // t[c] = dY[c] X[c] D[c]^(-beta - 1)
    std::vector<A> t(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i)
      t[i] = static_cast<A>(pdy[i]) * static_cast<A>(px[i]) * std::pow(d[i], -beta - 1);
    const A k2 = 2 * static_cast<A>(a.alpha) * beta / static_cast<A>(a.size);
    T* pdx = k.output(0).data<T>();
    ParallelFor(0, v.n * v.spatial, 64, [&](int64_t lo, int64_t hi) {
      for (int64_t r = lo; r < hi; ++r) {
        const int64_t b = r / v.spatial, s = r % v.spatial;
        for (int64_t i = 0; i < v.c; ++i) {
          // Channels c whose window holds i: c - lo <= i <= c + hi.
          A sum = 0;
          for (int64_t c = std::max<int64_t>(0, i - v.hi); c <= std::min(v.c - 1, i + v.lo); ++c)
            sum += t[(b * v.c + c) * v.spatial + s];
          const int64_t e = (b * v.c + i) * v.spatial + s;
          pdx[e] = static_cast<T>(static_cast<A>(pdy[e]) * std::pow(d[e], -beta) -
                                  k2 * static_cast<A>(px[e]) * sum);
        }
      }
    });
  });
}

TensorList Backward(const GradCtx& g, const LrnAttrs& a) {
  static const OpSchema& op = OpRegistry::Get("LRNGrad", kLatestOpset, "ai.singa");
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {Tensor()};
  return {RunOp(op, TensorList{dy, g.input(0)}, a)[0]};
}

}  // namespace

SINGA_REGISTER_OP(LRN, LrnAttrs)
    .since_opset(1)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &LrnAttrs::alpha)
    .attr("beta", &LrnAttrs::beta)
    .attr("bias", &LrnAttrs::bias)
    .attr("size", &LrnAttrs::size, true)
    .dtypes({DType::kFloat16, DType::kFloat32, DType::kFloat64})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);
SINGA_REGISTER_OP(LRN, LrnAttrs)
    .since_opset(13)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("alpha", &LrnAttrs::alpha)
    .attr("beta", &LrnAttrs::beta)
    .attr("bias", &LrnAttrs::bias)
    .attr("size", &LrnAttrs::size, true)
    .dtypes(dtypes::kFloats)
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

// The internal op of LRN's backward.
SINGA_REGISTER_OP(LRNGrad, LrnAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X"})
    .outputs({"dX"})
    .attr("alpha", &LrnAttrs::alpha)
    .attr("beta", &LrnAttrs::beta)
    .attr("bias", &LrnAttrs::bias)
    .attr("size", &LrnAttrs::size, true)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(GradInfer)
    .kernel(GradLoop);

}  // namespace singa
