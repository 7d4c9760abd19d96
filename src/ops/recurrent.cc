// RNN, GRU, LSTM: the ONNX recurrent layers, every attribute (direction
// forward/reverse/bidirectional, activations with their alpha/beta, clip,
// layout, GRU's linear_before_reset, LSTM's input_forget and peepholes) and
// the optional inputs (B, sequence_lens, initial_h, initial_c, P).
//
// One loop serves the three: the input projection X @ W^T of every time step
// is one GEMM per direction; each step adds H_{t-1} @ R^T (one GEMM, oneDNN's
// matmul in the fast kernel, plain loops in the reference one) and applies
// the cell's gate equations. Half-precision inputs compute in float32.
// Batch entries past their sequence_lens keep their state and output zeros.
// The backward differentiates the same recurrence rebuilt from framework ops.
// https://onnx.ai/onnx/operators/onnx__RNN.html
// https://onnx.ai/onnx/operators/onnx__GRU.html
// https://onnx.ai/onnx/operators/onnx__LSTM.html
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>

#include "kernels/cpu/matmul.h"
#include "ops/common.h"
#include "ops/grad_util.h"
#include "singa/autograd/autograd.h"
#include "singa/ops/export_ctx.h"

namespace singa {
namespace {

enum class Cell { kRnn, kGru, kLstm };

struct RecurrentAttrs {
  std::vector<float> activation_alpha, activation_beta;
  std::vector<std::string> activations;
  std::optional<float> clip;
  std::string direction = "forward";
  std::optional<int64_t> hidden_size;
  int64_t layout = 0;
  int64_t linear_before_reset = 0;  // GRU
  int64_t input_forget = 0;         // LSTM
  // Opset 1: whether Y is produced. Y is an optional output all the same,
  // computed exactly when the node asks for it, so the flag changes nothing.
  int64_t output_sequence = 0;
};

int Gates(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 3 : 4; }
// Activations per direction: f (RNN); f, g (GRU); f, g, h (LSTM).
int ActsPerDirection(Cell cell) { return cell == Cell::kRnn ? 1 : cell == Cell::kGru ? 2 : 3; }
const char* CellName(Cell cell) {
  return cell == Cell::kRnn ? "RNN" : cell == Cell::kGru ? "GRU" : "LSTM";
}

// ---- activation functions ----------------------------------------------------

enum class ActKind {
  kRelu,
  kTanh,
  kSigmoid,
  kAffine,
  kLeakyRelu,
  kThresholdedRelu,
  kScaledTanh,
  kHardSigmoid,
  kElu,
  kSoftsign,
  kSoftplus
};

struct Activation {
  ActKind kind = ActKind::kTanh;
  double alpha = 0, beta = 0;
  double operator()(double x) const {
    switch (kind) {
      case ActKind::kRelu:
        return x > 0 ? x : 0;
      case ActKind::kTanh:
        return std::tanh(x);
      case ActKind::kSigmoid:
        return 1 / (1 + std::exp(-x));
      case ActKind::kAffine:
        return alpha * x + beta;
      case ActKind::kLeakyRelu:
        return x >= 0 ? x : alpha * x;
      case ActKind::kThresholdedRelu:
        return x > alpha ? x : 0;
      case ActKind::kScaledTanh:
        return alpha * std::tanh(beta * x);
      case ActKind::kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.0, 1.0);
      case ActKind::kElu:
        return x >= 0 ? x : alpha * (std::exp(x) - 1);
      case ActKind::kSoftsign:
        return x / (1 + std::abs(x));
      case ActKind::kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

// Parses the activation list; alpha/beta values are consumed in order by the
// activations that take them, the others use the ONNX ops' defaults.
std::vector<Activation> ParseActivations(const RecurrentAttrs& a, Cell cell, int dirs,
                                         const std::string& where) {
  std::vector<std::string> names = a.activations;
  const int per = ActsPerDirection(cell);
  if (names.empty()) {
    const std::vector<std::string> defaults =
        cell == Cell::kRnn   ? std::vector<std::string>{"Tanh"}
        : cell == Cell::kGru ? std::vector<std::string>{"Sigmoid", "Tanh"}
                             : std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"};
    for (int d = 0; d < dirs; ++d) names.insert(names.end(), defaults.begin(), defaults.end());
  } else if (static_cast<int>(names.size()) == per && dirs == 2) {
    names.insert(names.end(), a.activations.begin(), a.activations.end());
  }
  SINGA_CHECK(static_cast<int>(names.size()) == per * dirs, ShapeError,
              where << ": expected " << per * dirs << " activations, got " << names.size());
  size_t ai = 0, bi = 0;
  auto take = [](const std::vector<float>& v, size_t& i, double dflt) {
    return i < v.size() ? static_cast<double>(v[i++]) : dflt;
  };
  std::vector<Activation> acts;
  for (const std::string& n : names) {
    std::string s = n;
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char ch) { return std::tolower(ch); });
    Activation act;
    if (s == "relu") {
      act.kind = ActKind::kRelu;
    } else if (s == "tanh") {
      act.kind = ActKind::kTanh;
    } else if (s == "sigmoid") {
      act.kind = ActKind::kSigmoid;
    } else if (s == "affine") {
      act = {ActKind::kAffine, take(a.activation_alpha, ai, 1.0), take(a.activation_beta, bi, 0.0)};
    } else if (s == "leakyrelu") {
      act = {ActKind::kLeakyRelu, take(a.activation_alpha, ai, 0.01), 0};
    } else if (s == "thresholdedrelu") {
      act = {ActKind::kThresholdedRelu, take(a.activation_alpha, ai, 1.0), 0};
    } else if (s == "scaledtanh") {
      act = {ActKind::kScaledTanh, take(a.activation_alpha, ai, 1.0),
             take(a.activation_beta, bi, 1.0)};
    } else if (s == "hardsigmoid") {
      act = {ActKind::kHardSigmoid, take(a.activation_alpha, ai, 0.2),
             take(a.activation_beta, bi, 0.5)};
    } else if (s == "elu") {
      act = {ActKind::kElu, take(a.activation_alpha, ai, 1.0), 0};
    } else if (s == "softsign") {
      act.kind = ActKind::kSoftsign;
    } else if (s == "softplus") {
      act.kind = ActKind::kSoftplus;
    } else {
      throw ShapeError(where + ": unknown activation '" + n + "'");
    }
    acts.push_back(act);
  }
  return acts;
}

int Directions(const std::string& direction, const std::string& where) {
  SINGA_CHECK(
      direction == "forward" || direction == "reverse" || direction == "bidirectional", ShapeError,
      where << ": direction must be forward, reverse or bidirectional, got '" << direction << "'");
  return direction == "bidirectional" ? 2 : 1;
}

// ---- shape inference -----------------------------------------------------------

// Inputs: X, W, R, B?, sequence_lens?, initial_h?, (LSTM) initial_c?, P?.
SpecList InferRecurrent(const InferCtx& c, const RecurrentAttrs& a, Cell cell) {
  const std::string where = c.where();
  const int dirs = Directions(a.direction, where);
  SINGA_CHECK(a.layout == 0 || a.layout == 1, ShapeError,
              where << ": layout must be 0 or 1, got " << a.layout);
  SINGA_CHECK(c.rank(0) == 3 && c.rank(1) == 3 && c.rank(2) == 3, ShapeError,
              where << ": X, W and R must be 3-D (" << c.inputs_string() << ")");
  const Shape& x = c.shape(0);
  const int64_t seq = a.layout == 0 ? x[0] : x[1], batch = a.layout == 0 ? x[1] : x[0];
  const int64_t in = x[2];
  const int64_t hidden = c.shape(2)[2];
  const int64_t g = Gates(cell);
  SINGA_CHECK(!a.hidden_size || *a.hidden_size == hidden, ShapeError,
              where << ": hidden_size " << *a.hidden_size << " differs from R's ("
                    << c.inputs_string() << ")");
  SINGA_CHECK(c.shape(1) == (Shape{dirs, g * hidden, in}) &&
                  c.shape(2) == (Shape{dirs, g * hidden, hidden}),
              ShapeError,
              where << ": W must be [" << dirs << ", " << g * hidden << ", " << in << "] and R ["
                    << dirs << ", " << g * hidden << ", " << hidden << "] (" << c.inputs_string()
                    << ")");
  if (c.has_input(3))
    SINGA_CHECK(c.shape(3) == (Shape{dirs, 2 * g * hidden}), ShapeError,
                where << ": B must be [" << dirs << ", " << 2 * g * hidden << "] ("
                      << c.inputs_string() << ")");
  if (c.has_input(4)) {
    SINGA_CHECK(
        c.dtype(4) == DType::kInt32 && c.shape(4) == (Shape{batch}), ShapeError,
        where << ": sequence_lens must be int32[" << batch << "] (" << c.inputs_string() << ")");
  }
  const Shape state = a.layout == 0 ? Shape{dirs, batch, hidden} : Shape{batch, dirs, hidden};
  for (int i : {5, 6}) {
    if (i == 6 && cell != Cell::kLstm) break;
    if (c.has_input(i))
      SINGA_CHECK(c.shape(i) == state, ShapeError,
                  where << ": initial states must be " << ToString(state) << " ("
                        << c.inputs_string() << ")");
  }
  if (cell == Cell::kLstm && c.has_input(7))
    SINGA_CHECK(c.shape(7) == (Shape{dirs, 3 * hidden}), ShapeError,
                where << ": P must be [" << dirs << ", " << 3 * hidden << "] (" << c.inputs_string()
                      << ")");
  ParseActivations(a, cell, dirs, where);
  const Shape y = a.layout == 0 ? Shape{seq, dirs, batch, hidden} : Shape{batch, seq, dirs, hidden};
  SpecList specs = {{c.dtype(0), y}, {c.dtype(0), state}};
  if (cell == Cell::kLstm) specs.push_back({c.dtype(0), state});
  return specs;
}

// ---- kernel --------------------------------------------------------------------

// y = a @ b^T (a [M, K], b [N, K], y [M, N] dense).
// y = a @ b (a [M, K], b [K, N], y [M, N] dense).
void Gemm(const Tensor& a, const Tensor& b, const Tensor& y, bool fast) {
  if (y.numel() == 0) return;
  if (!fast || !cpu::DnnlMatMul(a, b, y)) cpu::MatMulLoops(a, b, y);
}
// The transpose of `t`'s rows [lo, hi), dense: oneDNN runs its plain-layout
// kernels on it, once per direction instead of once per step.
Tensor RowsT(const Tensor& t, int64_t lo, int64_t hi) {
  return t.Slice(0, lo, hi).Transpose().Contiguous();
}

// The input as a dense tensor of the compute dtype.
Tensor Dense(const Tensor& t, DType dt) {
  return (t.dtype() == dt ? t : t.AsType(dt)).Contiguous();
}

template <class C>
void Run(KernelCtx& k, const RecurrentAttrs& a, Cell cell, bool fast) {
  const DType cd = DTypeOf<C>();
  const int dirs = a.direction == "bidirectional" ? 2 : 1;
  const std::vector<Activation> acts = ParseActivations(a, cell, dirs, CellName(cell));
  const int per = ActsPerDirection(cell);
  Tensor x = k.input(0);
  if (a.layout == 1) x = x.Permute({1, 0, 2});
  x = Dense(x, cd);
  const int64_t seq = x.shape()[0], batch = x.shape()[1], in = x.shape()[2];
  const int64_t hidden = k.input(2).shape()[2];
  const int64_t g = Gates(cell), gh = g * hidden;
  const Tensor w = Dense(k.input(1), cd), r = Dense(k.input(2), cd);
  const Tensor b = k.has_input(3) ? Dense(k.input(3), cd) : Tensor::Zeros({dirs, 2 * gh}, cd);
  std::vector<int64_t> lens(batch, seq);
  if (k.has_input(4)) {
    const std::vector<int64_t> v = k.input(4).ToVector<int64_t>();
    for (int64_t i = 0; i < batch; ++i) lens[i] = std::clamp<int64_t>(v[i], 0, seq);
  }
  auto state_in = [&](int i) {
    if (!k.has_input(i)) return Tensor::Zeros({dirs, batch, hidden}, cd);
    Tensor s = k.input(i);
    if (a.layout == 1) s = s.Permute({1, 0, 2});
    return Dense(s, cd).Clone();
  };
  const bool lstm = cell == Cell::kLstm;
  Tensor h = state_in(5);
  Tensor cst = lstm ? state_in(6) : Tensor();
  const Tensor p = lstm && k.has_input(7) ? Dense(k.input(7), cd) : Tensor();
  // Y in [seq, dirs, batch, hidden] order, zero where a sequence has ended.
  Tensor y = Tensor::Zeros({seq, dirs, batch, hidden}, cd);
  const bool has_clip = a.clip.has_value();
  const double clip = has_clip ? *a.clip : 0.0;
  auto clipped = [&](double v) { return has_clip ? std::clamp(v, -clip, clip) : v; };

  // GRU without linear_before_reset multiplies R_h by r * H: that part of
  // the recurrent product waits for r, so hr holds only z's and r's columns.
  const bool split_h = cell == Cell::kGru && a.linear_before_reset == 0;
  const int64_t hs = split_h ? 2 * hidden : gh;  // row stride of hr
  Tensor hr({batch, hs}, cd), hr2({batch, hidden}, cd), rh({batch, hidden}, cd);
  // The gate equations of one step, split over batch rows on the thread pool
  // (the reference kernel stays serial).
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(hidden, 1));
  auto for_rows = [&](auto&& row) {
    if (!fast) {
      for (int64_t bi = 0; bi < batch; ++bi) row(bi);
      return;
    }
    ParallelFor(0, batch, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t bi = lo; bi < hi; ++bi) row(bi);
    });
  };
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = a.direction == "reverse" || d == 1;
    const Activation& f = acts[d * per];
    const Activation& gact = per > 1 ? acts[d * per + 1] : f;
    const Activation& hact = per > 2 ? acts[d * per + 2] : f;
    const Tensor wd = w.Slice(0, d, d + 1).Reshape({gh, in});
    const Tensor rd = r.Slice(0, d, d + 1).Reshape({gh, hidden});
    Tensor xw({seq * batch, gh}, cd);
    Gemm(x.Reshape({seq * batch, in}), RowsT(wd, 0, gh), xw, fast);
    const Tensor r_t = RowsT(rd, 0, hs);  // the columns hr holds
    const Tensor rh_t = split_h ? RowsT(rd, 2 * hidden, 3 * hidden) : Tensor();
    const C* wb = b.data<C>() + d * 2 * gh;
    const C* rb = wb + gh;
    const C* pd = p.defined() ? p.data<C>() + d * 3 * hidden : nullptr;
    Tensor hd = h.Slice(0, d, d + 1).Reshape({batch, hidden});
    C* hp = hd.data<C>();
    C* cp = lstm ? cst.data<C>() + d * batch * hidden : nullptr;
    for (int64_t step = 0; step < seq; ++step) {
      const int64_t t = reverse ? seq - 1 - step : step;
      Gemm(hd, r_t, hr, fast);
      const C* xwt = xw.data<C>() + t * batch * gh;
      C* hrp = hr.data<C>();
      C* yt = y.data<C>() + (t * dirs + d) * batch * hidden;
      if (cell == Cell::kRnn) {
        for_rows([&](int64_t bi) {
          if (t >= lens[bi]) return;
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t q = bi * gh + j;
            const double v = f(clipped(double(xwt[q]) + hrp[q] + wb[j] + rb[j]));
            hp[bi * hidden + j] = static_cast<C>(v);
            yt[bi * hidden + j] = static_cast<C>(v);
          }
        });
      } else if (cell == Cell::kGru) {
        // z and r first; the candidate needs r.
        std::vector<double> z(batch * hidden), rg(batch * hidden);
        C* rhp = rh.data<C>();
        for_rows([&](int64_t bi) {
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t q = bi * gh, qr = bi * hs, s = bi * hidden + j;
            z[s] = f(clipped(double(xwt[q + j]) + hrp[qr + j] + wb[j] + rb[j]));
            rg[s] = f(clipped(double(xwt[q + hidden + j]) + hrp[qr + hidden + j] + wb[hidden + j] +
                              rb[hidden + j]));
            if (split_h) rhp[s] = static_cast<C>(rg[s] * hp[s]);
          }
        });
        if (split_h) Gemm(rh, rh_t, hr2, fast);
        const C* hr2p = hr2.data<C>();
        for_rows([&](int64_t bi) {
          if (t >= lens[bi]) return;
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t q = bi * gh + 2 * hidden + j, s = bi * hidden + j;
            const double xh = double(xwt[q]) + wb[2 * hidden + j];
            // Linear before reset: hr holds R_h's product too (hs == gh).
            const double rec = split_h ? double(hr2p[s]) + rb[2 * hidden + j]
                                       : rg[s] * (double(hrp[q]) + rb[2 * hidden + j]);
            const double cand = gact(clipped(xh + rec));
            const double v = (1 - z[s]) * cand + z[s] * hp[s];
            hp[s] = static_cast<C>(v);
            yt[s] = static_cast<C>(v);
          }
        });
      } else {
        for_rows([&](int64_t bi) {
          if (t >= lens[bi]) return;
          for (int64_t j = 0; j < hidden; ++j) {
            const int64_t q = bi * gh, s = bi * hidden + j;
            auto pre = [&](int gate) {
              const int64_t o = gate * hidden + j;
              return double(xwt[q + o]) + hrp[q + o] + wb[o] + rb[o];
            };
            const double c_prev = cp[s];
            // Gate order i, o, f, c; peepholes i, o, f.
            const double it = f(clipped(pre(0) + (pd ? pd[j] * c_prev : 0)));
            const double ft = a.input_forget
                                  ? 1 - it
                                  : f(clipped(pre(2) + (pd ? pd[2 * hidden + j] * c_prev : 0)));
            const double ct = gact(clipped(pre(3)));
            const double c_new = ft * c_prev + it * ct;
            const double ot = f(clipped(pre(1) + (pd ? pd[hidden + j] * c_new : 0)));
            const double v = ot * hact(c_new);
            cp[s] = static_cast<C>(c_new);
            hp[s] = static_cast<C>(v);
            yt[s] = static_cast<C>(v);
          }
        });
      }
    }
  }
  // Outputs: Y, Y_h, Y_c (each optional), in the requested layout.
  auto store = [&](int i, Tensor src) {
    if (i >= k.num_outputs() || !k.outputs[i].defined() || k.outputs[i].numel() == 0) return;
    if (a.layout == 1) src = src.ndim() == 4 ? src.Permute({2, 0, 1, 3}) : src.Permute({1, 0, 2});
    cpu::ConvertCopy(src, k.outputs[i]);
  };
  store(0, y);
  store(1, h);
  if (lstm) store(2, cst);
}

