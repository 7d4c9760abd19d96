// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (the NLL of the log
// of a softmax over axis 1). Input [N, C, d1, ..., dk], target
// [N, d1, ..., dk] with classes in [0, C) or ignore_index, optional class
// weights [C]:
//   loss[n, d] = -weight[t] * input[n, t, d]   with t = target[n, d]
// (0 where t == ignore_index), then reduced: none, sum, or mean = sum over
// the weights of the targets not ignored.
// https://onnx.ai/onnx/operators/onnx__NegativeLogLikelihoodLoss.html
// https://onnx.ai/onnx/operators/onnx__SoftmaxCrossEntropyLoss.html
//
// NOTE: the backward is written with framework ops only (OneHot, Gather,
// Where, ReduceSum, ...) and never reads the targets on the host, so a
// captured training graph stays right when the labels change between replays.
#include <cmath>
#include <optional>

#include "ops/grad_util.h"
#include "ops/movement.h"

namespace singa {
namespace {

struct LossAttrs {
  std::optional<int64_t> ignore_index;
  std::string reduction = "mean";
};

const std::vector<DType> kFloats3 = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
const std::vector<DType> kIndex = {DType::kInt32, DType::kInt64};

SpecList InferLoss(const InferCtx& c, const LossAttrs& a) {
  SINGA_CHECK(a.reduction == "none" || a.reduction == "sum" || a.reduction == "mean", ShapeError,
              c.where() << ": reduction must be none, sum or mean, got '" << a.reduction << "'");
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() >= 2, ShapeError,
              c.where() << ": input must have rank >= 2 (" << c.inputs_string() << ")");
  Shape want = x;
  want.erase(want.begin() + 1);
  SINGA_CHECK(c.shape(1) == want, ShapeError,
              c.where() << ": target must have shape " << ToString(want) << " ("
                        << c.inputs_string() << ")");
  if (c.has_input(2))
    SINGA_CHECK(
        c.rank(2) == 1 && c.shape(2)[0] == x[1], ShapeError,
        c.where() << ": weight must have shape [" << x[1] << "] (" << c.inputs_string() << ")");
  SpecList s = {{c.dtype(0), a.reduction == "none" ? want : Shape{}}};
  if (c.num_outputs() > 1) s.push_back({c.dtype(0), x});  // SoftmaxCrossEntropyLoss's log_prob
  return s;
}

// The loss of log-probabilities `lp` (contiguous [N, C, D]) into `y`.
template <class T, class I>
void Nll(const T* lp, const Tensor& target, const Tensor& weight, int64_t n, int64_t c, int64_t d,
         const LossAttrs& a, const Tensor& y, const char* op) {
  using A = Acc<T>;
  const Tensor tt = target.Contiguous();
  const I* t = tt.data<I>();
  const Tensor wt = weight.defined() ? weight.Contiguous() : Tensor();
  const T* w = wt.defined() ? wt.data<T>() : nullptr;
  const bool has_ignore = a.ignore_index.has_value();
  const int64_t ignore = a.ignore_index.value_or(0);
  const int64_t m = n * d;
  // Labels are data: checked here, before anything is written.
  for (int64_t i = 0; i < m; ++i) {
    const int64_t label = t[i];
    SINGA_CHECK((has_ignore && label == ignore) || (label >= 0 && label < c), ShapeError,
                op << ": target " << label << " is out of range for " << c << " classes");
  }
  std::vector<double> loss(m), wsum(m);
  ParallelFor(0, m, cpu::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const int64_t label = t[i];
      if (has_ignore && label == ignore) {
        loss[i] = wsum[i] = 0;
        continue;
      }
      const double wi = w ? static_cast<double>(static_cast<A>(w[label])) : 1.0;
      const int64_t b = i / d, j = i % d;
      loss[i] = -wi * static_cast<double>(static_cast<A>(lp[(b * c + label) * d + j]));
      wsum[i] = wi;
    }
  });
  T* out = y.data<T>();
  if (a.reduction == "none") {
    for (int64_t i = 0; i < m; ++i) out[i] = static_cast<T>(static_cast<A>(loss[i]));
    return;
  }
  double total = 0, weights = 0;
  for (int64_t i = 0; i < m; ++i) total += loss[i], weights += wsum[i];
  // NOTE: mean over nothing (every target ignored, or N = 0) is 0/0 = NaN,
  // as the spec's formula and the reference give.
  out[0] = static_cast<T>(static_cast<A>(a.reduction == "sum" ? total : total / weights));
}

