// RMSNormalization (opset 23): each slice over the dimensions from `axis` on
// is divided by its root mean square, then scaled:
//   Y = X / sqrt(mean(X^2) + epsilon) * scale      (scale broadcasts to X)
// NOTE: the mean and the normalization are computed in Acc<T> (float for the
// 16-bit floats: stash_type 1) and Y is rounded once.
// The fast kernel walks rows with vectorizable partial sums when scale covers
// exactly the normalized dimensions (the transformer case); otherwise, and as
// the reference, a plain loop plus a broadcast multiply.
// Backward (framework ops), with r = 1 / sqrt(mean(X^2) + epsilon) per row
// and g = dY * scale:  dX = r * g - X * r^3 * mean(g * X),  dscale = dY * X * r
// summed to scale's shape.
// https://onnx.ai/onnx/operators/onnx__RMSNormalization.html
#include <cmath>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct RmsNormAttrs {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int64_t stash_type = 1;
};

SpecList Infer(const InferCtx& c, const RmsNormAttrs& a) {
  const Shape& xs = c.shape(0);
  NormalizeAxis(a.axis, c.rank(0), c.where());
  SINGA_CHECK(BroadcastShapes(xs, c.shape(1), c.where()) == xs, ShapeError,
              c.where() << ": scale must broadcast to X's shape (" << c.inputs_string() << ")");
  SINGA_CHECK(a.stash_type == static_cast<int64_t>(DType::kFloat32), DTypeError,
              c.where() << ": stash_type must be 1 (float), got " << a.stash_type);
  return {{c.dtype(0), xs}};
}

struct Rows {
  int64_t outer = 1, inner = 1;
};

Rows MakeRows(const Tensor& x, int64_t axis) {
  Rows r;
  for (int64_t d = 0; d < x.ndim(); ++d) (d < axis ? r.outer : r.inner) *= x.shape()[d];
  return r;
}

// True when `p` varies exactly over the normalized (trailing) dimensions.
bool CoversRow(const Tensor& p, const Rows& r, int64_t norm_rank) {
  if (p.numel() != r.inner) return false;
  int64_t rank = p.ndim(), lead = 0;
  while (lead < rank && p.shape()[lead] == 1) ++lead;
  return rank - lead <= norm_rank;
}

// Plain loops: the normalized X in Acc<T>, then the broadcast multiply.
void Reference(KernelCtx& k, const RmsNormAttrs& a) {
  const Tensor x = k.input(0).Contiguous();
  const Rows r = MakeRows(x, NormalizeAxis(a.axis, x.ndim(), "RMSNormalization"));
  if (x.numel() == 0) return;
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    Tensor norm(x.shape(), DTypeOf<A>());
    const T* px = x.data<T>();
    A* pn = norm.data<A>();
    for (int64_t i = 0; i < r.outer; ++i) {
      A sq = 0;
      for (int64_t j = 0; j < r.inner; ++j) {
        const A v = static_cast<A>(px[i * r.inner + j]);
        sq += v * v;
      }
      const A inv = 1 / std::sqrt(sq / static_cast<A>(r.inner) + static_cast<A>(a.epsilon));
      for (int64_t j = 0; j < r.inner; ++j)
        pn[i * r.inner + j] = static_cast<A>(px[i * r.inner + j]) * inv;
    }
    cpu::Binary<A, T, T>(norm, k.input(1), k.output(0),
                         [](A v, T s) { return static_cast<T>(v * static_cast<A>(s)); });
  });
}

void Forward(KernelCtx& k, const RmsNormAttrs& a) {
  const Tensor& xin = k.input(0);
  const int64_t axis = NormalizeAxis(a.axis, xin.ndim(), "RMSNormalization");
  const Rows r = MakeRows(xin, axis);
  if (!CoversRow(k.input(1), r, xin.ndim() - axis)) return Reference(k, a);
  if (xin.numel() == 0) return;
  const Tensor x = xin.Contiguous();
  VisitFloat(x.dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const std::vector<A> scale = k.input(1).ToVector<A>();
    const T* px = x.data<T>();
    T* py = k.output(0).data<T>();
    const int64_t n = r.inner;
    ParallelFor(0, r.outer, std::max<int64_t>(1, cpu::kElementwiseGrain / n),
                [&](int64_t lo, int64_t hi) {
                  constexpr int kLanes = 16;
                  for (int64_t i = lo; i < hi; ++i) {
                    const T* row = px + i * n;
                    A part[kLanes] = {};
                    int64_t j = 0;
                    for (; j + kLanes <= n; j += kLanes)
                      for (int l = 0; l < kLanes; ++l) {
                        const A v = static_cast<A>(row[j + l]);
                        part[l] += v * v;
                      }
                    A sq = 0;
                    for (; j < n; ++j) sq += static_cast<A>(row[j]) * static_cast<A>(row[j]);
                    for (int l = 0; l < kLanes; ++l) sq += part[l];
                    const A inv = 1 / std::sqrt(sq / static_cast<A>(n) + static_cast<A>(a.epsilon));
                    T* out = py + i * n;
                    for (j = 0; j < n; ++j)
                      out[j] = static_cast<T>(static_cast<A>(row[j]) * inv * scale[j]);
                  }
                });
  });
}

TensorList Backward(const GradCtx& g, const RmsNormAttrs& a) {
  using grad::Add, grad::Mul, grad::Sub, grad::Scalar;
  const Tensor &x = g.input(0), &scale = g.input(1);
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {Tensor(), Tensor()};
  const int64_t axis = NormalizeAxis(a.axis, x.ndim(), "RMSNormalization");
  std::vector<int64_t> axes;
  for (int64_t d = axis; d < x.ndim(); ++d) axes.push_back(d);
  const Tensor ax = Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
  auto mean = [&](const Tensor& t) {
    return Call1("ReduceMean", {t, ax}, {{"keepdims", int64_t{1}}});
  };
  const Tensor r =
      Call1("Reciprocal", {Call1("Sqrt", {Add(mean(Mul(x, x)), Scalar(a.epsilon, x))})});
  TensorList grads(2);
  if (g.needs_grad(0)) {
    const Tensor gs = Mul(dy, scale);
    const Tensor r3 = Mul(r, Mul(r, r));
    grads[0] = Sub(Mul(r, gs), Mul(Mul(x, r3), mean(Mul(gs, x))));
  }
  if (g.needs_grad(1)) grads[1] = ops::SumToShape(Mul(dy, Mul(x, r)), scale.shape());
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(RMSNormalization, RmsNormAttrs)
    .since_opset(23)
    .inputs({"X", "scale"})
    .outputs({"Y"})
    .attr("axis", &RmsNormAttrs::axis)
    .attr("epsilon", &RmsNormAttrs::epsilon)
    .attr("stash_type", &RmsNormAttrs::stash_type)
    .dtypes(dtypes::kFloats, {0, 1})
    .infer(Infer)
    .kernel(Forward)
    .reference(Reference)
    .backward(Backward);

}  // namespace singa