template <Cell kCell, bool kFast>
void Forward(KernelCtx& k, const RecurrentAttrs& a) {
  if (k.input(0).dtype() == DType::kFloat64)
    Run<double>(k, a, kCell, kFast);
  else
    Run<float>(k, a, kCell, kFast);
}

// ---- backward ------------------------------------------------------------------
// By composition: the forward is rebuilt from framework ops (MatMul, Slice,
// Sigmoid, Mul, ...) on detached copies of the inputs with grad mode on, and
// the engine differentiates sum(Y * dY) + sum(Y_h * dY_h) + sum(Y_c * dY_c)
// with respect to them, each step through the ops' own backward. It costs a
// second forward; the fast kernel above stays free of bookkeeping.

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}
Tensor SliceOp(const Tensor& t, int64_t axis, int64_t lo, int64_t hi) {
  return CallOp("Slice", {t, Ints({lo}), Ints({hi}), Ints({axis})})[0];
}
Tensor SqueezeOp(const Tensor& t, int64_t axis) { return CallOp("Squeeze", {t, Ints({axis})})[0]; }
Tensor UnsqueezeOp(const Tensor& t, int64_t axis) {
  return CallOp("Unsqueeze", {t, Ints({axis})})[0];
}
Tensor TransposeOp(const Tensor& t, std::vector<int64_t> perm) {
  return CallOp("Transpose", {t}, {{"perm", std::move(perm)}})[0];
}
Tensor ConcatOp(const TensorList& ts, int64_t axis) {
  return CallOp("Concat", std::span<const Tensor>(ts), {{"axis", axis}})[0];
}

