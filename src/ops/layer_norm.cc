// LayerNormalization (opset 17): each slice X[i0..i(axis-1), ...] is
// normalized to zero mean and unit variance over the dimensions from `axis`
// on, then Y = normalized * Scale + B (Scale and B broadcast to X). Optional
// outputs: Mean and InvStdDev = 1 / sqrt(var + epsilon), of shape
// X.shape[:axis] + [1] * (rank - axis) and dtype stash_type.
// NOTE: statistics are computed in float (double for a double X: the spec's
// reference does), and Y is rounded once.
// oneDNN layer_normalization is the fast path for float32/bfloat16/float16 X
// when Scale and B cover exactly the normalized dimensions.
// Backward: the internal op LayerNormGrad (a loop), including the gradients
// that reach the Mean and InvStdDev outputs.
// https://onnx.ai/onnx/operators/onnx__LayerNormalization.html
#include <cmath>
#include <optional>

#include "kernels/cpu/dnnl_util.h"
#include "ops/common.h"

namespace singa {
namespace {

struct LayerNormAttrs {
  int64_t axis = -1;
  float epsilon = 1e-5f;
  int64_t stash_type = 1;
};

SpecList Infer(const InferCtx& c, const LayerNormAttrs& a) {
  const Shape& xs = c.shape(0);
  const int64_t axis = NormalizeAxis(a.axis, c.rank(0), c.where());
  for (int i : {1, 2})
    SINGA_CHECK(
        !c.has_input(i) || BroadcastShapes(xs, c.shape(i), c.where()) == xs, ShapeError,
        c.where() << ": Scale and B must broadcast to X's shape (" << c.inputs_string() << ")");
  SINGA_CHECK(a.stash_type == static_cast<int64_t>(DType::kFloat32) ||
                  a.stash_type == static_cast<int64_t>(DType::kBFloat16),
              DTypeError,
              c.where() << ": stash_type must be 1 (float) or 16 (bfloat16), got " << a.stash_type);
  Shape stat(xs.begin(), xs.begin() + axis);
  stat.resize(xs.size(), 1);
  const DType u = static_cast<DType>(a.stash_type);
  return {{c.dtype(0), xs}, {u, stat}, {u, stat}};
}

struct Rows {
  int64_t outer = 1, inner = 1;
};

// Plain loops. Fills `mean` and `inv_std` ([outer], Acc<T>).
void Loop(const KernelCtx& k, const Rows& r, float epsilon, Tensor& mean, Tensor& inv_std) {
  VisitFloat(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const Tensor x = k.input(0).Contiguous();
    Tensor norm(x.shape(), DTypeOf<A>());
    mean = Tensor({r.outer}, DTypeOf<A>());
    inv_std = Tensor({r.outer}, DTypeOf<A>());
    const T* px = r.outer * r.inner > 0 ? x.data<T>() : nullptr;
    A* pn = r.outer * r.inner > 0 ? norm.data<A>() : nullptr;
    A* pm = mean.data<A>();
    A* pi = inv_std.data<A>();
    const int64_t n = r.inner;
    ParallelFor(0, r.outer, std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(n, 1)),
                [&](int64_t lo, int64_t hi) {
                  for (int64_t i = lo; i < hi; ++i) {
                    const T* row = px + i * n;
                    A sum = 0;
                    for (int64_t j = 0; j < n; ++j) sum += static_cast<A>(row[j]);
                    const A m = sum / static_cast<A>(n);  // NaN for an empty row, as the spec
                    A sq = 0;
                    for (int64_t j = 0; j < n; ++j) {
                      const A d = static_cast<A>(row[j]) - m;
                      sq += d * d;
                    }
                    const A inv = 1 / std::sqrt(sq / static_cast<A>(n) + static_cast<A>(epsilon));
                    for (int64_t j = 0; j < n; ++j)
                      pn[i * n + j] = (static_cast<A>(row[j]) - m) * inv;
                    pm[i] = m;
                    pi[i] = inv;
                  }
                });
    const Tensor& y = k.output(0);
    if (k.has_input(2)) {
      cpu::Ternary<A, T, T, T>(norm, k.input(1), k.input(2), y, [](A v, T s, T b) {
        return static_cast<T>(v * static_cast<A>(s) + static_cast<A>(b));
      });
    } else {
      cpu::Binary<A, T, T>(norm, k.input(1), y,
                           [](A v, T s) { return static_cast<T>(v * static_cast<A>(s)); });
    }
  });
}

