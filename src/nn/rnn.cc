// RNN and LSTM layers, unrolled over time with ops: the input projection of
// every step is one MatMul, each step adds the recurrent Gemm.
#include <cmath>

#include "singa/core/random.h"
#include "singa/nn/functional.h"
#include "singa/nn/layers.h"
#include "singa/ops/tape.h"

namespace singa::nn {

RNNBase::RNNBase(int64_t gates, int64_t input_size, int64_t hidden_size, Options o)
    : gates_(gates), input_(input_size), hidden_(hidden_size), o_(std::move(o)) {
  SINGA_CHECK(o_.num_layers >= 1 && hidden_ >= 1 && input_ >= 1, ShapeError,
              "RNN: input_size, hidden_size and num_layers must be positive");
  SINGA_CHECK(gates_ == 4 || o_.nonlinearity == "tanh" || o_.nonlinearity == "relu", Error,
              "RNN: nonlinearity must be tanh or relu, got " << o_.nonlinearity);
}

void RNNBase::Initialize(const TensorList& x) {
  const Tensor& in = x.at(0);
  const double bound = 1.0 / std::sqrt(static_cast<double>(hidden_));
  const int dirs = o_.bidirectional ? 2 : 1;
  auto make = [&](const std::string& name, Shape shape) {
    Tensor t(std::move(shape), in.dtype(), in.device());
    Uniform(t, -bound, bound);
    return AddParam(name, t);
  };
  for (int64_t l = 0; l < o_.num_layers; ++l) {
    for (int d = 0; d < dirs; ++d) {
      const std::string sfx = "_l" + std::to_string(l) + (d ? "_reverse" : "");
      const int64_t in_size = l == 0 ? input_ : hidden_ * dirs;
      Cell c;
      c.w_ih = make("weight_ih" + sfx, {gates_ * hidden_, in_size});
      c.w_hh = make("weight_hh" + sfx, {gates_ * hidden_, hidden_});
      if (o_.bias) {
        c.b_ih = make("bias_ih" + sfx, {gates_ * hidden_});
        c.b_hh = make("bias_hh" + sfx, {gates_ * hidden_});
      }
      cells_.push_back(c);
    }
  }
}

TensorList RNNBase::RunDirection(const Cell& cell, const Tensor& x, Tensor& h, Tensor& c,
                                 bool reverse) const {
  const int64_t steps = x.dim(0);
  // All steps' input projections at once: [T, N, G*H].
  Tensor xw = Call1("MatMul", {x, Call1("Transpose", {cell.w_ih})});
  if (o_.bias) xw = Call1("Add", {xw, Call1("Add", {cell.b_ih, cell.b_hh})});
  TensorList ys(steps);
  for (int64_t i = 0; i < steps; ++i) {
    const int64_t t = reverse ? steps - 1 - i : i;
    Tensor step = Call1("Gather", {xw, Tensor::Scalar<int64_t>(t, x.device())});
    Tensor g = Call1("Gemm", {h, cell.w_hh, step}, {{"transB", int64_t{1}}});
    if (gates_ == 1) {
      h = Call1(o_.nonlinearity == "tanh" ? "Tanh" : "Relu", {g});
    } else {
      TensorList parts = CallOp("Split", {g}, {{"axis", int64_t{1}}, {"num_outputs", int64_t{4}}},
                                kLatestOpset, 4);
      Tensor in_gate = Call1("Sigmoid", {parts[0]}), forget = Call1("Sigmoid", {parts[1]});
      Tensor cand = Call1("Tanh", {parts[2]}), out_gate = Call1("Sigmoid", {parts[3]});
      c = Call1("Add", {Call1("Mul", {forget, c}), Call1("Mul", {in_gate, cand})});
      h = Call1("Mul", {out_gate, Call1("Tanh", {c})});
    }
    ys[t] = Call1("Unsqueeze", {h, Ints({0})});
  }
  return ys;
}

TensorList RNNBase::Forward(const TensorList& x) {
  const char* name = gates_ == 4 ? "LSTM" : "RNN";
  Tensor seq = x.at(0);
  SINGA_CHECK(seq.ndim() == 3 && seq.dim(2) == input_, ShapeError,
              name << ": input must be [T, N, " << input_ << "] ([N, T, " << input_
                   << "] with batch_first), got " << seq.ToString());
  if (o_.batch_first) seq = Call1("Transpose", {seq}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  const int dirs = o_.bidirectional ? 2 : 1;
  const int64_t batch = seq.dim(1);
  const Shape state_shape = {o_.num_layers * dirs, batch, hidden_};
  auto initial = [&](size_t i) {
    if (x.size() > i && x[i].defined()) {
      SINGA_CHECK(x[i].shape() == state_shape, ShapeError,
                  name << ": initial state " << i << " must be " << ToString(state_shape)
                       << ", got " << x[i].ToString());
      return x[i];
    }
    return Tensor::Zeros(state_shape, seq.dtype(), seq.device());
  };
  Tensor h0 = initial(1), c0 = gates_ == 4 ? initial(2) : Tensor();
  TensorList hn, cn;
  for (int64_t l = 0; l < o_.num_layers; ++l) {
    TensorList outs;
    for (int d = 0; d < dirs; ++d) {
      Tensor index = Tensor::Scalar<int64_t>(l * dirs + d, seq.device());
      Tensor h = Call1("Gather", {h0, index});
      Tensor c = c0.defined() ? Call1("Gather", {c0, index}) : Tensor();
      TensorList ys = RunDirection(cells_[l * dirs + d], seq, h, c, d == 1);
      outs.push_back(Call1("Concat", ys, {{"axis", int64_t{0}}}));
      hn.push_back(Call1("Unsqueeze", {h, Ints({0})}));
      if (c.defined()) cn.push_back(Call1("Unsqueeze", {c, Ints({0})}));
    }
    seq = dirs == 1 ? outs[0] : Call1("Concat", outs, {{"axis", int64_t{2}}});
    if (o_.dropout > 0 && l + 1 < o_.num_layers && TrainingMode())
      seq = Call1("Dropout", {seq, Tensor::Scalar<float>(o_.dropout), Tensor::Scalar<bool>(true)});
  }
  if (o_.batch_first) seq = Call1("Transpose", {seq}, {{"perm", std::vector<int64_t>{1, 0, 2}}});
  TensorList result = {seq, Call1("Concat", hn, {{"axis", int64_t{0}}})};
  if (gates_ == 4) result.push_back(Call1("Concat", cn, {{"axis", int64_t{0}}}));
  return result;
}

}  // namespace singa::nn
