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
// The backward is backpropagation through time written with framework ops.
// https://onnx.ai/onnx/operators/onnx__RNN.html
// https://onnx.ai/onnx/operators/onnx__GRU.html
// https://onnx.ai/onnx/operators/onnx__LSTM.html
#include <algorithm>
#include <cctype>
#include <cmath>
#include <optional>
#include <type_traits>

#include "kernels/cpu/fast_math.h"
#include "kernels/cpu/matmul.h"
#include "ops/common.h"
#include "ops/grad_util.h"
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
  // In T: double, or float for the float kernels' LSTM gates.
  template <class T>
  T operator()(T x) const {
    const T al = static_cast<T>(alpha), be = static_cast<T>(beta);
    switch (kind) {
      case ActKind::kRelu:
        return x > 0 ? x : 0;
      case ActKind::kTanh:
        return std::tanh(x);
      case ActKind::kSigmoid:
        return 1 / (1 + std::exp(-x));
      case ActKind::kAffine:
        return al * x + be;
      case ActKind::kLeakyRelu:
        return x >= 0 ? x : al * x;
      case ActKind::kThresholdedRelu:
        return x > al ? x : 0;
      case ActKind::kScaledTanh:
        return al * std::tanh(be * x);
      case ActKind::kHardSigmoid:
        return std::clamp(al * x + be, T(0), T(1));
      case ActKind::kElu:
        return x >= 0 ? x : al * (std::exp(x) - 1);
      case ActKind::kSoftsign:
        return x / (1 + std::abs(x));
      case ActKind::kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
  // Applies the activation to v[0, n) in place. The fast float kernel
  // computes Sigmoid and Tanh in vector code (cpu::FastSigmoid, FastTanh).
  template <class T>
  void Apply(T* v, int64_t n, bool fast) const {
    if constexpr (std::is_same_v<T, float>) {
      if (fast && kind == ActKind::kSigmoid) {
        for (int64_t i = 0; i < n; ++i) v[i] = cpu::FastSigmoid(v[i]);
        return;
      }
      if (fast && kind == ActKind::kTanh) {
        for (int64_t i = 0; i < n; ++i) v[i] = cpu::FastTanh(v[i]);
        return;
      }
    }
    for (int64_t i = 0; i < n; ++i) v[i] = (*this)(v[i]);
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

// y = a @ b (a [M, K], b [K, N], y [M, N] dense).
void Gemm(const Tensor& a, const Tensor& b, const Tensor& y, bool fast) {
  if (y.numel() == 0) return;
  if (!fast || !cpu::DnnlMatMul(a, b, y)) cpu::MatMulLoops(a, b, y);
}

// y = a @ t[lo:hi]^T for a weight t [N, K] (a [M, K], y [M, hi - lo] dense).
// The fast kernel runs a small product (a recurrent step's: batch rows by
// the hidden size) as loops over the rows packed once per weight version
// (cpu::PanelMatMul): a oneDNN call costs more than such a product.
// A larger one runs oneDNN's inner product on the rows as they are, packed
// once per weight (cpu::DnnlLinear). The reference kernel multiplies by the
// rows transposed once per call.
class RowsProduct {
 public:
  RowsProduct(const Tensor& t, int64_t lo, int64_t hi, bool fast)
      : rows_(t.Slice(0, lo, hi)), fast_(fast) {}
  void operator()(const Tensor& a, const Tensor& y) {
    if (y.numel() == 0) return;
    const int64_t m = a.dim(0), k = a.dim(1), n = y.dim(1);
    if (fast_ && cpu::PanelMatMulFits(m, k, n) && a.dtype() == DType::kFloat32 &&
        a.is_contiguous()) {
      if (!panels_) panels_ = cpu::PanelWeights(rows_);
      return cpu::PanelMatMul(a.data<float>(), panels_, nullptr, y.data<float>(), m, k, n);
    }
    if (fast_ && cpu::DnnlLinear(a, rows_, Tensor(), y)) return;
    if (!rows_t_.defined()) rows_t_ = rows_.Transpose().Contiguous();
    Gemm(a, rows_t_, y, fast_);
  }

 private:
  Tensor rows_, rows_t_;
  const float* panels_ = nullptr;
  bool fast_;
};

// The input as a dense tensor of the compute dtype.
Tensor Dense(const Tensor& t, DType dt) {
  return (t.dtype() == dt ? t : t.AsType(dt)).Contiguous();
}

template <class C>
void Run(KernelCtx& k, const RecurrentAttrs& a, Cell cell, bool fast) {
  const DType cd = DTypeOf<C>();
  // The LSTM gates' arithmetic: float for the float kernels, as their
  // inputs and outputs are.
  using A = std::conditional_t<std::is_same_v<C, double>, double, float>;
  const int dirs = a.direction == "bidirectional" ? 2 : 1;
  // Parsed once per recorded op (a streaming model's step runs it per call).
  std::vector<Activation> parsed;
  if (!k.state || !*k.state) {
    parsed = ParseActivations(a, cell, dirs, CellName(cell));
    if (k.state) *k.state = std::make_shared<std::vector<Activation>>(parsed);
  }
  const std::vector<Activation>& acts =
      k.state ? *static_cast<const std::vector<Activation>*>(k.state->get()) : parsed;
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
  // Y, Y_h and Y_c are computed in the outputs where these are dense in the
  // kernel's layout and dtype, else in tensors of their own copied out last.
  auto result = [&](int i, Shape shape) {
    if (a.layout == 0 && i < k.num_outputs() && k.outputs[i].defined() &&
        k.outputs[i].dtype() == cd && k.outputs[i].shape() == shape && k.outputs[i].is_contiguous())
      return k.outputs[i];
    return Tensor(std::move(shape), cd);
  };
  auto state_in = [&](int i, int out) {
    Tensor t = result(out, {dirs, batch, hidden});
    if (!k.has_input(i)) {
      std::fill_n(t.data<C>(), t.numel(), C(0));
      return t;
    }
    Tensor s = k.input(i);
    if (a.layout == 1) s = s.Permute({1, 0, 2});
    cpu::ConvertCopy(s, t);
    return t;
  };
  const bool lstm = cell == Cell::kLstm;
  Tensor h = state_in(5, 1);
  Tensor cst = lstm ? state_in(6, 2) : Tensor();
  const Tensor p = lstm && k.has_input(7) ? Dense(k.input(7), cd) : Tensor();
  // Y in [seq, dirs, batch, hidden] order, zero where a sequence has ended.
  Tensor y = result(0, {seq, dirs, batch, hidden});
  if (std::any_of(lens.begin(), lens.end(), [&](int64_t n) { return n < seq; }))
    std::fill_n(y.data<C>(), y.numel(), C(0));
  const bool has_clip = a.clip.has_value();
  const double clip = has_clip ? *a.clip : 0.0;
  auto clipped = [&](auto v) {
    using T = decltype(v);
    return has_clip ? std::clamp(v, static_cast<T>(-clip), static_cast<T>(clip)) : v;
  };

  // GRU without linear_before_reset multiplies R_h by r * H: that part of
  // the recurrent product waits for r, so hr holds only z's and r's columns.
  const bool split_h = cell == Cell::kGru && a.linear_before_reset == 0;
  const int64_t hs = split_h ? 2 * hidden : gh;  // row stride of hr
  // The gate equations of one step, split over batch rows on the thread pool
  // (the reference kernel stays serial).
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(hidden, 1));
  auto clip_all = [&](A* v, int64_t n) {
    if (has_clip)
      for (int64_t i = 0; i < n; ++i) v[i] = std::clamp(v[i], A(-clip), A(clip));
  };
  auto for_rows = [&](auto&& row) {
    if (!fast) {
      for (int64_t bi = 0; bi < batch; ++bi) row(bi);
      return;
    }
    ParallelFor(0, batch, grain, [&](int64_t lo, int64_t hi) {
      for (int64_t bi = lo; bi < hi; ++bi) row(bi);
    });
  };
  // One direction's steps, on scratch of its own: the two of a
  // bidirectional layer touch disjoint parts of y, h and c.
  auto direction = [&](int d) {
    Tensor hr({batch, hs}, cd), hr2({batch, hidden}, cd), rh({batch, hidden}, cd);
    std::vector<A> gates(lstm ? batch * gh : 0);  // a step's LSTM gates
    const bool reverse = a.direction == "reverse" || d == 1;
    const Activation& f = acts[d * per];
    const Activation& gact = per > 1 ? acts[d * per + 1] : f;
    const Activation& hact = per > 2 ? acts[d * per + 2] : f;
    const Tensor wd = w.Slice(0, d, d + 1).Reshape({gh, in});
    const Tensor rd = r.Slice(0, d, d + 1).Reshape({gh, hidden});
    Tensor xw({seq * batch, gh}, cd);
    RowsProduct(wd, 0, gh, fast)(x.Reshape({seq * batch, in}), xw);
    RowsProduct recurrent(rd, 0, hs, fast);  // the columns hr holds
    std::optional<RowsProduct> reset_h;
    if (split_h) reset_h.emplace(rd, 2 * hidden, 3 * hidden, fast);
    const C* wb = b.data<C>() + d * 2 * gh;
    const C* rb = wb + gh;
    std::vector<A> bias(lstm ? gh : 0);
    for (size_t o = 0; o < bias.size(); ++o) bias[o] = A(wb[o]) + A(rb[o]);
    const C* pd = p.defined() ? p.data<C>() + d * 3 * hidden : nullptr;
    Tensor hd = h.Slice(0, d, d + 1).Reshape({batch, hidden});
    C* hp = hd.data<C>();
    C* cp = lstm ? cst.data<C>() + d * batch * hidden : nullptr;
    for (int64_t step = 0; step < seq; ++step) {
      const int64_t t = reverse ? seq - 1 - step : step;
      recurrent(hd, hr);
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
        if (split_h) (*reset_h)(rh, hr2);
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
        // Per row, over arrays of the hidden size so that the fast kernel's
        // activations run as vector code: gate pre-activations (order i, o,
        // f, c; peepholes i, o, f), then c and h.
        for_rows([&](int64_t bi) {
          if (t >= lens[bi]) return;
          const int64_t q = bi * gh, s0 = bi * hidden;
          A* ig = gates.data() + q;
          A *og = ig + hidden, *fg = ig + 2 * hidden, *cg = ig + 3 * hidden;
          for (int64_t o = 0; o < gh; ++o) ig[o] = A(xwt[q + o]) + A(hrp[q + o]) + bias[o];
          const C* c_prev = cp + s0;
          if (pd)
            for (int64_t j = 0; j < hidden; ++j) {
              ig[j] += A(pd[j]) * A(c_prev[j]);
              fg[j] += A(pd[2 * hidden + j]) * A(c_prev[j]);
            }
          clip_all(ig, hidden);
          clip_all(fg, 2 * hidden);  // f and c
          f.Apply(ig, hidden, fast);
          if (a.input_forget)
            for (int64_t j = 0; j < hidden; ++j) fg[j] = 1 - ig[j];
          else
            f.Apply(fg, hidden, fast);
          gact.Apply(cg, hidden, fast);
          // cg becomes the new cell state, then h's activation of it.
          for (int64_t j = 0; j < hidden; ++j) {
            cg[j] = fg[j] * A(c_prev[j]) + ig[j] * cg[j];
            cp[s0 + j] = static_cast<C>(cg[j]);
          }
          if (pd)
            for (int64_t j = 0; j < hidden; ++j) og[j] += A(pd[hidden + j]) * cg[j];
          clip_all(og, hidden);
          f.Apply(og, hidden, fast);
          hact.Apply(cg, hidden, fast);
          for (int64_t j = 0; j < hidden; ++j) {
            const C v = static_cast<C>(og[j] * cg[j]);
            hp[s0 + j] = v;
            yt[s0 + j] = v;
          }
        });
      }
    }
  };
  // The fast kernel runs a bidirectional layer's directions at once, one
  // per thread (the ops inside each then run on it alone): a step's work,
  // a small batch by the hidden size, is too little to split over threads,
  // and the steps of a direction follow each other.
  if (fast && dirs == 2)
    ParallelFor(0, 2, 1, [&](int64_t lo, int64_t hi) {
      for (int64_t d = lo; d < hi; ++d) direction(static_cast<int>(d));
    });
  else
    for (int d = 0; d < dirs; ++d) direction(d);
  // Outputs: Y, Y_h, Y_c (each optional), in the requested layout.
  auto store = [&](int i, Tensor src) {
    if (i >= k.num_outputs() || !k.outputs[i].defined() || k.outputs[i].numel() == 0 ||
        src.block() == k.outputs[i].block())
      return;
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
// Backpropagation through time, written with framework ops (MatMul, Mul,
// Where, ...), so it runs wherever the inputs live: the forward is recomputed
// step by step from the saved inputs, keeping each gate's pre-activation and
// value, then the steps are walked back. Per direction, the gradients of every
// step's input projection (gx) and recurrent product (gr) are gathered so
// that dX, dW and dR are one MatMul each. The fast kernel above stays free of
// bookkeeping.

Tensor Ints(std::vector<int64_t> v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}
Tensor SliceOp(const Tensor& t, int64_t axis, int64_t lo, int64_t hi) {
  return Call1("Slice", {t, Ints({lo}), Ints({hi}), Ints({axis})});
}
Tensor SqueezeOp(const Tensor& t, int64_t axis) { return Call1("Squeeze", {t, Ints({axis})}); }
Tensor UnsqueezeOp(const Tensor& t, int64_t axis) { return Call1("Unsqueeze", {t, Ints({axis})}); }
Tensor TransposeOp(const Tensor& t, std::vector<int64_t> perm) {
  return Call1("Transpose", {t}, {{"perm", std::move(perm)}});
}
Tensor ConcatOp(const TensorList& ts, int64_t axis) {
  return Call1("Concat", std::span<const Tensor>(ts), {{"axis", axis}});
}
Tensor MatMulOp(const Tensor& a, const Tensor& b) { return Call1("MatMul", {a, b}); }
// a^T @ b of 2-D a and b.
Tensor MatMulTOp(const Tensor& a, const Tensor& b) { return MatMulOp(TransposeOp(a, {1, 0}), b); }
// Sum over axis 0.
Tensor SumRowsOp(const Tensor& t) {
  return Call1("ReduceSum", {t, Ints({0})}, {{"keepdims", int64_t{0}}});
}
// Entry [i, j] of the first two axes of `t`.
Tensor AtOp(const Tensor& t, int64_t i, int64_t j) {
  return SqueezeOp(SqueezeOp(SliceOp(SliceOp(t, 0, i, i + 1), 1, j, j + 1), 1), 0);
}
// Entry i of the first axis of `t`.
Tensor AtOp(const Tensor& t, int64_t i) { return SqueezeOp(SliceOp(t, 0, i, i + 1), 0); }

using grad::Add;
using grad::And;
using grad::Div;
using grad::Greater;
using grad::Less;
using grad::Masked;
using grad::Mul;
using grad::Not;
using grad::Scalar;
using grad::Sub;
using grad::Where;

Tensor ApplyOp(const Activation& act, const Tensor& x) {
  const float alpha = static_cast<float>(act.alpha), beta = static_cast<float>(act.beta);
  switch (act.kind) {
    case ActKind::kRelu:
      return Call1("Relu", {x});
    case ActKind::kTanh:
      return Call1("Tanh", {x});
    case ActKind::kSigmoid:
      return Call1("Sigmoid", {x});
    case ActKind::kAffine:
      return Add(Mul(x, Scalar(act.alpha, x)), Scalar(act.beta, x));
    case ActKind::kLeakyRelu:
      return Call1("LeakyRelu", {x}, {{"alpha", alpha}});
    case ActKind::kThresholdedRelu:
      return Call1("ThresholdedRelu", {x}, {{"alpha", alpha}});
    case ActKind::kScaledTanh:
      return Mul(Call1("Tanh", {Mul(x, Scalar(act.beta, x))}), Scalar(act.alpha, x));
    case ActKind::kHardSigmoid:
      return Call1("HardSigmoid", {x}, {{"alpha", alpha}, {"beta", beta}});
    case ActKind::kElu:
      return Call1("Elu", {x}, {{"alpha", alpha}});
    case ActKind::kSoftsign:
      return Call1("Softsign", {x});
    case ActKind::kSoftplus:
      return Call1("Softplus", {x});
  }
  return x;
}

// dy * act'(x), from the activation's input x and output y.
Tensor ActGrad(const Activation& act, const Tensor& x, const Tensor& y, const Tensor& dy) {
  const double alpha = act.alpha, beta = act.beta;
  switch (act.kind) {
    case ActKind::kRelu:
      return Masked(Greater(x, Scalar(0, x)), dy);
    case ActKind::kTanh:
      return Mul(dy, Sub(Scalar(1, y), Mul(y, y)));
    case ActKind::kSigmoid:
      return Mul(dy, Mul(y, Sub(Scalar(1, y), y)));
    case ActKind::kAffine:
      return Mul(dy, Scalar(alpha, dy));
    case ActKind::kLeakyRelu:
      return Where(Less(x, Scalar(0, x)), Mul(dy, Scalar(alpha, dy)), dy);
    case ActKind::kThresholdedRelu:
      return Masked(Greater(x, Scalar(alpha, x)), dy);
    case ActKind::kScaledTanh: {
      const Tensor t = Call1("Tanh", {Mul(x, Scalar(beta, x))});
      return Mul(dy, Mul(Scalar(alpha * beta, t), Sub(Scalar(1, t), Mul(t, t))));
    }
    case ActKind::kHardSigmoid: {
      const Tensor v = Add(Mul(x, Scalar(alpha, x)), Scalar(beta, x));
      return Masked(And(Greater(v, Scalar(0, v)), Less(v, Scalar(1, v))),
                    Mul(dy, Scalar(alpha, dy)));
    }
    case ActKind::kElu:
      return Where(Less(x, Scalar(0, x)), Mul(dy, Add(y, Scalar(alpha, y))), dy);
    case ActKind::kSoftsign: {
      const Tensor s = Add(Scalar(1, x), Call1("Abs", {x}));
      return Div(dy, Mul(s, s));
    }
    case ActKind::kSoftplus:
      return Mul(dy, Call1("Sigmoid", {x}));
  }
  return dy;
}

// One gate of one step: its pre-activation, clipped, and its value.
struct Gate {
  Tensor pre, in, out;
};

// What the backward keeps of one step of one direction.
struct Step {
  Tensor h_prev, c_prev;    // the state the step started from
  Tensor mask;              // [batch, 1], 1 while the sequence runs (with sequence_lens)
  std::vector<Gate> gates;  // RNN: h; GRU: z, r, candidate; LSTM: i, o, f (unless input_forget), c
  Tensor ft;                // LSTM: the forget gate's value
  Tensor hr_c;              // GRU linear_before_reset: R_h's product plus its bias
  Tensor rh;                // GRU otherwise: r * h_prev, the input of R_h's product
  Tensor c_new, hc;         // LSTM: the new cell state and hact of it
};

// The backward of one recorded RNN, GRU or LSTM application, every direction.
class Bptt {
 public:
  Bptt(const GradCtx& g, const RecurrentAttrs& a, Cell cell)
      : g_(g), a_(a), cell_(cell), lstm_(cell == Cell::kLstm) {
    dirs_ = a.direction == "bidirectional" ? 2 : 1;
    acts_ = ParseActivations(a, cell, dirs_, CellName(cell));
    x_ = a.layout == 1 ? TransposeOp(g.input(0), {1, 0, 2}) : g.input(0);
    seq_ = x_.dim(0);
    batch_ = x_.dim(1);
    in_ = x_.dim(2);
    hidden_ = g.input(2).dim(2);
    gh_ = Gates(cell) * hidden_;
    dt_ = x_.dtype();
    x2_ = Call1("Reshape", {x_, Ints({seq_ * batch_, in_})});
    if (g.has_input(4)) {
      lens_ = g.input(4).ToVector<int64_t>();
      for (int64_t& l : lens_) l = std::clamp<int64_t>(l, 0, seq_);
    }
    // The outputs' gradients in [seq, dirs, batch, hidden] / [dirs, batch, hidden] order.
    auto grad_out = [&](int o, std::vector<int64_t> perm) {
      if (o >= g.num_outputs() || !g.grad_output(o).defined()) return Tensor();
      return a.layout == 1 ? TransposeOp(g.grad_output(o), std::move(perm)) : g.grad_output(o);
    };
    dy_ = grad_out(0, {1, 2, 0, 3});
    dyh_ = grad_out(1, {1, 0, 2});
    if (lstm_) dyc_ = grad_out(2, {1, 0, 2});
  }

  // Fills d[i] for the inputs that need a gradient.
  void Run(TensorList& d) {
    TensorList dx, dw, dr, db, dp, dh0, dc0;
    for (int dir = 0; dir < dirs_; ++dir) Direction(dir, dx, dw, dr, db, dp, dh0, dc0);
    auto stack = [](const TensorList& ts) {
      TensorList u;
      for (const Tensor& t : ts) u.push_back(UnsqueezeOp(t, 0));
      return ConcatOp(u, 0);
    };
    auto state_layout = [&](const Tensor& t) {
      return a_.layout == 1 ? TransposeOp(t, {1, 0, 2}) : t;
    };
    auto want = [&](int i) { return i < g_.num_inputs() && g_.has_input(i) && g_.needs_grad(i); };
    if (want(0)) {
      Tensor sum = dx[0];
      for (int dir = 1; dir < dirs_; ++dir) sum = Add(sum, dx[dir]);
      d[0] = state_layout(Call1("Reshape", {sum, Ints({seq_, batch_, in_})}));
    }
    if (want(1)) d[1] = stack(dw);
    if (want(2)) d[2] = stack(dr);
    if (want(3)) d[3] = stack(db);
    if (want(5)) d[5] = state_layout(stack(dh0));
    if (lstm_ && want(6)) d[6] = state_layout(stack(dc0));
    if (lstm_ && want(7)) d[7] = stack(dp);
  }

 private:
  Tensor Zeros(Shape shape) const { return Tensor::Zeros(std::move(shape), dt_, x_.device()); }
  Tensor Block(const Tensor& v, int k) const {
    return SliceOp(v, v.ndim() - 1, k * hidden_, (k + 1) * hidden_);
  }
  Tensor Clip(const Tensor& v) const {
    return a_.clip ? Call1("Clip", {v, Scalar(-*a_.clip, v), Scalar(*a_.clip, v)}) : v;
  }
  Gate MakeGate(const Tensor& pre, const Activation& act) const {
    Gate gt{pre, Clip(pre), Tensor()};
    gt.out = ApplyOp(act, gt.in);
    return gt;
  }
  // The gradient of a gate's pre-activation from that of its value.
  Tensor GateGrad(const Gate& gt, const Activation& act, const Tensor& dout) const {
    const Tensor d = ActGrad(act, gt.in, gt.out, dout);
    if (!a_.clip) return d;
    const Tensor& v = gt.pre;
    const double c = *a_.clip;
    return Masked(And(Not(Less(v, Scalar(-c, v))), Not(Greater(v, Scalar(c, v)))), d);
  }

  void Direction(int dir, TensorList& dx, TensorList& dw, TensorList& dr, TensorList& db,
                 TensorList& dp, TensorList& dh0, TensorList& dc0) {
    const int per = ActsPerDirection(cell_);
    const bool reverse = a_.direction == "reverse" || dir == 1;
    const Activation& f = acts_[dir * per];
    const Activation& gact = per > 1 ? acts_[dir * per + 1] : f;
    const Activation& hact = per > 2 ? acts_[dir * per + 2] : f;
    const bool gru_split = cell_ == Cell::kGru && a_.linear_before_reset == 0;
    const Tensor wd = AtOp(g_.input(1), dir), rd = AtOp(g_.input(2), dir);  // [gh, in|hidden]
    const Tensor rt = TransposeOp(rd, {1, 0});
    const Tensor rd_h = gru_split ? SliceOp(rd, 0, 2 * hidden_, 3 * hidden_) : Tensor();
    Tensor wb, rb;
    if (g_.has_input(3)) {
      const Tensor bd = AtOp(g_.input(3), dir);
      wb = SliceOp(bd, 0, 0, gh_);
      rb = SliceOp(bd, 0, gh_, 2 * gh_);
    } else {
      wb = rb = Zeros({gh_});
    }
    const Tensor pd = lstm_ && g_.has_input(7) ? AtOp(g_.input(7), dir) : Tensor();
    auto state = [&](int i) {
      if (!g_.has_input(i)) return Zeros({batch_, hidden_});
      const Tensor s = a_.layout == 1 ? TransposeOp(g_.input(i), {1, 0, 2}) : g_.input(i);
      return AtOp(s, dir);
    };
    const Tensor xw = MatMulOp(x2_, TransposeOp(wd, {1, 0}));  // [seq * batch, gh]

    // Forward, keeping what the backward reads.
    std::vector<Step> steps(seq_);
    Tensor h = state(5), c = lstm_ ? state(6) : Tensor();
    for (int64_t k = 0; k < seq_; ++k) {
      const int64_t t = reverse ? seq_ - 1 - k : k;
      Step& s = steps[t];
      s.h_prev = h;
      s.c_prev = c;
      const Tensor xwt = SliceOp(xw, 0, t * batch_, (t + 1) * batch_);
      const Tensor hr = MatMulOp(h, rt);
      auto pre = [&](int j) {
        return Add(Add(Block(xwt, j), Block(hr, j)), Add(Block(wb, j), Block(rb, j)));
      };
      Tensor hn, cn;
      if (cell_ == Cell::kRnn) {
        s.gates = {MakeGate(Add(Add(xwt, hr), Add(wb, rb)), f)};
        hn = s.gates[0].out;
      } else if (cell_ == Cell::kGru) {
        const Gate z = MakeGate(pre(0), f), r = MakeGate(pre(1), f);
        Tensor rec;
        if (gru_split) {
          s.rh = Mul(r.out, h);
          rec = Add(MatMulOp(s.rh, TransposeOp(rd_h, {1, 0})), Block(rb, 2));
        } else {
          s.hr_c = Add(Block(hr, 2), Block(rb, 2));
          rec = Mul(r.out, s.hr_c);
        }
        const Gate cand = MakeGate(Add(Add(Block(xwt, 2), Block(wb, 2)), rec), gact);
        hn = Add(cand.out, Mul(z.out, Sub(h, cand.out)));
        s.gates = {z, r, cand};
      } else {
        auto peep = [&](const Tensor& v, int j, const Tensor& cv) {
          return pd.defined() ? Add(v, Mul(Block(pd, j), cv)) : v;
        };
        const Gate it = MakeGate(peep(pre(0), 0, c), f);
        Gate ft;
        if (a_.input_forget) {
          s.ft = Sub(Scalar(1, it.out), it.out);
        } else {
          ft = MakeGate(peep(pre(2), 2, c), f);
          s.ft = ft.out;
        }
        const Gate ct = MakeGate(pre(3), gact);
        cn = s.c_new = Add(Mul(s.ft, c), Mul(it.out, ct.out));
        const Gate ot = MakeGate(peep(pre(1), 1, cn), f);
        s.hc = ApplyOp(hact, cn);
        hn = Mul(ot.out, s.hc);
        s.gates = {it, ot, ft, ct};
      }
      if (!lens_.empty()) {
        // Finished sequences keep their state (and output zeros).
        std::vector<double> m(batch_);
        for (int64_t b = 0; b < batch_; ++b) m[b] = t < lens_[b] ? 1.0 : 0.0;
        s.mask = Tensor::FromVector<double>({batch_, 1}, m, x_.device()).AsType(dt_);
        const Tensor keep = Sub(Scalar(1, s.mask), s.mask);
        h = Add(Mul(hn, s.mask), Mul(h, keep));
        if (lstm_) c = Add(Mul(cn, s.mask), Mul(c, keep));
      } else {
        h = hn;
        c = cn;
      }
    }

    // Backward, from the last step taken to the first.
    Tensor dh = dyh_.defined() ? AtOp(dyh_, dir) : Zeros({batch_, hidden_});
    Tensor dc = !lstm_ ? Tensor() : dyc_.defined() ? AtOp(dyc_, dir) : Zeros({batch_, hidden_});
    TensorList gx(seq_), gr(seq_), h_prev(seq_), rh(gru_split ? seq_ : 0);
    Tensor dpi, dpo, dpf;
    auto accumulate = [](Tensor& acc, const Tensor& v) { acc = acc.defined() ? Add(acc, v) : v; };
    for (int64_t k = seq_ - 1; k >= 0; --k) {
      const int64_t t = reverse ? seq_ - 1 - k : k;
      const Step& s = steps[t];
      h_prev[t] = s.h_prev;
      if (gru_split) rh[t] = s.rh;
      // The step's new state is m * (its cell's) + (1 - m) * the old one, and
      // its output m * the cell's.
      Tensor dhn = dy_.defined() ? Add(dh, AtOp(dy_, t, dir)) : dh, dcn = dc;
      Tensor dh_prev, dc_prev;
      if (s.mask.defined()) {
        const Tensor keep = Sub(Scalar(1, s.mask), s.mask);
        dh_prev = Mul(dh, keep);
        dhn = Mul(dhn, s.mask);
        if (lstm_) {
          dc_prev = Mul(dc, keep);
          dcn = Mul(dc, s.mask);
        }
      }
      Tensor dhp, dcp;  // through the cell
      if (cell_ == Cell::kRnn) {
        gx[t] = gr[t] = GateGrad(s.gates[0], f, dhn);
        dhp = MatMulOp(gx[t], rd);
      } else if (cell_ == Cell::kGru) {
        const Gate &z = s.gates[0], &r = s.gates[1], &cand = s.gates[2];
        const Tensor dvc = GateGrad(cand, gact, Mul(dhn, Sub(Scalar(1, z.out), z.out)));
        const Tensor dz = Mul(dhn, Sub(s.h_prev, cand.out));
        dhp = Mul(dhn, z.out);
        Tensor gr_c, dr;
        if (gru_split) {
          gr_c = dvc;
          const Tensor drh = MatMulOp(dvc, rd_h);
          dr = Mul(drh, s.h_prev);
          dhp = Add(dhp, Mul(drh, r.out));
        } else {
          gr_c = Mul(dvc, r.out);
          dr = Mul(dvc, s.hr_c);
        }
        const Tensor dvz = GateGrad(z, f, dz), dvr = GateGrad(r, f, dr);
        gx[t] = ConcatOp({dvz, dvr, dvc}, 1);
        gr[t] = ConcatOp({dvz, dvr, gr_c}, 1);
        dhp = gru_split
                  ? Add(dhp, MatMulOp(ConcatOp({dvz, dvr}, 1), SliceOp(rd, 0, 0, 2 * hidden_)))
                  : Add(dhp, MatMulOp(gr[t], rd));
      } else {
        const Gate &it = s.gates[0], &ot = s.gates[1], &ft = s.gates[2], &ct = s.gates[3];
        const Tensor dvo = GateGrad(ot, f, Mul(dhn, s.hc));
        dcn = Add(dcn, ActGrad(hact, s.c_new, s.hc, Mul(dhn, ot.out)));
        if (pd.defined()) {
          dcn = Add(dcn, Mul(dvo, Block(pd, 1)));
          accumulate(dpo, SumRowsOp(Mul(dvo, s.c_new)));
        }
        Tensor dit = Mul(dcn, ct.out);
        const Tensor dft = Mul(dcn, s.c_prev);
        dcp = Mul(dcn, s.ft);
        Tensor dvf;
        if (a_.input_forget) {
          dit = Sub(dit, dft);
          dvf = Zeros({batch_, hidden_});
        } else {
          dvf = GateGrad(ft, f, dft);
          if (pd.defined()) {
            dcp = Add(dcp, Mul(dvf, Block(pd, 2)));
            accumulate(dpf, SumRowsOp(Mul(dvf, s.c_prev)));
          }
        }
        const Tensor dvi = GateGrad(it, f, dit);
        if (pd.defined()) {
          dcp = Add(dcp, Mul(dvi, Block(pd, 0)));
          accumulate(dpi, SumRowsOp(Mul(dvi, s.c_prev)));
        }
        const Tensor dvc = GateGrad(ct, gact, Mul(dcn, it.out));
        gx[t] = gr[t] = ConcatOp({dvi, dvo, dvf, dvc}, 1);
        dhp = MatMulOp(gx[t], rd);
      }
      dh = dh_prev.defined() ? Add(dh_prev, dhp) : dhp;
      if (lstm_) dc = dc_prev.defined() ? Add(dc_prev, dcp) : dcp;
    }

    const Tensor gxs = ConcatOp(gx, 0), grs = ConcatOp(gr, 0);  // [seq * batch, gh]
    dx.push_back(MatMulOp(gxs, wd));
    dw.push_back(MatMulTOp(gxs, x2_));
    const Tensor hs = ConcatOp(h_prev, 0);
    if (gru_split) {
      dr.push_back(ConcatOp({MatMulTOp(SliceOp(grs, 1, 0, 2 * hidden_), hs),
                             MatMulTOp(SliceOp(grs, 1, 2 * hidden_, gh_), ConcatOp(rh, 0))},
                            0));
    } else {
      dr.push_back(MatMulTOp(grs, hs));
    }
    db.push_back(ConcatOp({SumRowsOp(gxs), SumRowsOp(grs)}, 0));
    dh0.push_back(dh);
    if (lstm_) dc0.push_back(dc);
    if (pd.defined()) {
      if (!dpf.defined()) dpf = Zeros({hidden_});  // input_forget: P's forget part is unused
      dp.push_back(ConcatOp({dpi, dpo, dpf}, 0));
    }
  }

  const GradCtx& g_;
  const RecurrentAttrs& a_;
  const Cell cell_;
  const bool lstm_;
  int dirs_ = 1;
  std::vector<Activation> acts_;
  Tensor x_, x2_;  // X in [seq, batch, in] order, and as [seq * batch, in]
  int64_t seq_ = 0, batch_ = 0, in_ = 0, hidden_ = 0, gh_ = 0;
  DType dt_ = DType::kFloat32;
  std::vector<int64_t> lens_;
  Tensor dy_, dyh_, dyc_;
};

template <Cell kCell>
TensorList Backward(const GradCtx& g, const RecurrentAttrs& a) {
  const int n = g.num_inputs();
  TensorList d(n);
  const bool lstm = kCell == Cell::kLstm;
  const Shape& xs = g.input(0).shape();
  const int64_t seq = a.layout == 0 ? xs[0] : xs[1], batch = a.layout == 0 ? xs[1] : xs[0];
  auto zeros_for_rest = [&] {
    for (int i = 0; i < n; ++i)
      if (!d[i].defined() && g.needs_grad(i) && g.has_input(i) && i != 4)
        d[i] = grad::ZerosLike(g.input(i));
    return d;
  };
  if (seq == 0) {  // Y_h and Y_c are the initial states
    if (g.has_input(5) && g.needs_grad(5) && g.grad_output(1).defined()) d[5] = g.grad_output(1);
    if (lstm && g.has_input(6) && g.needs_grad(6) && g.num_outputs() > 2 &&
        g.grad_output(2).defined())
      d[6] = g.grad_output(2);
    return zeros_for_rest();
  }
  bool any = false;
  for (int o = 0; o < g.num_outputs(); ++o) any = any || g.grad_output(o).defined();
  if (!any || batch == 0) return zeros_for_rest();
  Bptt(g, a, kCell).Run(d);
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
