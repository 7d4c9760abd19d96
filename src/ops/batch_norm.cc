// BatchNormalization over channel dim 1 of X (N, C, D1, ...); a 1-D X (N) has
// one channel.
//   inference: Y = (X - input_mean) / sqrt(input_var + epsilon) * scale + B
//   training:  the same with the batch mean and (population) variance over
//              every dim but 1, plus the updated running statistics
//              running_x = input_x * momentum + batch_x * (1 - momentum).
// Opset 14 (also 15's semantics; 15 only widened the dtypes) selects training
// with training_mode and has outputs Y, running_mean?, running_var?. Opset 9
// trains when more than Y is requested: Y, mean?, var? (running), saved_mean?,
// saved_var? (batch statistics). Opsets 1, 6 and 7 are opset 9 with `spatial`
// (only 1, per-channel statistics, is supported), opsets 1 and 6 also with
// `is_test` (which forbids the training outputs) and 1 with consumed_inputs
// (an in-place hint, ignored).
// Statistics compute in float (double for double X). oneDNN
// batch_normalization (inference, global stats) is the fast path for
// float32/bfloat16/float16 X.
// Backward: the internal op BatchNormGrad (a fused two-pass kernel for
// float32, a plain loop otherwise).
// https://onnx.ai/onnx/operators/onnx__BatchNormalization.html
#include <cmath>
#include <optional>

#include "kernels/cpu/dnnl_util.h"
#include "ops/common.h"
#include "ops/grad_util.h"
#include "singa/ops/export_ctx.h"