struct Dims {
  int64_t n, c, d;
};
Dims DimsOf(const Shape& x) {
  Dims r{x[0], x[1], 1};
  for (size_t i = 2; i < x.size(); ++i) r.d *= x[i];
  return r;
}

template <class F>
void VisitLoss(const KernelCtx& k, F&& f, const char* op) {
  VisitFloat(
      k.input(0).dtype(),
      [&]<class T>(Tag<T>) {
        if (k.input(1).dtype() == DType::kInt32)
          f(Tag<T>{}, Tag<int32_t>{});
        else
          f(Tag<T>{}, Tag<int64_t>{});
      },
      op);
}

void NllForward(KernelCtx& k, const LossAttrs& a) {
  const Tensor x = k.input(0).Contiguous();
  const Dims dm = DimsOf(x.shape());
  const Tensor w = k.has_input(2) ? k.input(2) : Tensor();
  VisitLoss(
      k,
      [&]<class T, class I>(Tag<T>, Tag<I>) {
        Nll<T, I>(x.data<T>(), k.input(1), w, dm.n, dm.c, dm.d, a, k.output(0),
                  "NegativeLogLikelihoodLoss");
      },
      "NegativeLogLikelihoodLoss");
}

// log_softmax over axis 1 of [N, C, D] into `lp`, then the NLL.
void SceForward(KernelCtx& k, const LossAttrs& a) {
  const Tensor x = k.input(0).Contiguous();
  const Dims dm = DimsOf(x.shape());
  const Tensor lp = k.num_outputs() > 1 ? k.output(1) : Tensor(x.shape(), x.dtype());
  const Tensor w = k.has_input(2) ? k.input(2) : Tensor();
  VisitLoss(
      k,
      [&]<class T, class I>(Tag<T>, Tag<I>) {
        using A = Acc<T>;
        const T* px = x.data<T>();
        T* pl = lp.data<T>();
        const int64_t c = dm.c, d = dm.d;
        ParallelFor(0, dm.n * d, std::max<int64_t>(1, cpu::kElementwiseGrain / std::max(c, 1L)),
                    [&](int64_t lo, int64_t hi) {
                      for (int64_t r = lo; r < hi; ++r) {
                        const int64_t base = (r / d) * c * d + r % d;
                        A mx = -INFINITY;
                        for (int64_t j = 0; j < c; ++j) mx = std::max<A>(mx, px[base + j * d]);
                        A sum = 0;
                        for (int64_t j = 0; j < c; ++j)
                          sum += std::exp(static_cast<A>(px[base + j * d]) - mx);
                        const A shift = mx + std::log(sum);
                        for (int64_t j = 0; j < c; ++j)
                          pl[base + j * d] =
                              static_cast<T>(static_cast<A>(px[base + j * d]) - shift);
                      }
                    });
        Nll<T, I>(pl, k.input(1), w, dm.n, dm.c, dm.d, a, k.output(0), "SoftmaxCrossEntropyLoss");
      },
      "SoftmaxCrossEntropyLoss");
}

// d loss / d input of the NLL: -onehot(t) * weight[t] * g, with g the loss
// gradient broadcast to [N, d...] (divided by the weight sum for mean) and 0
// at ignored targets.
Tensor NllGrad(const Tensor& dloss, const Tensor& target, const Tensor& weight,
               const Shape& x_shape, const LossAttrs& a) {
  using grad::Mul, grad::Where, grad::Scalar;
  const DType dt = dloss.dtype();
  Tensor t = target, coef;
  Tensor valid;  // bool, undefined when nothing is ignored
  if (a.ignore_index) {
    valid =
        grad::Not(Call1("Equal", {t, Tensor::Full({}, *a.ignore_index, t.dtype(), t.device())}));
    t = Where(valid, t, Scalar(0, t));
  }
  if (weight.defined()) {
    coef = Call1("Gather", {weight, t});
    if (valid.defined()) coef = Where(valid, coef, Scalar(0, coef));
  } else if (valid.defined()) {
    coef = Call1("Cast", {valid}, {{"to", static_cast<int64_t>(dt)}});
  } else {
    coef = Tensor::Full(t.shape(), 1, dt, dloss.device());
  }
  Tensor g = Mul(dloss, coef);  // dloss is a scalar unless reduction is none
  if (a.reduction == "mean") g = grad::Div(g, Call1("ReduceSum", {coef}, {{"keepdims", 0L}}));
  const Tensor onehot =
      Call1("OneHot",
            {t, Tensor::Full({}, x_shape[1], DType::kInt64, t.device()),
             Tensor::FromVector<double>({2}, {0.0, -1.0}, dloss.device()).AsType(dt)},
            {{"axis", 1L}});
  return Mul(onehot, g.Unsqueeze(1));
}