Tensor ApplyOp(const Activation& act, const Tensor& x) {
  using grad::Op1;
  using grad::Scalar;
  const float alpha = static_cast<float>(act.alpha), beta = static_cast<float>(act.beta);
  switch (act.kind) {
    case ActKind::kRelu:
      return Op1("Relu", x);
    case ActKind::kTanh:
      return Op1("Tanh", x);
    case ActKind::kSigmoid:
      return Op1("Sigmoid", x);
    case ActKind::kAffine:
      return grad::Add(grad::Mul(x, Scalar(act.alpha, x)), Scalar(act.beta, x));
    case ActKind::kLeakyRelu:
      return Op1("LeakyRelu", x, {{"alpha", alpha}});
    case ActKind::kThresholdedRelu:
      return Op1("ThresholdedRelu", x, {{"alpha", alpha}});
    case ActKind::kScaledTanh:
      return grad::Mul(Op1("Tanh", grad::Mul(x, Scalar(act.beta, x))), Scalar(act.alpha, x));
    case ActKind::kHardSigmoid:
      return Op1("HardSigmoid", x, {{"alpha", alpha}, {"beta", beta}});
    case ActKind::kElu:
      return Op1("Elu", x, {{"alpha", alpha}});
    case ActKind::kSoftsign:
      return Op1("Softsign", x);
    case ActKind::kSoftplus:
      return Op1("Softplus", x);
  }
  return x;
}