namespace singa {
namespace {

struct BatchNorm14Attrs {
  float epsilon = 1e-5f;
  float momentum = 0.9f;
  int64_t training_mode = 0;
};
struct BatchNorm9Attrs {
  float epsilon = 1e-5f;
  float momentum = 0.9f;
};

struct BatchNorm6Attrs {
  float epsilon = 1e-5f;
  float momentum = 0.9f;
  int64_t spatial = 1;
  int64_t is_test = 0;
  std::vector<int64_t> consumed_inputs;
};

struct Dims {
  int64_t n = 1, c = 1, s = 1;  // batch, channels, spatial (product of D1...)
};
Dims DimsOf(const Shape& x) {
  Dims d;
  d.n = x[0];
  if (x.size() >= 2) d.c = x[1];
  for (size_t i = 2; i < x.size(); ++i) d.s *= x[i];
  return d;
}

SpecList InferCommon(const InferCtx& c, bool training, int num_stats_outputs) {
  SINGA_CHECK(c.rank(0) >= 1, ShapeError,
              c.where() << ": X must have rank >= 1 (" << c.inputs_string() << ")");
  const int64_t ch = DimsOf(c.shape(0)).c;
  for (int i = 1; i < 5; ++i)
    SINGA_CHECK(c.shape(i) == Shape{ch}, ShapeError,
                c.where() << ": scale, B, mean and var must have shape [" << ch << "] ("
                          << c.inputs_string() << ")");
  SINGA_CHECK(training || c.num_outputs() == 1, ShapeError,
              c.where() << ": the statistics outputs exist only in training mode");
  SpecList out = {{c.dtype(0), c.shape(0)}};
  for (int i = 0; i < num_stats_outputs; ++i) out.push_back({c.dtype(3 + i % 2), {ch}});
  return out;
}
SpecList Infer14(const InferCtx& c, const BatchNorm14Attrs& a) {
  return InferCommon(c, a.training_mode != 0, 2);
}
SpecList Infer9(const InferCtx& c, const BatchNorm9Attrs&) {
  return InferCommon(c, c.num_outputs() > 1, 4);
}
SpecList Infer6(const InferCtx& c, const BatchNorm6Attrs& a) {
  SINGA_CHECK(a.spatial == 1, ShapeError,
              c.where() << ": spatial=0 (statistics per channel and position) is not supported ("
                        << c.inputs_string() << ")");
  return InferCommon(c, c.num_outputs() > 1 && a.is_test == 0, 4);
}

// Y = x * a[c] + b[c] per channel.
template <class T, class A>
void Affine(const Tensor& x, const Tensor& y, const Dims& d, const std::vector<A>& a,
            const std::vector<A>& b) {
  const T* px = x.data<T>();
  T* py = y.data<T>();
  ParallelFor(0, d.n * d.c,
              std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(d.s, 1)),
              [&](int64_t lo, int64_t hi) {
                for (int64_t r = lo; r < hi; ++r) {
                  const A ca = a[r % d.c], cb = b[r % d.c];
                  for (int64_t j = 0; j < d.s; ++j)
                    py[r * d.s + j] = static_cast<T>(static_cast<A>(px[r * d.s + j]) * ca + cb);
                }
              });
}

// Plain loops. In training, fills batch mean/var (Acc<T>, [C]).
void Loop(const KernelCtx& k, float epsilon, bool training, Tensor& batch_mean, Tensor& batch_var) {
  VisitFloat(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const Tensor x = k.input(0).Contiguous();
    const Dims d = DimsOf(x.shape());
    auto param = [&](int i) { return k.input(i).ToVector<A>(); };
    const std::vector<A> scale = param(1), bias = param(2);
    std::vector<A> mean = param(3), var = param(4);
    if (training) {
      const T* px = x.numel() ? x.data<T>() : nullptr;
      const A count = static_cast<A>(d.n * d.s);
      ParallelFor(0, d.c, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t ch = lo; ch < hi; ++ch) {
          A sum = 0, sq = 0;
          for (int64_t b = 0; b < d.n; ++b)
            for (int64_t j = 0; j < d.s; ++j) sum += static_cast<A>(px[(b * d.c + ch) * d.s + j]);
          const A m = sum / count;
          for (int64_t b = 0; b < d.n; ++b)
            for (int64_t j = 0; j < d.s; ++j) {
              const A v = static_cast<A>(px[(b * d.c + ch) * d.s + j]) - m;
              sq += v * v;
            }
          mean[ch] = m;
          var[ch] = sq / count;
        }
      });
      batch_mean = Tensor::FromVector<A>({d.c}, mean);
      batch_var = Tensor::FromVector<A>({d.c}, var);
    }
    std::vector<A> a(d.c), b(d.c);
    for (int64_t ch = 0; ch < d.c; ++ch) {
      a[ch] = scale[ch] / std::sqrt(var[ch] + static_cast<A>(epsilon));
      b[ch] = bias[ch] - mean[ch] * a[ch];
    }
    if (x.numel()) Affine<T, A>(x, k.output(0), d, a, b);
  });
}

// oneDNN inference with the given statistics; false (nothing written) when it
// does not apply.
bool DnnlInference(const KernelCtx& k, float epsilon) {
  namespace du = cpu::dnnl_util;
  const Tensor& x_in = k.input(0);
  const DType dt = x_in.dtype();
  if (dt != DType::kFloat32 && dt != DType::kBFloat16 && dt != DType::kFloat16) return false;
  if (x_in.numel() == 0) return false;
  const Dims d = DimsOf(x_in.shape());
  const Shape dims = {d.n, d.c, d.s};
  const auto flags = dnnl::normalization_flags::use_global_stats |
                     dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift;
  const std::string key =
      "batch_norm:" + std::string(Name(dt)) + ToString(dims) + du::Exact(epsilon);
  using Prim = std::optional<dnnl::batch_normalization_forward>;
  const std::shared_ptr<Prim> cached = du::Cached<Prim>(key, [&]() -> Prim {
    try {
      auto md = du::PlainDesc(dims, dt);
      return dnnl::batch_normalization_forward(dnnl::batch_normalization_forward::primitive_desc(
          du::Engine(), dnnl::prop_kind::forward_inference, md, md, epsilon, flags));
    } catch (const dnnl::error&) {
      return std::nullopt;  // no implementation for this dtype on this CPU
    }
  });
  const Prim& prim = *cached;
  if (!prim) return false;
  const Tensor x = x_in.Contiguous();
  auto f32 = [&](int i) { return k.input(i).AsType(DType::kFloat32).Contiguous(); };
  const Tensor scale = f32(1), shift = f32(2), mean = f32(3), var = f32(4);
  auto md = du::PlainDesc(dims, dt);
  du::Execute(*prim, {{DNNL_ARG_SRC, du::Mem(x, md)},
                      {DNNL_ARG_DST, du::Mem(k.output(0), md)},
                      {DNNL_ARG_SCALE, du::Mem(scale)},
                      {DNNL_ARG_SHIFT, du::Mem(shift)},
                      {DNNL_ARG_MEAN, du::Mem(mean)},
                      {DNNL_ARG_VARIANCE, du::Mem(var)}});
  return true;
}

