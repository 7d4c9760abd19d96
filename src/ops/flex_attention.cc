// FlexAttention (domain ai.onnx.preview, version 1): scaled dot-product
// attention on rank-4 Q (B, Hq, L, E), K (B, Hkv, S, E), V (B, Hkv, S, Ev),
// query head h reading KV head h / (Hq / Hkv):
//   scores = (s*Q) (s*K)^T,  s = sqrt(scale) (scale defaults to 1/sqrt(E))
//   Y = softmax(scores) V
// The softmax and the product with V run in softmax_precision (float for
// 16-bit and float inputs, double for double, by default); the scaled Q and
// K and the scores are rounded to the input dtype first, as the spec's
// reference.
// Backward: framework ops (see below).
// With the score_mod and/or prob_mod graph attributes it runs as registered
// ops around the subgraphs instead (WithModifiers below), in the spec's
// reference order:
//   scores = (s Q)(s K)^T                  in the input dtype, s = sqrt(scale)
//   scores = score_mod(scores)             in the softmax precision P
//   probs  = prob_mod(Softmax(scores))     in P
//   Y      = probs Cast(V, P)              cast back to the input dtype
// so autograd records through the modifiers.
// https://onnx.ai/onnx/operators/onnx_aionnxpreview_FlexAttention.html
#include <cmath>
#include <limits>
#include <optional>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct FlexAttentionAttrs {
  std::optional<float> scale;
  std::optional<int64_t> softmax_precision;
  SubgraphPtr score_mod, prob_mod;
};

SpecList Infer(const InferCtx& c, const FlexAttentionAttrs& a) {
  for (int i = 0; i < 3; ++i)
    SINGA_CHECK(c.rank(i) == 4, ShapeError,
                c.where() << ": Q, K and V must be rank 4 (" << c.inputs_string() << ")");
  const Shape &q = c.shape(0), &k = c.shape(1), &v = c.shape(2);
  SINGA_CHECK(k[0] == q[0] && v[0] == q[0] && k[3] == q[3] && v[1] == k[1] && v[2] == k[2],
              ShapeError,
              c.where() << ": K must be (B, Hkv, S, E) and V (B, Hkv, S, Ev) for Q (B, Hq, L, E) ("
                        << c.inputs_string() << ")");
  SINGA_CHECK(
      k[1] > 0 ? q[1] % k[1] == 0 : q[1] == 0, ShapeError,
      c.where() << ": q heads (" << q[1] << ") must be a multiple of kv heads (" << k[1] << ")");
  if (a.softmax_precision) {
    const int64_t p = *a.softmax_precision;
    SINGA_CHECK(
        p == 1 || p == 10 || p == 11 || p == 16, DTypeError,
        c.where() << ": softmax_precision must be a float dtype code (1, 10, 11, 16), got " << p);
  }
  return {{c.dtype(0), {q[0], q[1], q[2], v[3]}}};
}

template <class T, class P>
void Run(KernelCtx& k, const FlexAttentionAttrs& a) {
  using A = Acc<T>;
  using PA = Acc<P>;
  auto round = [](auto v) { return static_cast<A>(static_cast<T>(v)); };
  auto pround = [](PA v) { return static_cast<PA>(static_cast<P>(v)); };
  const Tensor q = k.input(0).Contiguous(), key = k.input(1).Contiguous(),
               v = k.input(2).Contiguous();
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const int64_t b = q.shape()[0], hq = q.shape()[1], l = q.shape()[2], e = q.shape()[3];
  const int64_t hkv = key.shape()[1], s = key.shape()[2], ev = v.shape()[3];
  const int64_t group = hq / hkv;
  const double scale = a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(e));
  // NOTE: the square root is taken in float, as the spec's reference.
  const A sq = round(std::sqrt(static_cast<float>(scale)));
  const T* pq = q.data<T>();
  const T* pk = s ? key.data<T>() : nullptr;
  const T* pv = s ? v.data<T>() : nullptr;
  T* py = y.data<T>();
  ParallelFor(0, b * hq, 1, [&](int64_t lo, int64_t hi) {
    std::vector<A> ks(s * e), qs(e);
    std::vector<PA> p(s), out(ev);
    for (int64_t bh = lo; bh < hi; ++bh) {
      const int64_t bi = bh / hq, h = bh % hq;
      const T* kb = pk + (bi * hkv + h / group) * s * e;
      const T* vb = pv + (bi * hkv + h / group) * s * ev;
      for (int64_t j = 0; j < s * e; ++j) ks[j] = round(static_cast<A>(kb[j]) * sq);
      for (int64_t i = 0; i < l; ++i) {
        const T* qr = pq + (bh * l + i) * e;
        for (int64_t d = 0; d < e; ++d) qs[d] = round(static_cast<A>(qr[d]) * sq);
        PA m = -std::numeric_limits<PA>::infinity();
        for (int64_t j = 0; j < s; ++j) {
          A dot = 0;
          for (int64_t d = 0; d < e; ++d) dot += qs[d] * ks[j * e + d];
          p[j] = pround(static_cast<PA>(static_cast<T>(dot)));
          m = std::max(m, p[j]);
        }
        PA sum = 0;
        for (int64_t j = 0; j < s; ++j) sum += p[j] = pround(std::exp(pround(p[j] - m)));
        sum = pround(sum);
        std::fill(out.begin(), out.end(), PA(0));
        for (int64_t j = 0; j < s; ++j) {
          const PA pj = pround(p[j] / sum);
          for (int64_t d = 0; d < ev; ++d) out[d] += pj * pround(static_cast<PA>(vb[j * ev + d]));
        }
        T* yr = py + (bh * l + i) * ev;
        for (int64_t d = 0; d < ev; ++d) yr[d] = static_cast<T>(out[d]);
      }
    }
  });
}

