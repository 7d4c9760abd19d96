// Bernoulli: y[i] = 1 with probability x[i], else 0, of dtype `dtype`
// (default: the input's). Each element is numpy's binomial(1, p) by
// inversion (the draw is compared with 1 - p, or with p for p > 0.5, as
// numpy's legacy generator does), so a seeded run reproduces the spec's
// reference; see random_state.h for the generator.
// https://onnx.ai/onnx/operators/onnx__Bernoulli.html
#include <cmath>

#include "ops/common.h"
#include "ops/random_state.h"

namespace singa {
namespace {

struct BernoulliAttrs {
  std::optional<DType> dtype;
  std::optional<float> seed;
};

SpecList BernoulliInfer(const InferCtx& c, const BernoulliAttrs& a) {
  const DType out = a.dtype ? *a.dtype : c.dtype(0);
  SINGA_CHECK(IsNumeric(out) || out == DType::kBool, DTypeError,
              c.where() << ": the output dtype must be numeric or bool, got " << Name(out));
  return {{out, c.shape(0)}};
}

// numpy's binomial inversion for n = 1 and p <= 0.5.
int64_t Inversion(double p, ops::UniformSource& src) {
  const double q = 1.0 - p, qn = std::exp(std::log(q));
  const int64_t bound = static_cast<int64_t>(std::min(1.0, p + 10.0 * std::sqrt(p * q + 1)));
  int64_t x = 0;
  double px = qn, u = src.Next();
  while (u > px) {
    ++x;
    if (x > bound) {
      x = 0;
      px = qn;
      u = src.Next();
    } else {
      u -= px;
      px = ((1 - x + 1) * p * px) / (static_cast<double>(x) * q);
    }
  }
  return x;
}

void BernoulliForward(KernelCtx& k, const BernoulliAttrs& a) {
  const std::vector<double> p = k.input(0).AsType(DType::kFloat64).ToVector<double>();
  ops::UniformSource src(a.seed, k.input(0).device());
  Tensor draws({static_cast<int64_t>(p.size())}, DType::kFloat64);
  double* d = draws.data<double>();
  for (size_t i = 0; i < p.size(); ++i) {
    // Every element takes a draw, p == 0 too (numpy's legacy generator does).
    if (!(p[i] > 0.5)) {
      d[i] = static_cast<double>(Inversion(p[i], src));
    } else {
      d[i] = static_cast<double>(1 - Inversion(1.0 - p[i], src));
    }
  }
  cpu::ConvertCopy(draws.Reshape(k.output(0).shape()), k.output(0));
}

void Register(int opset) {
  OpBuilder<BernoulliAttrs>("Bernoulli")
      .since_opset(opset)
      .inputs({"input"})
      .outputs({"output"})
      .attr("dtype", &BernoulliAttrs::dtype)
      .attr("seed", &BernoulliAttrs::seed)
      .dtypes(opset >= 22 ? dtypes::kFloats
                          : std::vector<DType>{DType::kFloat16, DType::kFloat32, DType::kFloat64},
              {0})
      .infer(BernoulliInfer)
      .kernel(BernoulliForward)
      .nondeterministic();
}

[[maybe_unused]] const bool kRegistered = [] {
  Register(15);
  Register(22);  // bfloat16
  return true;
}();

}  // namespace
}  // namespace singa