// Writes running = input * momentum + batch * (1 - momentum) into output `o`.
void WriteRunning(const KernelCtx& k, int o, int input, const Tensor& batch, float momentum) {
  const std::vector<double> in = k.input(input).ToVector<double>(), bt = batch.ToVector<double>();
  std::vector<double> r(in.size());
  const double m = momentum;
  for (size_t i = 0; i < r.size(); ++i) r[i] = in[i] * m + bt[i] * (1 - m);
  k.outputs[o].CopyFrom(Tensor::FromVector<double>({static_cast<int64_t>(r.size())}, r));
}

void Run(KernelCtx& k, float epsilon, float momentum, bool training, bool fast, bool opset9) {
  if (!training) {
    Tensor unused_mean, unused_var;
    if (!fast || !DnnlInference(k, epsilon)) Loop(k, epsilon, false, unused_mean, unused_var);
    return;
  }
  Tensor batch_mean, batch_var;
  Loop(k, epsilon, true, batch_mean, batch_var);
  if (k.num_outputs() > 1) WriteRunning(k, 1, 3, batch_mean, momentum);
  if (k.num_outputs() > 2) WriteRunning(k, 2, 4, batch_var, momentum);
  if (opset9 && k.num_outputs() > 3) k.outputs[3].CopyFrom(batch_mean);
  if (opset9 && k.num_outputs() > 4) k.outputs[4].CopyFrom(batch_var);
}

template <bool kFast>
void Forward14(KernelCtx& k, const BatchNorm14Attrs& a) {
  Run(k, a.epsilon, a.momentum, a.training_mode != 0, kFast, false);
}
template <bool kFast>
void Forward9(KernelCtx& k, const BatchNorm9Attrs& a) {
  Run(k, a.epsilon, a.momentum, k.num_outputs() > 1, kFast, true);
}

BatchNorm9Attrs As9(const BatchNorm6Attrs& a) { return {a.epsilon, a.momentum}; }
template <bool kFast>
void Forward6(KernelCtx& k, const BatchNorm6Attrs& a) {
  Forward9<kFast>(k, As9(a));
}

// ---- backward ---------------------------------------------------------------
// BatchNormGrad (domain ai.singa): (dY, X, scale, mean, var) -> (dX, dscale,
// dB). In training mode mean and var are ignored: the batch statistics are
// recomputed from X (the forward does not keep them), and
//   dX = scale * inv_std * (dY - mean(dY) - x_hat * mean(dY * x_hat));
// in inference mode dX = scale * inv_std * dY. Both: dscale = sum(dY * x_hat),
// dB = sum(dY), sums over every dim but 1.

struct BatchNormGradAttrs {
  float epsilon = 1e-5f;
  int64_t training_mode = 0;
};