void Forward(KernelCtx& k, const FlexAttentionAttrs& a) {
  const DType dt = k.input(0).dtype();
  const DType p = a.softmax_precision     ? static_cast<DType>(*a.softmax_precision)
                  : dt == DType::kFloat64 ? DType::kFloat64
                                          : DType::kFloat32;
  VisitFloat(dt,
             [&]<class T>(Tag<T>) { VisitFloat(p, [&]<class P>(Tag<P>) { Run<T, P>(k, a); }); });
}

// ---- backward ----------------------------------------------------------------
// Framework ops on (B, Hkv, G * L, .) views (the G query heads of a KV head
// as rows), with s = sqrt(scale), P = Softmax((s Q)(s K)^T):
//   dV = P^T dY,  dP = dY V^T,  dS = P * (dP - rowsum(dP * P))
//   dQ = s dS (s K),  dK = s dS^T (s Q)
Tensor Reshape(const Tensor& t, std::vector<int64_t> shape) {
  return Call1("Reshape",
               {t, Tensor::FromVector<int64_t>({static_cast<int64_t>(shape.size())}, shape)});
}
Tensor SwapLast(const Tensor& t) {
  return Call1("Transpose", {t}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}});
}
Tensor MatMul(const Tensor& a, const Tensor& b) { return Call1("MatMul", {a, b}); }

TensorList Backward(const GradCtx& g, const FlexAttentionAttrs& a) {
  using grad::Mul, grad::Sub, grad::Scalar;
  const Tensor &q = g.input(0), &k = g.input(1), &v = g.input(2);
  const int64_t b = q.shape()[0], hq = q.shape()[1], l = q.shape()[2], e = q.shape()[3];
  const int64_t hkv = k.shape()[1], ev = v.shape()[3], group = hkv ? hq / hkv : 1;
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined() || q.numel() == 0 || k.numel() == 0) return {Tensor(), Tensor(), Tensor()};
  const double scale = a.scale ? *a.scale : 1.0 / std::sqrt(static_cast<double>(e));
  const Tensor s = Scalar(std::sqrt(scale), q);
  const Tensor qs = Mul(Reshape(q, {b, hkv, group * l, e}), s), ks = Mul(k, s);
  const Tensor p = Call1("Softmax", {MatMul(qs, SwapLast(ks))}, {{"axis", int64_t{-1}}});
  const Tensor dy4 = Reshape(dy, {b, hkv, group * l, ev});
  const Tensor dp = MatMul(dy4, SwapLast(v));
  const Tensor ax = Tensor::FromVector<int64_t>({1}, {-1});
  const Tensor ds =
      Mul(p, Sub(dp, Call1("ReduceSum", {Mul(dp, p), ax}, {{"keepdims", int64_t{1}}})));
  return {Reshape(Mul(MatMul(ds, ks), s), {b, hq, l, e}), Mul(MatMul(SwapLast(ds), qs), s),
          MatMul(SwapLast(p), dy4)};
}

// ---- with score_mod / prob_mod ---------------------------------------------
Tensor As(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  return Call1("Cast", {t}, {{"to", static_cast<int64_t>(dtype)}});
}