TensorList NllBackward(const GradCtx& g, const LossAttrs& a) {
  TensorList d(g.num_inputs());
  if (!g.needs_grad(0) || !g.grad_output(0).defined()) return d;
  d[0] = NllGrad(g.grad_output(0), g.input(1), g.has_input(2) ? g.input(2) : Tensor(),
                 g.input(0).shape(), a);
  return d;
}

// Through log_softmax: d scores = dlp - exp(lp) * sum_c(dlp), where dlp sums
// the NLL's gradient and log_prob's own.
TensorList SceBackward(const GradCtx& g, const LossAttrs& a) {
  TensorList d(g.num_inputs());
  if (!g.needs_grad(0)) return d;
  const Tensor& lp = g.output(1);
  Tensor dlp;
  if (g.grad_output(0).defined())
    dlp = NllGrad(g.grad_output(0), g.input(1), g.has_input(2) ? g.input(2) : Tensor(), lp.shape(),
                  a);
  if (g.num_outputs() > 1 && g.grad_output(1).defined())
    dlp = dlp.defined() ? grad::Add(dlp, g.grad_output(1)) : g.grad_output(1);
  if (!dlp.defined()) return d;
  const Tensor sum =
      Call1("ReduceSum", {dlp, Tensor::FromVector<int64_t>({1}, {1})}, {{"keepdims", 1L}});
  d[0] = grad::Sub(dlp, grad::Mul(Call1("Exp", {lp}), sum));
  return d;
}

#if SINGA_CUDA
const std::vector<DType> kCudaTypes = {DType::kFloat32, DType::kFloat64};

void NllCuda(KernelCtx& k, const LossAttrs& a) {
  cuda::NllLoss(k.input(0), k.input(1), k.has_input(2) ? k.input(2) : Tensor(), k.output(0),
                a.ignore_index, a.reduction);
}
void SceCuda(KernelCtx& k, const LossAttrs& a) {
  const Tensor& x = k.input(0);
  const Tensor lp = k.num_outputs() > 1 ? k.output(1) : Tensor(x.shape(), x.dtype(), x.device());
  cuda::Softmax(x, lp, 1, false, true);
  cuda::NllLoss(lp, k.input(1), k.has_input(2) ? k.input(2) : Tensor(), k.output(0), a.ignore_index,
                a.reduction);
}
#endif

}  // namespace

#define SINGA_NLL_LOSS(VERSION, TYPES)                           \
  SINGA_REGISTER_OP(NegativeLogLikelihoodLoss, LossAttrs)        \
      .since_opset(VERSION)                                      \
      .inputs({"input", "target", "weight?"})                    \
      .outputs({"loss"})                                         \
      .attr("ignore_index", &LossAttrs::ignore_index)            \
      .attr("reduction", &LossAttrs::reduction)                  \
      .dtypes(TYPES, {0, 2})                                     \
      .dtypes(kIndex, {1})                                       \
      .infer(InferLoss)                                          \
      .kernel(NllForward) SINGA_CUDA_KERNEL(NllCuda, kCudaTypes) \
      .backward(NllBackward)

// 13 only clarified the text; 22 added bfloat16.
SINGA_NLL_LOSS(12, kFloats3);
SINGA_NLL_LOSS(13, kFloats3);
SINGA_NLL_LOSS(22, dtypes::kFloats);

#define SINGA_SCE_LOSS(VERSION, TYPES)                           \
  SINGA_REGISTER_OP(SoftmaxCrossEntropyLoss, LossAttrs)          \
      .since_opset(VERSION)                                      \
      .inputs({"scores", "labels", "weights?"})                  \
      .outputs({"output", "log_prob?"})                          \
      .attr("ignore_index", &LossAttrs::ignore_index)            \
      .attr("reduction", &LossAttrs::reduction)                  \
      .dtypes(TYPES, {0, 2})                                     \
      .dtypes(kIndex, {1})                                       \
      .infer(InferLoss)                                          \
      .kernel(SceForward) SINGA_CUDA_KERNEL(SceCuda, kCudaTypes) \
      .backward_outputs(2)                                       \
      .backward(SceBackward)

// 13 added bfloat16.
SINGA_SCE_LOSS(12, kFloats3);
SINGA_SCE_LOSS(13, dtypes::kFloats);

}  // namespace singa