// Y, Y_h (and Y_c) of the cell rebuilt from framework ops on `in`.
TensorList ForwardByOps(const TensorList& in, const std::vector<int64_t>& lens,
                        const RecurrentAttrs& a, Cell cell) {
  using grad::Add;
  using grad::Mul;
  using grad::Scalar;
  using grad::Sub;
  const int dirs = a.direction == "bidirectional" ? 2 : 1;
  const std::vector<Activation> acts = ParseActivations(a, cell, dirs, CellName(cell));
  const int per = ActsPerDirection(cell);
  const bool lstm = cell == Cell::kLstm;
  Tensor x = a.layout == 1 ? TransposeOp(in[0], {1, 0, 2}) : in[0];
  const int64_t seq = x.dim(0), batch = x.dim(1), hidden = in[2].dim(2);
  const DType dt = x.dtype();
  auto state = [&](int i) {
    if (!in[i].defined()) return Tensor::Zeros({dirs, batch, hidden}, dt);
    return a.layout == 1 ? TransposeOp(in[i], {1, 0, 2}) : in[i];
  };
  const Tensor h0 = state(5), c0 = lstm ? state(6) : Tensor();
  auto clip = [&](const Tensor& v) {
    return a.clip ? CallOp("Clip", {v, Scalar(-*a.clip, v), Scalar(*a.clip, v)})[0] : v;
  };
  auto gate = [&](const Tensor& v, int k) {
    return SliceOp(v, v.ndim() - 1, k * hidden, (k + 1) * hidden);
  };
  TensorList ys_dirs, hs, cs;
  for (int d = 0; d < dirs; ++d) {
    const bool reverse = a.direction == "reverse" || d == 1;
    const Activation& f = acts[d * per];
    const Activation& gact = per > 1 ? acts[d * per + 1] : f;
    const Activation& hact = per > 2 ? acts[d * per + 2] : f;
    const Tensor wt = TransposeOp(SqueezeOp(SliceOp(in[1], 0, d, d + 1), 0), {1, 0});
    const Tensor rt = TransposeOp(SqueezeOp(SliceOp(in[2], 0, d, d + 1), 0), {1, 0});
    Tensor wb, rb;
    if (in[3].defined()) {
      const Tensor bd = SqueezeOp(SliceOp(in[3], 0, d, d + 1), 0);
      const int64_t gh = Gates(cell) * hidden;
      wb = SliceOp(bd, 0, 0, gh);
      rb = SliceOp(bd, 0, gh, 2 * gh);
    } else {
      wb = rb = Tensor::Zeros({Gates(cell) * hidden}, dt);
    }
    Tensor pd;
    if (lstm && in[7].defined()) pd = SqueezeOp(SliceOp(in[7], 0, d, d + 1), 0);
    Tensor h = SqueezeOp(SliceOp(h0, 0, d, d + 1), 0);
    Tensor c = lstm ? SqueezeOp(SliceOp(c0, 0, d, d + 1), 0) : Tensor();
    TensorList ys(seq);
    for (int64_t step = 0; step < seq; ++step) {
      const int64_t t = reverse ? seq - 1 - step : step;
      const Tensor xw = CallOp("MatMul", {SqueezeOp(SliceOp(x, 0, t, t + 1), 0), wt})[0];
      Tensor hn, cn;
      if (cell == Cell::kRnn) {
        hn = ApplyOp(f, clip(Add(Add(xw, CallOp("MatMul", {h, rt})[0]), Add(wb, rb))));
      } else if (cell == Cell::kGru) {
        const Tensor rt_h = SliceOp(rt, 1, 2 * hidden, 3 * hidden);
        const Tensor hr = CallOp("MatMul", {h, rt})[0];
        auto pre = [&](int k) {
          return Add(Add(gate(xw, k), gate(hr, k)), Add(gate(wb, k), gate(rb, k)));
        };
        const Tensor z = ApplyOp(f, clip(pre(0)));
        const Tensor r = ApplyOp(f, clip(pre(1)));
        const Tensor xh = Add(gate(xw, 2), gate(wb, 2));
        const Tensor rec = a.linear_before_reset
                               ? Mul(r, Add(gate(hr, 2), gate(rb, 2)))
                               : Add(CallOp("MatMul", {Mul(r, h), rt_h})[0], gate(rb, 2));
        const Tensor cand = ApplyOp(gact, clip(Add(xh, rec)));
        hn = Add(cand, Mul(z, Sub(h, cand)));
      } else {
        const Tensor hr = CallOp("MatMul", {h, rt})[0];
        auto pre = [&](int k) {
          return Add(Add(gate(xw, k), gate(hr, k)), Add(gate(wb, k), gate(rb, k)));
        };
        auto peep = [&](const Tensor& v, int k, const Tensor& cv) {
          return pd.defined() ? Add(v, Mul(gate(pd, k), cv)) : v;
        };
        const Tensor it = ApplyOp(f, clip(peep(pre(0), 0, c)));
        const Tensor ft =
            a.input_forget ? Sub(Scalar(1, it), it) : ApplyOp(f, clip(peep(pre(2), 2, c)));
        const Tensor ct = ApplyOp(gact, clip(pre(3)));
        cn = Add(Mul(ft, c), Mul(it, ct));
        const Tensor ot = ApplyOp(f, clip(peep(pre(1), 1, cn)));
        hn = Mul(ot, ApplyOp(hact, cn));
      }
      if (!lens.empty()) {
        // Finished sequences keep their state and output zeros.
        std::vector<double> m(batch);
        for (int64_t b = 0; b < batch; ++b) m[b] = t < lens[b] ? 1.0 : 0.0;
        const Tensor mask = Tensor::FromVector<double>({batch, 1}, m).AsType(dt);
        const Tensor keep = Sub(Scalar(1, mask), mask);
        ys[t] = Mul(hn, mask);
        h = Add(ys[t], Mul(h, keep));
        if (lstm) c = Add(Mul(cn, mask), Mul(c, keep));
      } else {
        ys[t] = h = hn;
        if (lstm) c = cn;
      }
    }
    for (Tensor& y : ys) y = UnsqueezeOp(y, 0);
    ys_dirs.push_back(UnsqueezeOp(ConcatOp(ys, 0), 1));
    hs.push_back(UnsqueezeOp(h, 0));
    if (lstm) cs.push_back(UnsqueezeOp(c, 0));
  }
  TensorList out = {ConcatOp(ys_dirs, 1), ConcatOp(hs, 0)};
  if (lstm) out.push_back(ConcatOp(cs, 0));
  if (a.layout == 1) {
    out[0] = TransposeOp(out[0], {2, 0, 1, 3});
    for (size_t i = 1; i < out.size(); ++i) out[i] = TransposeOp(out[i], {1, 0, 2});
  }
  return out;
}