// True when `p` varies exactly over the normalized (trailing) dimensions.
bool CoversRow(const Tensor& p, const Rows& r, int64_t norm_rank) {
  if (p.numel() != r.inner) return false;
  int64_t rank = p.ndim(), lead = 0;
  while (lead < rank && p.shape()[lead] == 1) ++lead;
  return rank - lead <= norm_rank;
}

// oneDNN layer_normalization over rows of `inner`; mean and inv_std are
// float32 [outer]. False (nothing written) when it does not apply.
bool Dnnl(const KernelCtx& k, const Rows& r, int64_t norm_rank, float epsilon, Tensor& mean,
          Tensor& inv_std) {
  namespace du = cpu::dnnl_util;
  const DType dt = k.input(0).dtype();
  if (dt != DType::kFloat32 && dt != DType::kBFloat16 && dt != DType::kFloat16) return false;
  if (r.outer * r.inner == 0) return false;
  const bool has_b = k.has_input(2);
  if (!CoversRow(k.input(1), r, norm_rank) || (has_b && !CoversRow(k.input(2), r, norm_rank)))
    return false;
  const Shape dims = {r.outer, r.inner};
  auto flags = dnnl::normalization_flags::use_scale;
  if (has_b) flags |= dnnl::normalization_flags::use_shift;
  const std::string key = "layer_norm:" + std::string(Name(dt)) + ToString(dims) +
                          du::Exact(epsilon) + (has_b ? ":b" : "");
  using Prim = std::optional<dnnl::layer_normalization_forward>;
  const std::shared_ptr<Prim> cached = du::Cached<Prim>(key, [&]() -> Prim {
    try {
      auto md = du::PlainDesc(dims, dt);
      return dnnl::layer_normalization_forward(dnnl::layer_normalization_forward::primitive_desc(
          du::Engine(), dnnl::prop_kind::forward_training, md, md,
          du::PlainDesc({r.outer}, DType::kFloat32), epsilon, flags));
    } catch (const dnnl::error&) {
      return std::nullopt;  // no implementation for this dtype on this CPU
    }
  });
  const Prim& prim = *cached;
  if (!prim) return false;
  const Tensor x = k.input(0).Contiguous();
  const Tensor scale = k.input(1).AsType(DType::kFloat32).Contiguous();
  mean = Tensor({r.outer}, DType::kFloat32);
  Tensor var({r.outer}, DType::kFloat32);
  auto md = du::PlainDesc(dims, dt);
  auto pmd = du::PlainDesc({r.inner}, DType::kFloat32);
  std::unordered_map<int, dnnl::memory> args = {{DNNL_ARG_SRC, du::Mem(x, md)},
                                                {DNNL_ARG_DST, du::Mem(k.output(0), md)},
                                                {DNNL_ARG_MEAN, du::Mem(mean)},
                                                {DNNL_ARG_VARIANCE, du::Mem(var)},
                                                {DNNL_ARG_SCALE, du::Mem(scale, pmd)}};
  Tensor shift;
  if (has_b) {
    shift = k.input(2).AsType(DType::kFloat32).Contiguous();
    args[DNNL_ARG_SHIFT] = du::Mem(shift, pmd);
  }
  du::Execute(*prim, args);
  inv_std = Tensor({r.outer}, DType::kFloat32);
  const float* pv = var.data<float>();
  float* pi = inv_std.data<float>();
  for (int64_t i = 0; i < r.outer; ++i) pi[i] = 1.0f / std::sqrt(pv[i] + epsilon);
  return true;
}

template <bool kFast>
void Forward(KernelCtx& k, const LayerNormAttrs& a) {
  const Tensor& x = k.input(0);
  const int64_t axis = NormalizeAxis(a.axis, x.ndim(), "LayerNormalization");
  Rows r;
  for (int64_t d = 0; d < x.ndim(); ++d) (d < axis ? r.outer : r.inner) *= x.shape()[d];
  Tensor mean, inv_std;
  if (!kFast || !Dnnl(k, r, x.ndim() - axis, a.epsilon, mean, inv_std))
    Loop(k, r, a.epsilon, mean, inv_std);
  if (k.num_outputs() > 1) k.outputs[1].CopyFrom(mean.Reshape(k.output(1).shape()));
  if (k.num_outputs() > 2) k.outputs[2].CopyFrom(inv_std.Reshape(k.output(2).shape()));
}