SpecList GradInfer(const InferCtx& c, const BatchNormGradAttrs&) {
  SINGA_CHECK(
      c.rank(1) >= 1 && c.shape(0) == c.shape(1), ShapeError,
      c.where() << ": dY and X must have one shape of rank >= 1 (" << c.inputs_string() << ")");
  const int64_t ch = DimsOf(c.shape(1)).c;
  for (int i = 2; i < 5; ++i)
    SINGA_CHECK(c.shape(i) == Shape{ch}, ShapeError,
                c.where() << ": scale, mean and var must have shape [" << ch << "] ("
                          << c.inputs_string() << ")");
  return {{c.dtype(1), c.shape(1)}, {c.dtype(2), {ch}}, {c.dtype(2), {ch}}};
}

void GradLoop(KernelCtx& k, const BatchNormGradAttrs& a) {
  VisitFloat(k.input(1).dtype(), [&]<class T>(Tag<T>) {
    using A = Acc<T>;
    const Tensor dy = k.input(0).Contiguous(), x = k.input(1).Contiguous();
    const Dims d = DimsOf(x.shape());
    const std::vector<A> scale = k.input(2).ToVector<A>();
    std::vector<A> mean = k.input(3).ToVector<A>(), var = k.input(4).ToVector<A>();
    std::vector<A> dscale(d.c, A(0)), dbias(d.c, A(0));
    const int64_t count = d.n * d.s;
    const bool training = a.training_mode != 0;
    if (count > 0) {
      const T* px = x.data<T>();
      const T* pdy = dy.data<T>();
      T* pdx = k.output(0).data<T>();
      ParallelFor(0, d.c, 1, [&](int64_t lo, int64_t hi) {
        for (int64_t ch = lo; ch < hi; ++ch) {
          auto at = [&](int64_t b, int64_t j) { return (b * d.c + ch) * d.s + j; };
          if (training) {
            A sum = 0, sq = 0;
            for (int64_t b = 0; b < d.n; ++b)
              for (int64_t j = 0; j < d.s; ++j) sum += static_cast<A>(px[at(b, j)]);
            mean[ch] = sum / static_cast<A>(count);
            for (int64_t b = 0; b < d.n; ++b)
              for (int64_t j = 0; j < d.s; ++j) {
                const A v = static_cast<A>(px[at(b, j)]) - mean[ch];
                sq += v * v;
              }
            var[ch] = sq / static_cast<A>(count);
          }
          const A m = mean[ch], inv = 1 / std::sqrt(var[ch] + static_cast<A>(a.epsilon));
          A sdy = 0, sdyx = 0;
          for (int64_t b = 0; b < d.n; ++b)
            for (int64_t j = 0; j < d.s; ++j) {
              const A g = static_cast<A>(pdy[at(b, j)]);
              sdy += g;
              sdyx += g * (static_cast<A>(px[at(b, j)]) - m);
            }
          sdyx *= inv;  // sum(dY * x_hat)
          dscale[ch] = sdyx;
          dbias[ch] = sdy;
          const A k1 = scale[ch] * inv, mdy = sdy / static_cast<A>(count),
                  mdyx = sdyx / static_cast<A>(count);
          for (int64_t b = 0; b < d.n; ++b)
            for (int64_t j = 0; j < d.s; ++j) {
              const A g = static_cast<A>(pdy[at(b, j)]);
              const A xh = (static_cast<A>(px[at(b, j)]) - m) * inv;
              pdx[at(b, j)] = static_cast<T>(training ? k1 * (g - mdy - xh * mdyx) : k1 * g);
            }
        }
      });
    }
    k.outputs[1].CopyFrom(Tensor::FromVector<A>({d.c}, dscale).AsType(k.output(1).dtype()));
    k.outputs[2].CopyFrom(Tensor::FromVector<A>({d.c}, dbias).AsType(k.output(2).dtype()));
  });
}

