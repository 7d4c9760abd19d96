// FusedElementwise (domain ai.singa, made by the ONNX planner only): a
// group of float32 elementwise ops (src/onnx/passes/fuse_elementwise.cc) run
// as one pass over memory. The program is a list of steps; step i applies
// ops[i] to one or two operands, args[2i] and args[2i+1] (-1: none), where
// operand j < the number of inputs is input j (numpy broadcasting) and
// j >= it is the result of step j - inputs. alphas[i] and betas[i] are the
// step's parameters (Clip's bounds, LeakyRelu's and HardSigmoid's
// coefficients). The last step's result is Y, of the inputs' broadcast
// shape. Each step rounds to float32 as the op it replaces does, so the
// result is the group's own; sigmoid, tanh and exp are cpu::FastSigmoid,
// FastTanh and FastExp (within a few ulp).
//
//   Mul(x, Div(Clip(Add(x, 3), 0, 6), 6)) as ops {Add, Clip, Div, Mul},
//   inputs {x, 3, 6}, args {0, 1, 3, -1, 4, 2, 0, 5}, alphas {0, 0, 0, 0},
//   betas {0, 6, 0, 0}
#include "singa/ops/fused_elementwise.h"

#include <cmath>
#include <string_view>

#include "kernels/cpu/fast_math.h"
#include "ops/common.h"
#include "singa/core/parallel.h"

