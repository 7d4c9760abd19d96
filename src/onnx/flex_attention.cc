// FlexAttention (ai.onnx.preview 1) with its score_mod and/or prob_mod graph
// attributes. The registered op (src/ops/flex_attention.cc) runs the plain
// case in one kernel; with the modifiers it runs here as ops, in the spec's
// reference order:
//   scores = (s Q)(s K)^T                  in the input dtype, s = sqrt(scale)
//   scores = score_mod(scores)             in the softmax precision P
//   probs  = prob_mod(Softmax(scores))     in P
//   Y      = probs Cast(V, P)              cast back to the input dtype
// with query head h reading KV head h / (Hq / Hkv). Every step is a
// registered op, so autograd records through the modifiers.
#include <cmath>

#include "onnx/plan.h"

namespace singa::sonnx {
namespace {

Tensor As(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  return CallOp("Cast", {t}, {{"to", static_cast<int64_t>(dtype)}})[0];
}

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}

// (B, Hkv, S, D) -> (B, Hkv * group, S, D), each KV head repeated `group`
// times in a row.
Tensor RepeatHeads(const Tensor& t, int64_t group) {
  if (group == 1) return t;
  const Shape& d = t.shape();
  Tensor wide = CallOp(
      "Expand", {CallOp("Unsqueeze", {t, Ints({2})})[0], Ints({d[0], d[1], group, d[2], d[3]})})[0];
  return CallOp("Reshape", {wide, Ints({d[0], d[1] * group, d[2], d[3]})})[0];
}

}  // namespace

ValueList RunFlexAttention(const Graph& g, const Node& node, const ValueList& in,
                           const ValueList& values) {
  const std::string where = g.Where(node);
  TensorList qkv;
  for (int i = 0; i < 3; ++i) {
    SINGA_CHECK(!in[i].is_sequence() && in[i].tensor().defined(), DTypeError,
                where << ": input " << i << " must be a tensor, got " << in[i].ToString());
    qkv.push_back(in[i].tensor());
  }
  const Tensor &q = qkv[0], &k = qkv[1], &v = qkv[2];
  SINGA_CHECK(q.ndim() == 4 && k.ndim() == 4 && v.ndim() == 4 && k.dim(0) == q.dim(0) &&
                  v.dim(0) == q.dim(0) && k.dim(3) == q.dim(3) && v.dim(1) == k.dim(1) &&
                  v.dim(2) == k.dim(2) && k.dim(1) > 0 && q.dim(1) % k.dim(1) == 0,
              ShapeError,
              where << ": Q must be (B, Hq, L, E), K (B, Hkv, S, E) and V (B, Hkv, S, Ev) with "
                       "Hq a multiple of Hkv; got "
                    << q.ToString() << ", " << k.ToString() << ", " << v.ToString());
  SINGA_CHECK(IsFloat(q.dtype()) && k.dtype() == q.dtype() && v.dtype() == q.dtype(), DTypeError,
              where << ": Q, K and V must share one float dtype; got " << q.ToString() << ", "
                    << k.ToString() << ", " << v.ToString());
  const int64_t code = ValueAttr<int64_t>(
      node, "softmax_precision",
      q.dtype() == DType::kFloat64 ? int64_t(DType::kFloat64) : int64_t(DType::kFloat32));
  SINGA_CHECK(
      code == 1 || code == 10 || code == 11 || code == 16, DTypeError,
      where << ": softmax_precision must be a float dtype code (1, 10, 11, 16), got " << code);
  const DType precision = static_cast<DType>(code);
  const double scale =
      ValueAttr<float>(node, "scale", static_cast<float>(1.0 / std::sqrt(double(q.dim(3)))));
  // The square root is taken in float and rounded to the input dtype, as the
  // spec's reference.
  const Tensor s = As(Tensor::Scalar<float>(std::sqrt(static_cast<float>(scale))), q.dtype());
  const int64_t group = q.dim(1) / k.dim(1);
  const Tensor ks = CallOp("Mul", {RepeatHeads(k, group), s})[0];
  Tensor scores = CallOp(
      "MatMul", {CallOp("Mul", {q, s})[0],
                 CallOp("Transpose", {ks}, {{"perm", std::vector<int64_t>{0, 1, 3, 2}}})[0]})[0];
  auto modify = [&](Tensor x, int which, const char* name) {
    if (!node.subgraphs[which]) return x;
    ValueList out = RunSubgraph(*node.subgraphs[which], {x}, values, node.outer_inputs[which],
                                where + " " + name);
    SINGA_CHECK(!out[0].is_sequence() && out[0].tensor().defined(), DTypeError,
                where << ": " << name << " must give a tensor, got " << out[0].ToString());
    SINGA_CHECK(out[0].tensor().shape() == x.shape(), ShapeError,
                where << ": " << name << " must keep the shape " << x.ToString() << ", got "
                      << out[0].tensor().ToString());
    return As(out[0].tensor(), precision);
  };
  scores = modify(As(scores, precision), 0, "score_mod");
  const Tensor probs =
      modify(CallOp("Softmax", {scores}, {{"axis", int64_t{-1}}})[0], 1, "prob_mod");
  return {As(CallOp("MatMul", {probs, As(RepeatHeads(v, group), precision)})[0], v.dtype())};
}

}  // namespace singa::sonnx