// The float32 fast path: per channel one pass over X and dY for the sums
// (sum x, sum x^2, sum dY, sum dY * x) and one for dX = a * dY + b * x + c.
// NOTE: oneDNN's batch_normalization backward on the plain layout (its
// ncsp_bnorm implementation) plus a separate pass for the batch statistics
// measured 1.3-1.9x torch's time for 16x64x56x56 and 16x144x56x56; this
// kernel reads X and dY twice in all. The sums accumulate in double (8 lanes,
// so the compiler vectorizes them), which keeps var = E[x^2] - mean^2 accurate
// for float32 data.
bool GradFast(KernelCtx& k, const BatchNormGradAttrs& a) {
  for (int i = 0; i < 5; ++i)
    if (k.input(i).dtype() != DType::kFloat32) return false;
  if (k.input(1).numel() == 0) return false;
  const bool training = a.training_mode != 0;
  const Tensor dy = k.input(0).Contiguous(), x = k.input(1).Contiguous();
  const Dims d = DimsOf(x.shape());
  const std::vector<float> scale = k.input(2).ToVector<float>(),
                           mean = k.input(3).ToVector<float>(), var = k.input(4).ToVector<float>();
  const float* px = x.data<float>();
  const float* pdy = dy.data<float>();
  float* pdx = k.output(0).data<float>();
  float* pds = k.output(1).data<float>();
  float* pdb = k.output(2).data<float>();
  const double count = static_cast<double>(d.n * d.s);
  ParallelFor(0, d.c, 1, [&](int64_t lo, int64_t hi) {
    constexpr int kLanes = 8;
    for (int64_t ch = lo; ch < hi; ++ch) {
      double sx[kLanes] = {}, sxx[kLanes] = {}, sg[kLanes] = {}, sgx[kLanes] = {};
      for (int64_t b = 0; b < d.n; ++b) {
        const float* xr = px + (b * d.c + ch) * d.s;
        const float* gr = pdy + (b * d.c + ch) * d.s;
        int64_t j = 0;
        for (; j + kLanes <= d.s; j += kLanes)
          for (int l = 0; l < kLanes; ++l) {
            const double xv = xr[j + l], gv = gr[j + l];
            sx[l] += xv;
            sxx[l] += xv * xv;
            sg[l] += gv;
            sgx[l] += gv * xv;
          }
        for (; j < d.s; ++j) {
          const double xv = xr[j], gv = gr[j];
          sx[0] += xv;
          sxx[0] += xv * xv;
          sg[0] += gv;
          sgx[0] += gv * xv;
        }
      }
      for (int l = 1; l < kLanes; ++l) {
        sx[0] += sx[l];
        sxx[0] += sxx[l];
        sg[0] += sg[l];
        sgx[0] += sgx[l];
      }
      double m = mean[ch], v = var[ch];
      if (training) {
        m = sx[0] / count;
        v = std::max(sxx[0] / count - m * m, 0.0);
      }
      const double inv = 1 / std::sqrt(v + static_cast<double>(a.epsilon));
      const double gxh = (sgx[0] - m * sg[0]) * inv;  // sum(dY * x_hat)
      pds[ch] = static_cast<float>(gxh);
      pdb[ch] = static_cast<float>(sg[0]);
      const double k1 = scale[ch] * inv;
      const double cb = training ? -k1 * inv * gxh / count : 0.0;
      const double cc = training ? -k1 * sg[0] / count - cb * m : 0.0;
      const float fa = static_cast<float>(k1), fb = static_cast<float>(cb),
                  fc = static_cast<float>(cc);
      for (int64_t b = 0; b < d.n; ++b) {
        const int64_t off = (b * d.c + ch) * d.s;
        for (int64_t j = 0; j < d.s; ++j) pdx[off + j] = fa * pdy[off + j] + fb * px[off + j] + fc;
      }
    }
  });
  return true;
}

template <bool kFast>
void GradKernel(KernelCtx& k, const BatchNormGradAttrs& a) {
  if (!kFast || !GradFast(k, a)) GradLoop(k, a);
}