template <Cell kCell>
TensorList Backward(const GradCtx& g, const RecurrentAttrs& a) {
  const int n = g.num_inputs();
  TensorList d(n);
  const bool lstm = kCell == Cell::kLstm;
  const Shape& xs = g.input(0).shape();
  const int64_t seq = a.layout == 0 ? xs[0] : xs[1];
  auto zeros_for_rest = [&] {
    for (int i = 0; i < n; ++i)
      if (!d[i].defined() && g.needs_grad(i) && g.has_input(i) && i != 4)
        d[i] = Tensor::Zeros(g.input(i).shape(), g.input(i).dtype());
    return d;
  };
  if (seq == 0) {  // Y_h and Y_c are the initial states
    if (g.has_input(5) && g.needs_grad(5) && g.grad_output(1).defined()) d[5] = g.grad_output(1);
    if (lstm && g.has_input(6) && g.needs_grad(6) && g.num_outputs() > 2 &&
        g.grad_output(2).defined())
      d[6] = g.grad_output(2);
    return zeros_for_rest();
  }
  GradModeGuard grad_on(true);
  TensorList leaves(lstm ? 8 : 6);
  for (int i = 0; i < n; ++i) {
    if (!g.has_input(i) || i == 4) continue;
    leaves[i] = g.input(i).Detach();
    leaves[i].set_stores_grad(true);
  }
  std::vector<int64_t> lens;
  if (g.has_input(4)) {
    lens = g.input(4).ToVector<int64_t>();
    for (int64_t& l : lens) l = std::clamp<int64_t>(l, 0, seq);
  }
  const TensorList outs = ForwardByOps(leaves, lens, a, kCell);
  Tensor loss;
  for (int o = 0; o < g.num_outputs() && o < static_cast<int>(outs.size()); ++o) {
    if (!g.grad_output(o).defined()) continue;
    const Tensor term =
        CallOp("ReduceSum", {grad::Mul(outs[o], g.grad_output(o))}, {{"keepdims", int64_t{0}}})[0];
    loss = loss.defined() ? grad::Add(loss, term) : term;
  }
  if (!loss.defined()) return zeros_for_rest();
  autograd::Backward(loss, Tensor(), [&](const Tensor& p, const Tensor& grad) {
    for (int i = 0; i < n; ++i)
      if (leaves[i].defined() && p.id() == leaves[i].id() && g.needs_grad(i)) d[i] = grad;
  });
  return zeros_for_rest();
}

