#include "singa/nn/functional.h"

namespace singa::nn {

namespace {

// Reshapes a 0-d loss to SINGA's {1}.
Tensor AsLoss(const Tensor& scalar) { return Call1("Reshape", {scalar, Ints({1})}); }

Tensor BatchMean(const Tensor& per_sample_sum, int64_t batch) {
  return AsLoss(
      Call1("Div", {per_sample_sum, ScalarLike(static_cast<double>(batch), per_sample_sum)}));
}

void CheckSameShape(const char* fn, const Tensor& a, const Tensor& b) {
  SINGA_CHECK(
      a.shape() == b.shape(), ShapeError,
      fn << ": the inputs must have one shape, got " << a.ToString() << " and " << b.ToString());
}

int64_t BatchOf(const char* fn, const Tensor& x) {
  SINGA_CHECK(x.ndim() >= 1, ShapeError,
              fn << ": input must have a batch axis, got " << x.ToString());
  return x.dim(0);
}

}  // namespace

Tensor ScalarLike(double value, const Tensor& like) {
  return Tensor::Full({}, value, like.dtype(), like.device());
}

Tensor Ints(const std::vector<int64_t>& values, Device device) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(values.size())}, values, device);
}

Tensor OneHotLabels(const Tensor& labels, int64_t depth, DType dtype) {
  SINGA_CHECK(IsInteger(labels.dtype()), DTypeError,
              "one-hot labels: labels must be integers, got " << labels.ToString());
  std::vector<int64_t> classes(depth);
  for (int64_t i = 0; i < depth; ++i) classes[i] = i;
  Tensor ids = Call1("Cast", {labels}, {{"to", static_cast<int64_t>(DType::kInt64)}});
  Tensor eq =
      Call1("Equal", {Call1("Unsqueeze", {ids, Ints({-1})}), Ints(classes, labels.device())});
  return Call1("Cast", {eq}, {{"to", static_cast<int64_t>(dtype)}});
}

namespace {

// Integer labels for scores `x` ([..., C]): of x's shape without its class
// axis, or that with a trailing 1 (SINGA's [N, 1]).
Tensor FlatLabels(const char* fn, const Tensor& x, const Tensor& t) {
  Shape want(x.shape().begin(), x.shape().end() - 1);
  Shape got = t.shape();
  if (got.size() == want.size() + 1 && got.back() == 1) got.pop_back();
  SINGA_CHECK(got == want, ShapeError,
              fn << ": labels " << t.ToString() << " do not match scores " << x.ToString());
  return Call1("Cast", {t.Reshape({NumElements(want)})},
               {{"to", static_cast<int64_t>(DType::kInt64)}});
}

// The loss of integer labels through the ONNX loss ops, whose kernels check
// every label against the class count on each run (a replayed graph step
// included): -sum over the samples of the log-probability of their class,
// over the batch.
Tensor LabelLoss(const char* op, const char* fn, const Tensor& scores, const Tensor& t,
                 int64_t batch) {
  const int64_t classes = scores.dim(-1);
  // The Reshape op, not a view: the tape must carry the gradient through.
  Tensor flat =
      scores.ndim() == 2
          ? scores
          : Call1("Reshape", {scores, Ints({classes ? scores.numel() / classes : 0, classes})});
  Tensor total = Call1(op, {flat, FlatLabels(fn, scores, t)}, {{"reduction", std::string("sum")}});
  return BatchMean(total, batch);
}

}  // namespace

Tensor SoftmaxCrossEntropy(const Tensor& x, const Tensor& t) {
  const int64_t batch = BatchOf("softmax_cross_entropy", x);
  if (IsInteger(t.dtype()))
    return LabelLoss("SoftmaxCrossEntropyLoss", "softmax_cross_entropy", x, t, batch);
  CheckSameShape("softmax_cross_entropy", x, t);
  Tensor logp = Call1("LogSoftmax", {x}, {{"axis", int64_t{-1}}});
  Tensor total = Call1("ReduceSum", {Call1("Mul", {t, logp})}, {{"keepdims", int64_t{0}}});
  return BatchMean(Call1("Neg", {total}), batch);
}

Tensor CrossEntropy(const Tensor& p, const Tensor& t) {
  const int64_t batch = BatchOf("cross_entropy", p);
  if (IsInteger(t.dtype()))
    return LabelLoss("NegativeLogLikelihoodLoss", "cross_entropy", Call1("Log", {p}), t, batch);
  CheckSameShape("cross_entropy", p, t);
  Tensor total =
      Call1("ReduceSum", {Call1("Mul", {t, Call1("Log", {p})})}, {{"keepdims", int64_t{0}}});
  return BatchMean(Call1("Neg", {total}), batch);
}

Tensor BinaryCrossEntropy(const Tensor& p, const Tensor& t) {
  CheckSameShape("binary_cross_entropy", p, t);
  const int64_t batch = BatchOf("binary_cross_entropy", p);
  Tensor one = ScalarLike(1.0, p);
  Tensor pos = Call1("Mul", {t, Call1("Log", {p})});
  Tensor neg = Call1("Mul", {Call1("Sub", {one, t}), Call1("Log", {Call1("Sub", {one, p})})});
  Tensor total = Call1("ReduceSum", {Call1("Add", {pos, neg})}, {{"keepdims", int64_t{0}}});
  return BatchMean(Call1("Neg", {total}), batch);
}

Tensor MseLoss(const Tensor& x, const Tensor& t) {
  CheckSameShape("mse_loss", x, t);
  Tensor d = Call1("Sub", {x, t});
  return AsLoss(Call1("ReduceMean", {Call1("Mul", {d, d})}, {{"keepdims", int64_t{0}}}));
}

Tensor RankingLoss(const Tensor& pos, const Tensor& neg, double margin) {
  CheckSameShape("ranking_loss", pos, neg);
  Tensor gap = Call1("Sub", {ScalarLike(margin, pos), Call1("Sub", {pos, neg})});
  return AsLoss(Call1("ReduceMean", {Call1("Relu", {gap})}, {{"keepdims", int64_t{0}}}));
}

Tensor CosSim(const Tensor& a, const Tensor& b) {
  CheckSameShape("cossim", a, b);
  SINGA_CHECK(a.ndim() == 2, ShapeError, "cossim: inputs must be [N, D], got " << a.ToString());
  AttrMap last = {{"keepdims", int64_t{0}}};
  Tensor axis = Ints({1});
  Tensor dot = Call1("ReduceSum", {Call1("Mul", {a, b}), axis}, last);
  Tensor na = Call1("ReduceL2", {a, axis}, last);
  Tensor nb = Call1("ReduceL2", {b, axis}, last);
  return Call1("Div", {dot, Call1("Mul", {na, nb})});
}

Tensor AddBias(const Tensor& x, const Tensor& b, int axis) {
  SINGA_CHECK(x.ndim() == 2 && b.ndim() == 1 && (axis == 0 || axis == 1), ShapeError,
              "add_bias: x must be 2-D, b 1-D and axis 0 or 1, got x " << x.ToString() << ", b "
                                                                       << b.ToString());
  return Call1("Add", {x, axis == 0 ? b : Call1("Unsqueeze", {b, Ints({1})})});
}

}  // namespace singa::nn