// Gradients of X, scale, B and, in inference mode, of mean and var:
//   dmean = -scale * inv_std * dB,  dvar = -scale * dscale * inv_std^2 / 2.
// The running statistics outputs (and opset 9's saved batch statistics) have
// no gradient.
TensorList Backward(const GradCtx& g, float epsilon, bool training) {
  static const OpSchema& op = OpRegistry::Get("BatchNormGrad", kLatestOpset, "ai.singa");
  const Tensor& dy = g.grad_output(0);
  if (!dy.defined()) return {};
  const Tensor &scale = g.input(1), &mean = g.input(3), &var = g.input(4);
  TensorList r = RunOp(op, TensorList{dy, g.input(0), scale, mean, var},
                       BatchNormGradAttrs{epsilon, training ? 1 : 0});
  TensorList grads = {r[0], r[1], r[2], Tensor(), Tensor()};
  if (!training && (g.needs_grad(3) || g.needs_grad(4))) {
    const DType dt = var.dtype();
    const Tensor s = scale.AsType(dt), ds = r[1].AsType(dt), db = r[2].AsType(dt);
    const Tensor inv2 = Call1("Reciprocal", {grad::Add(var, grad::Scalar(epsilon, var))});
    grads[3] = Call1("Neg", {grad::Mul(grad::Mul(s, Call1("Sqrt", {inv2})), db)});
    grads[4] = grad::Mul(grad::Mul(grad::Mul(s, ds), inv2), grad::Scalar(-0.5, var));
  }
  return grads;
}
TensorList Backward14(const GradCtx& g, const BatchNorm14Attrs& a) {
  return Backward(g, a.epsilon, a.training_mode != 0);
}
TensorList Backward9(const GradCtx& g, const BatchNorm9Attrs& a) {
  return Backward(g, a.epsilon, g.num_outputs() > 1);
}
TensorList Backward6(const GradCtx& g, const BatchNorm6Attrs& a) { return Backward9(g, As9(a)); }

// Exported in inference form unless the export keeps training ops: the
// running statistics normalize, and the updated ones are not outputs.
void Export14(ExportCtx& c, const BatchNorm14Attrs& a) {
  if (a.training_mode == 0) return c.AddDefault();
  std::vector<std::string> in;
  for (int i = 0; i < c.num_inputs(); ++i) in.push_back(c.input_name(i));
  if (c.training()) {
    // ONNX's training form always has the three outputs.
    std::vector<std::string> out;
    for (int i = 0; i < 3; ++i)
      out.push_back(i < c.num_outputs() && !c.output_name(i).empty()
                        ? c.output_name(i)
                        : c.FreshName("BatchNormalization_stat"));
    return c.AddNode("BatchNormalization", in, out, c.attrs());
  }
  bool stats_read = false;
  for (int i = 1; i < c.num_outputs(); ++i) stats_read |= !c.output_name(i).empty();
  SINGA_CHECK(!stats_read, UnsupportedOp,
              "to_onnx: " << c.where()
                          << ": the graph reads the updated running statistics, which the "
                             "inference form has not; export with training on");
  AttrMap attrs = c.attrs();
  attrs.erase("training_mode");
  c.AddNode("BatchNormalization", in, {c.output_name(0)}, attrs);
}