// hidden_size is optional in ONNX (R's last dim says it) but onnxruntime
// requires it: always written.
void Export(ExportCtx& c, const RecurrentAttrs&) {
  AttrMap attrs = c.attrs();
  attrs["hidden_size"] = c.input(2).shape().back();
  std::vector<std::string> in, out;
  for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.input_name(i));
  for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.output_name(i));
  c.AddNode(c.op().name, in, out, attrs);
}

template <Cell kCell>
void Register(int opset) {
  const char* name = CellName(kCell);
  std::vector<DType> types = {DType::kFloat16, DType::kFloat32, DType::kFloat64};
  if (opset >= 22) types.push_back(DType::kBFloat16);
  std::vector<std::string> inputs = {"X", "W", "R", "B?", "sequence_lens?", "initial_h?"};
  std::vector<std::string> outputs = {"Y?", "Y_h?"};
  if (kCell == Cell::kLstm) {
    inputs.push_back("initial_c?");
    inputs.push_back("P?");
    outputs.push_back("Y_c?");
  }
  OpBuilder<RecurrentAttrs> b(name);
  b.since_opset(opset)
      .inputs(inputs)
      .outputs(outputs)
      .attr("activation_alpha", &RecurrentAttrs::activation_alpha)
      .attr("activation_beta", &RecurrentAttrs::activation_beta)
      .attr("activations", &RecurrentAttrs::activations)
      .attr("clip", &RecurrentAttrs::clip)
      .attr("direction", &RecurrentAttrs::direction)
      .attr("hidden_size", &RecurrentAttrs::hidden_size);
  if (opset >= 14) b.attr("layout", &RecurrentAttrs::layout);
  if (opset == 1) b.attr("output_sequence", &RecurrentAttrs::output_sequence);
  if (kCell == Cell::kGru && opset >= 3)
    b.attr("linear_before_reset", &RecurrentAttrs::linear_before_reset);
  if (kCell == Cell::kLstm) b.attr("input_forget", &RecurrentAttrs::input_forget);
  const std::vector<int> typed = kCell == Cell::kLstm ? std::vector<int>{0, 1, 2, 3, 5, 6, 7}
                                                      : std::vector<int>{0, 1, 2, 3, 5};
  b.dtypes(types, typed)
      .dtypes({DType::kInt32}, {4})
      .infer([](const InferCtx& c, const RecurrentAttrs& a) { return InferRecurrent(c, a, kCell); })
      .kernel(Forward<kCell, true>)
      .reference(Forward<kCell, false>)
      .backward(Backward<kCell>)
      .to_onnx(Export);
}

[[maybe_unused]] const bool kRegistered = [] {
  // 7 dropped opset 1's output_sequence; 14 added layout; 22 bfloat16.
  for (int opset : {1, 7, 14, 22}) {
    Register<Cell::kRnn>(opset);
    Register<Cell::kLstm>(opset);
    Register<Cell::kGru>(opset);
  }
  Register<Cell::kGru>(3);  // GRU-3 added linear_before_reset
  return true;
}();

}  // namespace
}  // namespace singa