// (B, Hkv, S, D) -> (B, Hkv * group, S, D), each KV head repeated `group`
// times in a row.
Tensor RepeatHeads(const Tensor& t, int64_t group) {
  if (group == 1) return t;
  const Shape& d = t.shape();
  const Tensor axis = Tensor::FromVector<int64_t>({1}, {2}, t.device());
  const Tensor wide = Call1(
      "Expand", {Call1("Unsqueeze", {t, axis}),
                 Tensor::FromVector<int64_t>({5}, {d[0], d[1], group, d[2], d[3]}, t.device())});
  return Reshape(wide, {d[0], d[1] * group, d[2], d[3]});
}

ValueList WithModifiers(const ValueCtx& c, const FlexAttentionAttrs& a) {
  const Tensor &q = c.tensor(0), &k = c.tensor(1), &v = c.tensor(2);
  SINGA_CHECK(q.ndim() == 4 && k.ndim() == 4 && v.ndim() == 4 && k.dim(0) == q.dim(0) &&
                  v.dim(0) == q.dim(0) && k.dim(3) == q.dim(3) && v.dim(1) == k.dim(1) &&
                  v.dim(2) == k.dim(2) && k.dim(1) > 0 && q.dim(1) % k.dim(1) == 0,
              ShapeError,
              c.where() << ": Q must be (B, Hq, L, E), K (B, Hkv, S, E) and V (B, Hkv, S, Ev) with "
                           "Hq a multiple of Hkv; got "
                        << q.ToString() << ", " << k.ToString() << ", " << v.ToString());
  SINGA_CHECK(IsFloat(q.dtype()) && k.dtype() == q.dtype() && v.dtype() == q.dtype(), DTypeError,
              c.where() << ": Q, K and V must share one float dtype; got " << q.ToString() << ", "
                        << k.ToString() << ", " << v.ToString());
  const int64_t code = a.softmax_precision.value_or(
      q.dtype() == DType::kFloat64 ? int64_t(DType::kFloat64) : int64_t(DType::kFloat32));
  SINGA_CHECK(
      code == 1 || code == 10 || code == 11 || code == 16, DTypeError,
      c.where() << ": softmax_precision must be a float dtype code (1, 10, 11, 16), got " << code);
  const DType precision = static_cast<DType>(code);
  const double scale = a.scale.value_or(static_cast<float>(1.0 / std::sqrt(double(q.dim(3)))));
  // The square root is taken in float and rounded to the input dtype, as the
  // spec's reference.
  const Tensor s =
      As(Tensor::Scalar<float>(std::sqrt(static_cast<float>(scale)), q.device()), q.dtype());
  const int64_t group = q.dim(1) / k.dim(1);
  const Tensor ks = Call1("Mul", {RepeatHeads(k, group), s});
  Tensor scores = MatMul(Call1("Mul", {q, s}), SwapLast(ks));
  auto modify = [&](Tensor x, const SubgraphPtr& graph, const char* name) {
    if (!graph) return x;
    ValueList out = c.RunGraph(*graph, {x}, name);
    SINGA_CHECK(!out[0].is_sequence() && out[0].tensor().defined(), DTypeError,
                c.where() << ": " << name << " must give a tensor, got " << out[0].ToString());
    SINGA_CHECK(out[0].tensor().shape() == x.shape(), ShapeError,
                c.where() << ": " << name << " must keep the shape " << x.ToString() << ", got "
                          << out[0].tensor().ToString());
    return As(out[0].tensor(), precision);
  };
  scores = modify(As(scores, precision), a.score_mod, "score_mod");
  const Tensor probs =
      modify(Call1("Softmax", {scores}, {{"axis", int64_t{-1}}}), a.prob_mod, "prob_mod");
  return {As(MatMul(probs, As(RepeatHeads(v, group), precision)), v.dtype())};
}

}  // namespace

SINGA_REGISTER_OP(FlexAttention, FlexAttentionAttrs)
    .domain("ai.onnx.preview")
    .since_opset(1)
    .inputs({"Q", "K", "V"})
    .outputs({"Y"})
    .attr("scale", &FlexAttentionAttrs::scale)
    .attr("softmax_precision", &FlexAttentionAttrs::softmax_precision)
    .attr("score_mod", &FlexAttentionAttrs::score_mod)
    .attr("prob_mod", &FlexAttentionAttrs::prob_mod)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward)
    .validate([](int, int, const FlexAttentionAttrs& a, const std::string& where) {
      for (const SubgraphPtr& g : {a.score_mod, a.prob_mod})
        SINGA_CHECK(!g || (g->num_inputs() == 1 && g->num_outputs() == 1), InvalidModel,
                    where << ": " << (g == a.score_mod ? "score_mod" : "prob_mod")
                          << " must take one input and give one output");
    })
    .value_kernel(WithModifiers);

}  // namespace singa