// Opsets 1-9 as newer ones: spatial (only 1 runs), is_test and
// consumed_inputs go; from 14 the training form (five outputs) becomes
// training_mode=1 with the running statistics as outputs 1 and 2.
void Upgrade9(ExportCtx& c) {
  AttrMap attrs = c.attrs();
  for (const char* a : {"spatial", "is_test", "consumed_inputs"}) attrs.erase(a);
  std::vector<std::string> out = c.output_names();
  if (c.opset() < 14) return c.AddNode("BatchNormalization", c.input_names(), out, attrs);
  bool stats_read = false, saved_read = false;
  for (size_t i = 1; i < out.size(); ++i) (i < 3 ? stats_read : saved_read) |= !out[i].empty();
  SINGA_CHECK(!saved_read, UnsupportedOp,
              "to_onnx: " << c.where() << ": the graph reads the saved batch statistics, which "
                          << "opset " << c.opset() << " has not");
  if (!c.training() || out.size() == 1) {
    SINGA_CHECK(!stats_read, UnsupportedOp,
                "to_onnx: " << c.where()
                            << ": the graph reads the updated running statistics, which the "
                               "inference form has not; export with training on");
    out.resize(1);
  } else {
    out.resize(3);
    for (size_t i = 1; i < 3; ++i)
      if (out[i].empty()) out[i] = c.FreshName("BatchNormalization_stat");
    attrs["training_mode"] = int64_t{1};
  }
  c.AddNode("BatchNormalization", c.input_names(), out, attrs);
}

#if SINGA_CUDA
// cuDNN for a float32 or float16 X with float32 parameters and statistics,
// or float64 throughout: inputs [kFirst, 4] are the parameters.
template <int kFirst, class A>
bool CudaTakes(const InferCtx& c, const A&) {
  if (c.input(0).numel() == 0) return false;
  const DType x = c.dtype(0);
  if (x != DType::kFloat32 && x != DType::kFloat16 && x != DType::kFloat64) return false;
  const DType p = x == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  for (int i = kFirst; i <= 4; ++i)
    if (c.dtype(i) != p) return false;
  return true;
}

void RunCuda(KernelCtx& k, float epsilon, float momentum, bool training, bool opset9) {
  const Tensor& x = k.input(0);
  if (!training)
    return cuda::BatchNormInference(x, k.input(1), k.input(2), k.input(3), k.input(4), k.output(0),
                                    epsilon);
  const DType pt = k.input(3).dtype();
  const Shape ch = k.input(3).shape();
  const Tensor mean(ch, pt, x.device()), var(ch, pt, x.device());
  cuda::BatchNormTraining(x, k.input(1), k.input(2), k.output(0), mean, var, epsilon);
  // running = input * momentum + batch * (1 - momentum)
  const Tensor m = Tensor::Full({}, momentum, pt, x.device()),
               rest = Tensor::Full({}, 1.0 - momentum, pt, x.device());
  auto running = [&](int o, int input, const Tensor& batch) {
    if (k.num_outputs() <= o || !k.outputs[o].defined()) return;
    const Tensor& r = k.outputs[o];
    const Tensor part(ch, pt, x.device());
    cuda::BinaryOp(cuda::Binary::kMul, batch, rest, part);
    cuda::BinaryOp(cuda::Binary::kMul, k.input(input), m, r);
    cuda::BinaryOp(cuda::Binary::kAdd, r, part, r);
  };
  running(1, 3, mean);
  running(2, 4, var);
  if (opset9 && k.num_outputs() > 3 && k.outputs[3].defined()) cuda::Copy(mean, k.outputs[3]);
  if (opset9 && k.num_outputs() > 4 && k.outputs[4].defined()) cuda::Copy(var, k.outputs[4]);
}

void Cuda14(KernelCtx& k, const BatchNorm14Attrs& a) {
  RunCuda(k, a.epsilon, a.momentum, a.training_mode != 0, false);
}
void Cuda9(KernelCtx& k, const BatchNorm9Attrs& a) {
  RunCuda(k, a.epsilon, a.momentum, k.num_outputs() > 1, true);
}
// The training gradient (the inference one runs on the CPU).
void GradCuda(KernelCtx& k, const BatchNormGradAttrs& a) {
  cuda::BatchNormBackward(k.input(0), k.input(1), k.input(2), k.output(0), k.output(1), k.output(2),
                          a.epsilon);
}
#endif

}  // namespace

