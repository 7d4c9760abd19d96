// CausalConvWithState (opset 27): a causal depthwise 1-D convolution that
// carries its left context between calls (Mamba, Gated DeltaNet):
//   padded = concat(past_state or zeros (B, C, k-1), input)    along length
//   output[b, c, t] = act(bias[c] + sum_i weight[c, 0, i] * padded[b, c, t + i])
//   present_state = the last k-1 positions of padded
// act is none, or silu/swish (x * sigmoid(x)).
// Backward: framework ops and Conv's internal gradient ops (below).
// NOTE: the sum is accumulated in float and rounded to the input dtype before
// the activation, which runs in float (as the spec's reference).
// https://onnx.ai/onnx/operators/onnx__CausalConvWithState.html
#include <cmath>
#include <string>

#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct CausalConvAttrs {
  std::string activation = "none";
};

enum { kInput, kWeight, kBias, kPast };

SpecList Infer(const InferCtx& c, const CausalConvAttrs& a) {
  SINGA_CHECK(
      a.activation == "none" || a.activation == "silu" || a.activation == "swish", ShapeError,
      c.where() << ": activation must be none, silu or swish, got '" << a.activation << "'");
  SINGA_CHECK(c.rank(kInput) == 3 && c.rank(kWeight) == 3, ShapeError,
              c.where() << ": input must be (batch, channels, length) and weight (channels, 1, k) ("
                        << c.inputs_string() << ")");
  const Shape &x = c.shape(kInput), &w = c.shape(kWeight);
  SINGA_CHECK(
      w[0] == x[1] && w[1] == 1 && w[2] >= 1, ShapeError,
      c.where() << ": weight must be (channels, 1, k) with k >= 1 (" << c.inputs_string() << ")");
  if (c.has_input(kBias))
    SINGA_CHECK(c.shape(kBias) == Shape{x[1]}, ShapeError,
                c.where() << ": bias must be (channels,) (" << c.inputs_string() << ")");
  const Shape state = {x[0], x[1], w[2] - 1};
  if (c.has_input(kPast))
    SINGA_CHECK(
        c.shape(kPast) == state, ShapeError,
        c.where() << ": past_state must be (batch, channels, k - 1) (" << c.inputs_string() << ")");
  return {{c.dtype(kInput), x}, {c.dtype(kInput), state}};
}

void Forward(KernelCtx& k, const CausalConvAttrs& a) {
  VisitFloat(k.input(kInput).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const Shape& xs = k.input(kInput).shape();
    const int64_t batch = xs[0], ch = xs[1], len = xs[2], kw = k.input(kWeight).shape()[2];
    const int64_t plen = len + kw - 1;
    const std::vector<A> x = k.input(kInput).ToVector<A>();
    const std::vector<A> w = k.input(kWeight).ToVector<A>();
    const std::vector<A> bias =
        k.has_input(kBias) ? k.input(kBias).ToVector<A>() : std::vector<A>(ch, A(0));
    const std::vector<A> past = k.has_input(kPast) ? k.input(kPast).ToVector<A>()
                                                   : std::vector<A>(batch * ch * (kw - 1), A(0));
    const bool silu = a.activation != "none";
    T* py = k.output(0).numel() ? k.output(0).data<T>() : nullptr;
    T* ps = k.num_outputs() > 1 && k.output(1).numel() ? k.output(1).data<T>() : nullptr;
    ParallelFor(0, batch * ch,
                std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(plen * kw, 1)),
                [&](int64_t lo, int64_t hi) {
                  std::vector<A> padded(plen);
                  for (int64_t r = lo; r < hi; ++r) {
                    const int64_t c = r % ch;
                    for (int64_t i = 0; i < kw - 1; ++i) padded[i] = past[r * (kw - 1) + i];
                    for (int64_t i = 0; i < len; ++i) padded[kw - 1 + i] = x[r * len + i];
                    const A* wc = w.data() + c * kw;
                    for (int64_t t = 0; t < len; ++t) {
                      A s = bias[c];
                      for (int64_t i = 0; i < kw; ++i) s += wc[i] * padded[t + i];
                      A v = static_cast<A>(static_cast<T>(s));
                      if (silu) v = v / (A(1) + std::exp(-v));
                      py[r * len + t] = static_cast<T>(v);
                    }
                    if (ps)
                      for (int64_t i = 0; i < kw - 1; ++i)
                        ps[r * (kw - 1) + i] = static_cast<T>(padded[len + i]);
                  }
                });
  });
}