#if SINGA_CUDA
// float32 X with float32 statistics: rows normalized by one kernel, then
// Scale and B applied by broadcasting passes.
void ForwardCuda(KernelCtx& k, const LayerNormAttrs& a) {
  const Tensor &x = k.input(0), &y = k.output(0);
  const int64_t axis = NormalizeAxis(a.axis, x.ndim(), "LayerNormalization");
  int64_t rows = 1;
  for (int64_t d = 0; d < axis; ++d) rows *= x.dim(d);
  auto stat = [&](int o) {
    return k.num_outputs() > o && k.outputs[o].defined()
               ? k.outputs[o]
               : Tensor({rows}, DType::kFloat32, x.device());
  };
  cuda::RowNormalize(x, y, stat(1), stat(2), axis, a.epsilon);
  cuda::BinaryOp(cuda::Binary::kMul, y, k.input(1), y);
  if (k.has_input(2)) cuda::BinaryOp(cuda::Binary::kAdd, y, k.input(2), y);
}
#endif

// ---- backward ---------------------------------------------------------------
// LayerNormGrad (domain ai.singa): (dY, X, Scale, dMean?, dInvStdDev?) ->
// (dX, dY * x_hat). Per row, with g = dY * Scale, n its length and
// inv = InvStdDev:
//   dX = inv * (g - mean(g) - x_hat * mean(g * x_hat))
//        + dMean / n - dInvStdDev * inv^2 * x_hat / n
// dScale and dB are dY * x_hat and dY summed to their shapes (they may
// broadcast any way).

SpecList GradInfer(const InferCtx& c, const LayerNormAttrs& a) {
  const Shape& xs = c.shape(1);
  SINGA_CHECK(c.shape(0) == xs, ShapeError,
              c.where() << ": dY must have X's shape (" << c.inputs_string() << ")");
  const int64_t axis = NormalizeAxis(a.axis, c.rank(1), c.where());
  SINGA_CHECK(BroadcastShapes(xs, c.shape(2), c.where()) == xs, ShapeError,
              c.where() << ": Scale must broadcast to X's shape (" << c.inputs_string() << ")");
  int64_t outer = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= xs[d];
  for (int i : {3, 4})
    SINGA_CHECK(!c.has_input(i) || c.input(i).numel() == outer, ShapeError,
                c.where() << ": dMean and dInvStdDev must have one value per row ("
                          << c.inputs_string() << ")");
  return {{c.dtype(1), xs}, {c.dtype(1), xs}};
}

// Sum of f(j) for j in [0, n), in kLanes partial sums: the compiler
// vectorizes them (it does not reassociate one float sum).
template <class A, class F>
A LaneSum(int64_t n, F&& f) {
  constexpr int kLanes = 16;
  A part[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes)
    for (int l = 0; l < kLanes; ++l) part[l] += f(j + l);
  A s = 0;
  for (; j < n; ++j) s += f(j);
  for (int l = 0; l < kLanes; ++l) s += part[l];
  return s;
}