SINGA_REGISTER_OP(BatchNormalization, BatchNorm14Attrs)
    .since_opset(14)
    .inputs({"X", "scale", "B", "input_mean", "input_var"})
    .outputs({"Y", "running_mean?", "running_var?"})
    .attr("epsilon", &BatchNorm14Attrs::epsilon)
    .attr("momentum", &BatchNorm14Attrs::momentum)
    .attr("training_mode", &BatchNorm14Attrs::training_mode)
    .dtypes(dtypes::kFloats, {0})
    .dtypes(dtypes::kFloats, {1, 2})
    .dtypes(dtypes::kFloats, {3, 4})
    .state_inputs({3, 4})
    .infer(Infer14)
    .kernel(Forward14<true>)
        SINGA_CUDA_KERNEL(Cuda14, ops::kCudaFloats, CudaTakes<1, BatchNorm14Attrs>)
    .reference(Forward14<false>)
    .backward(Backward14)
    .to_onnx(Export14);
SINGA_REGISTER_OP(BatchNormalization, BatchNorm9Attrs)
    .since_opset(9)
    .inputs({"X", "scale", "B", "mean", "var"})
    .outputs({"Y", "mean?", "var?", "saved_mean?", "saved_var?"})
    .attr("epsilon", &BatchNorm9Attrs::epsilon)
    .attr("momentum", &BatchNorm9Attrs::momentum)
    .dtypes(dtypes::kFloats, {0, 1, 2, 3, 4})
    .state_inputs({3, 4})
    .infer(Infer9)
    .kernel(Forward9<true>)
        SINGA_CUDA_KERNEL(Cuda9, ops::kCudaFloats, CudaTakes<1, BatchNorm9Attrs>)
    .reference(Forward9<false>)
    .backward(Backward9)
    .upgrade([](ExportCtx& c, const BatchNorm9Attrs&) { Upgrade9(c); });

[[maybe_unused]] static const bool kBatchNorm6 = RegisterVersions<BatchNorm6Attrs>(
    "BatchNormalization", {1, 6, 7}, [](OpBuilder<BatchNorm6Attrs>& b, int v) {
      b.inputs({"X", "scale", "B", "mean", "var"})
          .outputs({"Y", "mean?", "var?", "saved_mean?", "saved_var?"})
          .attr("epsilon", &BatchNorm6Attrs::epsilon)
          .attr("momentum", &BatchNorm6Attrs::momentum)
          .attr("spatial", &BatchNorm6Attrs::spatial)
          .dtypes(dtypes::kFloats, {0, 1, 2, 3, 4})
          .state_inputs({3, 4})
          .infer(Infer6)
          .kernel(Forward6<true>)
          .reference(Forward6<false>)
          .backward(Backward6)
          .upgrade([](ExportCtx& c, const BatchNorm6Attrs&) { Upgrade9(c); });
      if (v < 7) b.attr("is_test", &BatchNorm6Attrs::is_test);
      if (v == 1) b.attr("consumed_inputs", &BatchNorm6Attrs::consumed_inputs, true);
    });

// The internal op of BatchNormalization's backward.
SINGA_REGISTER_OP(BatchNormGrad, BatchNormGradAttrs)
    .domain("ai.singa")
    .inputs({"dY", "X", "scale", "mean", "var"})
    .outputs({"dX", "dscale", "dB"})
    .attr("epsilon", &BatchNormGradAttrs::epsilon)
    .attr("training_mode", &BatchNormGradAttrs::training_mode)
    .dtypes(dtypes::kFloats, {0, 1})
    .dtypes(dtypes::kFloats, {2})
    .dtypes(dtypes::kFloats, {3, 4})
    .infer(GradInfer)
    .kernel(GradKernel<true>) SINGA_CUDA_KERNEL(GradCuda, ops::kCudaFloats,
                                                [](const InferCtx& c, const BatchNormGradAttrs& a) {
                                                  return a.training_mode != 0 && CudaTakes<2>(c, a);
                                                })
    .reference(GradKernel<false>);

}  // namespace singa