namespace singa {
namespace {

struct FusedElementwiseAttrs {
  std::vector<std::string> ops;
  std::vector<int64_t> args;
  std::vector<float> alphas, betas;
};

enum class Code : uint8_t {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kMax,
  kMin,
  kAbs,
  kClip,
  kErf,
  kExp,
  kHardSigmoid,
  kLeakyRelu,
  kNeg,
  kReciprocal,
  kRelu,
  kSigmoid,
  kSqrt,
  kTanh,
};

constexpr std::pair<std::string_view, Code> kCodes[] = {
    {"Add", Code::kAdd},
    {"Sub", Code::kSub},
    {"Mul", Code::kMul},
    {"Div", Code::kDiv},
    {"Max", Code::kMax},
    {"Min", Code::kMin},
    {"Abs", Code::kAbs},
    {"Clip", Code::kClip},
    {"Erf", Code::kErf},
    {"Exp", Code::kExp},
    {"HardSigmoid", Code::kHardSigmoid},
    {"LeakyRelu", Code::kLeakyRelu},
    {"Neg", Code::kNeg},
    {"Reciprocal", Code::kReciprocal},
    {"Relu", Code::kRelu},
    {"Sigmoid", Code::kSigmoid},
    {"Sqrt", Code::kSqrt},
    {"Tanh", Code::kTanh},
};

bool Binary(Code c) { return c <= Code::kMin; }

struct Step {
  Code code;
  int a, b;
  float alpha, beta;
};

using fused_elementwise::kMaxOperands, fused_elementwise::kMaxSteps;

std::vector<Step> Program(const FusedElementwiseAttrs& a, int num_inputs, std::string_view where) {
  const size_t n = a.ops.size();
  SINGA_CHECK(n > 0 && n <= kMaxSteps && a.args.size() == 2 * n && a.alphas.size() == n &&
                  a.betas.size() == n && num_inputs + static_cast<int>(n) <= kMaxOperands,
              ShapeError,
              where << ": a program of " << n << " steps needs 2 args, an alpha and a beta each, "
                    << "at most " << kMaxSteps << " steps and " << kMaxOperands << " operands");
  std::vector<Step> steps;
  for (size_t i = 0; i < n; ++i) {
    const auto* it = std::find_if(std::begin(kCodes), std::end(kCodes),
                                  [&](const auto& c) { return c.first == a.ops[i]; });
    SINGA_CHECK(it != std::end(kCodes), UnsupportedOp,
                where << ": step " << i << " is '" << a.ops[i] << "', not an op it runs");
    Step s{it->second, static_cast<int>(a.args[2 * i]), static_cast<int>(a.args[2 * i + 1]),
           a.alphas[i], a.betas[i]};
    const int limit = num_inputs + static_cast<int>(i);
    SINGA_CHECK(s.a >= 0 && s.a < limit && (Binary(s.code) ? s.b >= 0 && s.b < limit : s.b == -1),
                ShapeError,
                where << ": step " << i << " (" << a.ops[i] << ") reads operands " << s.a << ", "
                      << s.b << " (inputs and earlier steps: 0.." << limit - 1 << ")");
    steps.push_back(s);
  }
  return steps;
}

SpecList Infer(const InferCtx& c, const FusedElementwiseAttrs& a) {
  Program(a, c.num_inputs(), c.where());
  return ops::BroadcastSpec(c);
}

// Step C on one element (y unused by the unary ones).
template <Code C>
[[gnu::always_inline]] inline float Op(float x, float y, float alpha, float beta) {
  if constexpr (C == Code::kAdd) return x + y;
  if constexpr (C == Code::kSub) return x - y;
  if constexpr (C == Code::kMul) return x * y;
  if constexpr (C == Code::kDiv) return x / y;
  if constexpr (C == Code::kMax) return x != x || x > y ? x : y;
  if constexpr (C == Code::kMin) return x != x || x < y ? x : y;
  if constexpr (C == Code::kAbs) return std::fabs(x);
  if constexpr (C == Code::kClip) return x < alpha ? alpha : (x > beta ? beta : x);
  if constexpr (C == Code::kErf) return cpu::FastErf(x);
  if constexpr (C == Code::kExp) return cpu::FastExp(x);
  if constexpr (C == Code::kHardSigmoid) {
    const float v = alpha * x + beta;
    return v < 0.f ? 0.f : (v > 1.f ? 1.f : v);
  }
  if constexpr (C == Code::kLeakyRelu) return x < 0.f ? alpha * x : x;
  if constexpr (C == Code::kNeg) return -x;
  if constexpr (C == Code::kReciprocal) return 1.f / x;
  if constexpr (C == Code::kRelu) return x > 0.f ? x : 0.f;
  if constexpr (C == Code::kSigmoid) return cpu::FastSigmoid(x);
  if constexpr (C == Code::kSqrt) return std::sqrt(x);
  if constexpr (C == Code::kTanh) return cpu::FastTanh(x);
}

// Step C over n values of x and y, each either n values or one value for
// all (DX, DY: 1 or 0 apart): a loop that compiles to vector code.
template <Code C, int DX, int DY>
void Loop(const float* x, const float* y, float* r, int64_t n, float alpha, float beta) {
  for (int64_t j = 0; j < n; ++j) r[j] = Op<C>(x[j * DX], y[j * DY], alpha, beta);
}

template <int DX, int DY>
void Apply(const Step& s, const float* x, const float* y, float* r, int64_t n) {
  switch (s.code) {
    case Code::kAdd:
      return Loop<Code::kAdd, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kSub:
      return Loop<Code::kSub, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kMul:
      return Loop<Code::kMul, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kDiv:
      return Loop<Code::kDiv, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kMax:
      return Loop<Code::kMax, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kMin:
      return Loop<Code::kMin, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kAbs:
      return Loop<Code::kAbs, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kClip:
      return Loop<Code::kClip, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kErf:
      return Loop<Code::kErf, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kExp:
      return Loop<Code::kExp, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kHardSigmoid:
      return Loop<Code::kHardSigmoid, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kLeakyRelu:
      return Loop<Code::kLeakyRelu, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kNeg:
      return Loop<Code::kNeg, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kReciprocal:
      return Loop<Code::kReciprocal, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kRelu:
      return Loop<Code::kRelu, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kSigmoid:
      return Loop<Code::kSigmoid, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kSqrt:
      return Loop<Code::kSqrt, DX, DY>(x, y, r, n, s.alpha, s.beta);
    case Code::kTanh:
      return Loop<Code::kTanh, DX, DY>(x, y, r, n, s.alpha, s.beta);
  }
}

// The output's dimensions with every input's strides (0 where it
// broadcasts), neighbours merged where each input steps through them as
// one: an SE block's scale [N,C,1,1] on [N,C,H,W] runs rows of H*W.
struct Walk {
  Shape dims;
  std::vector<Strides> strides;  // per input, per dim
};

Walk MakeWalk(const KernelCtx& k, const Shape& out) {
  const size_t r = out.size();
  Walk w{out, {}};
  for (const Tensor& t : k.inputs) {
    Strides s(r, 0);
    const size_t shift = r - t.shape().size();
    for (size_t d = 0; d < t.shape().size(); ++d)
      s[d + shift] = t.dim(static_cast<int64_t>(d)) == 1 ? 0 : t.strides()[d];
    w.strides.push_back(std::move(s));
  }
  for (size_t d = w.dims.size(); d-- > 1;) {
    bool merge = true;
    for (const Strides& s : w.strides) merge = merge && s[d - 1] == s[d] * w.dims[d];
    if (!merge) continue;
    w.dims[d - 1] *= w.dims[d];
    w.dims.erase(w.dims.begin() + static_cast<int64_t>(d));
    for (Strides& s : w.strides) {
      s[d - 1] = s[d];
      s.erase(s.begin() + static_cast<int64_t>(d));
    }
  }
  if (w.dims.empty()) {
    w.dims = {1};
    for (Strides& s : w.strides) s = {0};
  }
  return w;
}

void Forward(KernelCtx& k, const FusedElementwiseAttrs& a) {
  // Parsed once per recorded op: its replays keep the attributes.
  std::shared_ptr<std::vector<Step>> program;
  if (k.state && *k.state) {
    program = std::static_pointer_cast<std::vector<Step>>(*k.state);
  } else {
    program = std::make_shared<std::vector<Step>>(Program(a, k.num_inputs(), "FusedElementwise"));
    if (k.state) *k.state = program;
  }
  const std::vector<Step>& steps = *program;
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const Walk w = MakeWalk(k, y.shape());
  const int ni = k.num_inputs();
  std::vector<const float*> base(ni);
  for (int i = 0; i < ni; ++i) base[i] = k.input(i).data<float>();
  float* out = y.data<float>();
  const int64_t rank = std::ssize(w.dims), row = w.dims.back(), rows = y.numel() / row;
  constexpr int64_t kChunk = 256;
  const int64_t chunks = (row + kChunk - 1) / kChunk;
  ParallelFor(
      0, rows * chunks, std::max<int64_t>(1, (1 << 14) / kChunk), [&](int64_t lo, int64_t hi) {
        alignas(64) float buf[kMaxOperands][kChunk];
        const float* operand[kMaxOperands];
        // An operand with one value for the whole chunk (a broadcast input, or a
        // step on such operands alone, computed once).
        bool uniform[kMaxOperands];
        for (int64_t c = lo; c < hi; ++c) {
          const int64_t r = c / chunks, j0 = (c % chunks) * kChunk, n = std::min(kChunk, row - j0);
          for (int i = 0; i < ni; ++i) {
            int64_t off = 0, rest = r;
            for (int64_t d = rank - 1; d-- > 0;) {
              off += rest % w.dims[d] * w.strides[i][d];
              rest /= w.dims[d];
            }
            const int64_t step = w.strides[i].back();
            const float* p = base[i] + off + j0 * step;
            uniform[i] = step == 0;
            if (step == 0 || step == 1) {
              operand[i] = p;
            } else {
              for (int64_t j = 0; j < n; ++j) buf[i][j] = p[j * step];
              operand[i] = buf[i];
            }
          }
          for (size_t s = 0; s < steps.size(); ++s) {
            const Step& st = steps[s];
            const bool last = s + 1 == steps.size();
            const float* x = operand[st.a];
            const float* y = st.b >= 0 ? operand[st.b] : x;
            const bool ux = uniform[st.a], uy = st.b >= 0 ? uniform[st.b] : ux;
            float* dst = last ? out + r * row + j0 : buf[ni + s];
            uniform[ni + s] = ux && uy && !last;
            if (ux && uy)
              Apply<0, 0>(st, x, y, dst, last ? n : 1);
            else if (ux)
              Apply<0, 1>(st, x, y, dst, n);
            else if (uy)
              Apply<1, 0>(st, x, y, dst, n);
            else
              Apply<1, 1>(st, x, y, dst, n);
            operand[ni + s] = dst;
          }
        }
      });
}

// Each step by the op it replaces, through the op registry.
void Reference(KernelCtx& k, const FusedElementwiseAttrs& a) {
  const std::vector<Step> steps = Program(a, k.num_inputs(), "FusedElementwise");
  TensorList values(k.inputs.begin(), k.inputs.end());
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& st = steps[s];
    const Tensor& x = values[st.a];
    const std::string& op = a.ops[s];
    if (st.code == Code::kClip) {
      values.push_back(Call1(op, {x, Tensor::Scalar(st.alpha), Tensor::Scalar(st.beta)}));
    } else if (st.code == Code::kLeakyRelu) {
      values.push_back(Call1(op, {x}, {{"alpha", st.alpha}}));
    } else if (st.code == Code::kHardSigmoid) {
      values.push_back(Call1(op, {x}, {{"alpha", st.alpha}, {"beta", st.beta}}));
    } else if (Binary(st.code)) {
      values.push_back(Call1(op, {x, values[st.b]}));
    } else {
      values.push_back(Call1(op, {x}));
    }
  }
  Tensor y = k.output(0);
  y.CopyFrom(values.back());
}

}  // namespace

SINGA_REGISTER_OP(FusedElementwise, FusedElementwiseAttrs)
    .domain("ai.singa")
    .inputs({"inputs..."})
    .outputs({"Y"})
    .attr("alphas", &FusedElementwiseAttrs::alphas)
    .attr("args", &FusedElementwiseAttrs::args)
    .attr("betas", &FusedElementwiseAttrs::betas)
    .attr("ops", &FusedElementwiseAttrs::ops)
    .dtypes({DType::kFloat32}, {0})
    .infer(Infer)
    .kernel(Forward)
    .reference(Reference);

}  // namespace singa