void GradLoop(KernelCtx& k, const LayerNormAttrs& a) {
  VisitFloat(k.input(1).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const Tensor dy = k.input(0).Contiguous(), x = k.input(1).Contiguous();
    const int64_t axis = NormalizeAxis(a.axis, x.ndim(), "LayerNormGrad");
    Rows r;
    for (int64_t d = 0; d < x.ndim(); ++d) (d < axis ? r.outer : r.inner) *= x.shape()[d];
    if (r.outer * r.inner == 0) return;
    // g = dY * Scale: read per row when Scale covers exactly the normalized
    // dims (the usual case), else materialized with broadcasting.
    const bool row_scale = CoversRow(k.input(2), r, x.ndim() - axis);
    const std::vector<A> srow = row_scale ? k.input(2).ToVector<A>() : std::vector<A>();
    Tensor gs;
    if (!row_scale) {
      gs = Tensor(x.shape(), DTypeOf<A>());
      cpu::Binary<T, T, A>(dy, k.input(2), gs, [](T g, T s) {
        return static_cast<A>(static_cast<A>(g) * static_cast<A>(s));
      });
    }
    auto stat_grad = [&](int i) {
      return k.has_input(i) ? k.input(i).ToVector<A>() : std::vector<A>(r.outer, A(0));
    };
    const std::vector<A> dmean = stat_grad(3), dinv = stat_grad(4);
    const T* px = x.data<T>();
    const T* pdy = dy.data<T>();
    const A* pg = row_scale ? nullptr : gs.data<A>();
    const A* ps = srow.data();
    T* pdx = k.output(0).data<T>();
    T* pdyx = k.output(1).data<T>();
    const int64_t n = r.inner;
    const A nn = static_cast<A>(n);
    ParallelFor(
        0, r.outer, std::max<int64_t>(1, cpu::kElementwiseGrain / n), [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) {
            const T* row = px + i * n;
            const T* dyrow = pdy + i * n;
            const A* grow = pg ? pg + i * n : nullptr;
            auto g = [&](int64_t j) { return grow ? grow[j] : static_cast<A>(dyrow[j]) * ps[j]; };
            const A m = LaneSum<A>(n, [&](int64_t j) { return static_cast<A>(row[j]); }) / nn;
            const A var = LaneSum<A>(n,
                                     [&](int64_t j) {
                                       const A v = static_cast<A>(row[j]) - m;
                                       return v * v;
                                     }) /
                          nn;
            const A inv = 1 / std::sqrt(var + static_cast<A>(a.epsilon));
            const A sg = LaneSum<A>(n, g);
            const A sgx =
                LaneSum<A>(n, [&](int64_t j) { return g(j) * (static_cast<A>(row[j]) - m); }) * inv;
            const A mg = sg / nn, mgx = sgx / nn, dm = dmean[i] / nn, di = dinv[i] * inv * inv / nn;
            for (int64_t j = 0; j < n; ++j) {
              const A xh = (static_cast<A>(row[j]) - m) * inv;
              pdx[i * n + j] = static_cast<T>(inv * (g(j) - mg - xh * mgx) + dm - di * xh);
              pdyx[i * n + j] = static_cast<T>(static_cast<A>(dyrow[j]) * xh);
            }
          }
        });
  });
}

TensorList Backward(const GradCtx& g, const LayerNormAttrs& a) {
  static const OpSchema& op = OpRegistry::Get("LayerNormGrad", kLatestOpset, "ai.singa");
  const Tensor& x = g.input(0);
  Tensor dy = g.grad_output(0);
  if (!dy.defined()) dy = Tensor::Zeros(x.shape(), x.dtype(), x.device());
  auto stat = [&](int i) {
    return g.num_outputs() > i && g.grad_output(i).defined() ? g.grad_output(i) : Tensor();
  };
  TensorList r = RunOp(op, TensorList{dy, x, g.input(1), stat(1), stat(2)}, a);
  TensorList grads = {r[0], ops::SumToShape(r[1], g.input(1).shape()), Tensor()};
  if (g.has_input(2)) grads[2] = ops::SumToShape(dy, g.input(2).shape());
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(LayerNormalization, LayerNormAttrs)
    .since_opset(17)
    .inputs({"X", "Scale", "B?"})
    .outputs({"Y", "Mean?", "InvStdDev?"})
    .attr("axis", &LayerNormAttrs::axis)
    .attr("epsilon", &LayerNormAttrs::epsilon)
    .attr("stash_type", &LayerNormAttrs::stash_type)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(Infer)
    .kernel(Forward<true>)
        SINGA_CUDA_KERNEL(ForwardCuda, {DType::kFloat32},
                          [](const InferCtx&, const LayerNormAttrs& a) {
                            return a.stash_type == static_cast<int64_t>(DType::kFloat32);
                          })
    .reference(Forward<false>)
    .backward(Backward);

// The internal op of LayerNormalization's backward.
SINGA_REGISTER_OP(LayerNormGrad, LayerNormAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X", "Scale", "dMean?", "dInvStdDev?"})
    .outputs({"dX", "dY_xhat"})
    .attr("axis", &LayerNormAttrs::axis)
    .attr("epsilon", &LayerNormAttrs::epsilon)
    .attr("stash_type", &LayerNormAttrs::stash_type)
    .dtypes(dtypes::kFloats, {0, 1, 2})
    .infer(GradInfer)
    .kernel(GradLoop);

}  // namespace singa