// ---- backward ----------------------------------------------------------------
// Framework ops: with padded = [past; input] and z = Conv(padded, weight,
// bias, group = channels) the pre-activation, dz = dY (times silu'(z) =
// s + z s (1 - s), s = Sigmoid(z)); Conv's internal gradient ops give
// d padded, d weight and d bias; present_state's gradient adds to the last
// k - 1 positions of d padded, which splits into d past_state and d input.
TensorList Backward(const GradCtx& g, const CausalConvAttrs& a) {
  using grad::Add, grad::Mul, grad::Sub, grad::Scalar;
  TensorList grads(g.num_inputs());
  const Tensor &x = g.input(kInput), &w = g.input(kWeight);
  const int64_t batch = x.shape()[0], ch = x.shape()[1], len = x.shape()[2];
  const int64_t kw = w.shape()[2];
  if (batch * ch == 0) return grads;
  const Tensor past = g.has_input(kPast)
                          ? g.input(kPast)
                          : Tensor::Zeros({batch, ch, kw - 1}, x.dtype(), x.device());
  const Tensor padded = Call1("Concat", {past, x}, {{"axis", int64_t{2}}});
  Tensor dz = g.grad_output(0);
  if (!dz.defined()) dz = grad::ZerosLike(x);
  if (a.activation != "none") {
    TensorList conv_in = {padded, w};
    if (g.has_input(kBias)) conv_in.push_back(g.input(kBias));
    const Tensor z = Call1("Conv", conv_in, {{"group", ch}});
    const Tensor sg = Call1("Sigmoid", {z});
    dz = Mul(dz, Add(sg, Mul(z, Mul(sg, Sub(Scalar(1, sg), sg)))));
  }
  auto run = [&](const char* name, TensorList in, const Shape& shape, int outputs) {
    const OpSchema& op = OpRegistry::Get(name, kLatestOpset, "ai.singa");
    const AttrMap attrs = {{"group", ch}, {"shape", std::vector<int64_t>(shape)}};
    return op.Run(in, op.ParseAttrs(attrs, in), outputs);
  };
  Tensor dpadded = run("ConvGradData", {dz, w}, padded.shape(), 1)[0];
  if (g.num_outputs() > 1 && g.grad_output(1).defined())
    dpadded = Add(
        dpadded,
        Call1("Concat", {Tensor::Zeros({batch, ch, len}, x.dtype(), x.device()), g.grad_output(1)},
              {{"axis", int64_t{2}}}));
  auto slice = [&](int64_t lo, int64_t hi) {
    auto one = [](int64_t v) { return Tensor::FromVector<int64_t>({1}, {v}); };
    return Call1("Slice", {dpadded, one(lo), one(hi), one(2)});
  };
  if (g.needs_grad(kInput)) grads[kInput] = slice(kw - 1, kw - 1 + len);
  if (g.has_input(kPast) && g.needs_grad(kPast)) grads[kPast] = slice(0, kw - 1);
  if (g.needs_grad(kWeight) || (g.has_input(kBias) && g.needs_grad(kBias))) {
    const TensorList dwb = run("ConvGradWeight", {dz, padded}, w.shape(), 2);
    grads[kWeight] = dwb[0];
    if (g.has_input(kBias)) grads[kBias] = dwb[1];
  }
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(CausalConvWithState, CausalConvAttrs)
    .since_opset(27)
    .inputs({"input", "weight", "bias?", "past_state?"})
    .outputs({"output", "present_state?"})
    .attr("activation", &CausalConvAttrs::activation)
    .dtypes({DType::kFloat32, DType::kFloat16, DType::kBFloat16}, {kInput, kWeight, kBias, kPast})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
