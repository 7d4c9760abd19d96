// Gemm: Y = alpha * A' @ B' + beta * C, with A' = transA ? A^T : A (M, K),
// B' = transB ? B^T : B (K, N), and the optional C broadcast to (M, N)
// unidirectionally. f32/f16/bf16 run on oneDNN's matmul: transposes are
// described as strides, alpha is an eltwise_linear post-op and beta * C a sum
// post-op over Y pre-filled with C, which is exact. Opset 13 added bfloat16.
// Opsets 1 and 6 broadcast C only with broadcast=1 (C must otherwise be
// (M, N)); 11 made C optional.
// https://onnx.ai/onnx/operators/onnx__Gemm.html
//
// Without alpha, with C absent or a row of biases (beta 1), f32/f16/bf16 run
// on oneDNN's inner product instead, its weights packed once
// (cpu::DnnlLinear).
//
// FusedGemm (domain ai.singa, made by the ONNX planner only): Gemm, then an
// activation on Y in place (Relu; LeakyRelu with act_alpha; Clip from
// act_alpha to act_beta), float32.
#include <algorithm>

#include "kernels/cpu/matmul.h"
#include "ops/common.h"
#include "ops/fused_activation.h"

namespace singa {
namespace {

struct GemmAttrs {
  float alpha = 1.0f;
  float beta = 1.0f;
  int64_t transA = 0;
  int64_t transB = 0;
  int64_t broadcast = 0;  // opsets 1 and 6
  // FusedGemm only: the activation ("" for none) and its parameters.
  std::string activation;
  float act_alpha = 0, act_beta = 0;
};

SpecList GemmInfer(const InferCtx& c, const GemmAttrs& a) {
  SINGA_CHECK(c.rank(0) == 2 && c.rank(1) == 2, ShapeError,
              c.where() << ": A and B must be 2-D (" << c.inputs_string() << ")");
  const Shape& sa = c.shape(0);
  const Shape& sb = c.shape(1);
  const int64_t m = a.transA ? sa[1] : sa[0], ka = a.transA ? sa[0] : sa[1];
  const int64_t kb = a.transB ? sb[1] : sb[0], n = a.transB ? sb[0] : sb[1];
  SINGA_CHECK(ka == kb, ShapeError,
              c.where() << ": inner dimensions differ, " << ka << " vs " << kb << " ("
                        << c.inputs_string() << ")");
  if (c.has_input(2)) {
    const Shape& sc = c.shape(2);
    const Shape target = {m, n};
    bool ok = sc.size() <= 2;
    for (size_t i = 0; ok && i < sc.size(); ++i) {
      int64_t t = target[2 - sc.size() + i];
      ok = sc[i] == t || sc[i] == 1;
    }
    SINGA_CHECK(ok, ShapeError,
                c.where() << ": C does not broadcast to [" << m << "," << n << "] ("
                          << c.inputs_string() << ")");
  }
  return {{c.dtype(0), {m, n}}};
}

struct Operands {
  Tensor a, b, c;  // c undefined when absent or multiplied by beta == 0
};

Operands Prepare(KernelCtx& k, const GemmAttrs& attrs) {
  Operands o{attrs.transA ? k.input(0).Transpose() : k.input(0),
             attrs.transB ? k.input(1).Transpose() : k.input(1), Tensor()};
  if (k.has_input(2) && attrs.beta != 0.0f) o.c = k.input(2);
  return o;
}

void GemmReference(KernelCtx& k, const GemmAttrs& attrs) {
  Operands o = Prepare(k, attrs);
  cpu::MatMulLoops(o.a, o.b, k.output(0), attrs.alpha, attrs.beta, o.c);
}

void GemmForward(KernelCtx& k, const GemmAttrs& attrs) {
  Operands o = Prepare(k, attrs);
  Tensor y = k.output(0);
  if (y.numel() == 0) return;
  const DType dt = y.dtype();
  const bool dnnl_type = dt == DType::kFloat32 || dt == DType::kFloat16 || dt == DType::kBFloat16;
  if (dnnl_type && o.a.shape()[1] != 0) {
    // C a row of biases (beta 1): the inner product adds it.
    const Tensor& c = o.c;
    const bool bias_row = c.defined() && attrs.beta == 1.0f && c.numel() == y.dim(1) &&
                          (c.ndim() == 1 || (c.ndim() == 2 && c.dim(0) == 1));
    const int64_t m = y.dim(0), n = y.dim(1), kk = o.a.dim(1);
    if (attrs.alpha == 1.0f && (!c.defined() || bias_row)) {
      if (dt == DType::kFloat32 && cpu::PanelMatMulFits(m, kk, n) && o.a.is_contiguous()) {
        const Tensor bias = c.defined() ? c.Contiguous() : Tensor();
        cpu::PanelMatMul(o.a.data<float>(), cpu::PanelWeights(o.b.Transpose()),
                         bias.defined() ? bias.data<float>() : nullptr, y.data<float>(), m, kk, n);
        return;
      }
      if (cpu::DnnlLinear(o.a, o.b.Transpose(), c, y)) return;
    }
    if (o.c.defined()) y.CopyFrom(o.c.BroadcastTo(y.shape()));
    if (cpu::DnnlMatMul(o.a, o.b, y, attrs.alpha, o.c.defined() ? attrs.beta : 0.0f)) return;
  }
  cpu::MatMulLoops(o.a, o.b, y, attrs.alpha, attrs.beta, o.c);
}

void Activate(const Tensor& y, const GemmAttrs& a) {
  ops::ApplyFusedActivation(static_cast<float*>(y.raw_data()), y.numel(), a.activation, a.act_alpha,
                            a.act_beta);
}

SpecList FusedGemmInfer(const InferCtx& c, const GemmAttrs& a) {
  SINGA_CHECK(a.activation == "Relu" || a.activation == "LeakyRelu" || a.activation == "Clip",
              ShapeError, c.where() << ": unknown activation '" << a.activation << "'");
  return GemmInfer(c, a);
}

Tensor Scaled(const Tensor& t, float s) {
  if (s == 1.0f) return t;
  const Tensor k = Tensor::Full({}, static_cast<double>(s), t.dtype(), t.device());
  return Call1("Mul", {t, k});
}

// With A' and B' the (possibly transposed) operands: dA' = alpha * dY @ B'^T,
// dB' = alpha * A'^T @ dY, transposed back where the operand was; dC = beta *
// dY summed over the axes C was broadcast along.
TensorList GemmBackward(const GradCtx& g, const GemmAttrs& attrs) {
  const Tensor a = attrs.transA ? g.input(0).Transpose() : g.input(0);
  const Tensor b = attrs.transB ? g.input(1).Transpose() : g.input(1);
  const Tensor& dy = g.grad_output(0);
  TensorList d(g.num_inputs());
  if (g.needs_grad(0)) {
    const Tensor da = Scaled(Call1("MatMul", {dy, b.Transpose()}), attrs.alpha);
    d[0] = attrs.transA ? da.Transpose() : da;
  }
  if (g.needs_grad(1)) {
    const Tensor db = Scaled(Call1("MatMul", {a.Transpose(), dy}), attrs.alpha);
    d[1] = attrs.transB ? db.Transpose() : db;
  }
  if (g.needs_grad(2)) d[2] = Scaled(ops::SumToShape(dy, g.input(2).shape()), attrs.beta);
  return d;
}

std::vector<DType> GemmTypes(bool bf16) {
  std::vector<DType> v = {DType::kFloat16, DType::kFloat32, DType::kFloat64, DType::kInt32,
                          DType::kInt64,   DType::kUInt32,  DType::kUInt64};
  if (bf16) v.push_back(DType::kBFloat16);
  return v;
}

SpecList Gemm6Infer(const InferCtx& c, const GemmAttrs& a) {
  SpecList out = GemmInfer(c, a);
  SINGA_CHECK(a.broadcast || c.shape(2) == out[0].shape, ShapeError,
              c.where() << ": without broadcast=1, C must have shape " << ToString(out[0].shape)
                        << " (" << c.inputs_string() << ")");
  return out;
}

[[maybe_unused]] const bool kRegistered =
    RegisterVersions<GemmAttrs>("Gemm", {1, 7, 11, 13}, [](OpBuilder<GemmAttrs>& b, int v) {
      b.inputs({"A", "B", v >= 11 ? "C?" : "C"})
          .outputs({"Y"})
          .attr("alpha", &GemmAttrs::alpha)
          .attr("beta", &GemmAttrs::beta)
          .attr("transA", &GemmAttrs::transA)
          .attr("transB", &GemmAttrs::transB)
          .dtypes(GemmTypes(v >= 13), {0, 1, 2})
          .infer(v >= 7 ? GemmInfer : Gemm6Infer)
          .kernel(GemmForward) SINGA_CUDA_KERNEL(
              [](KernelCtx& k, const GemmAttrs& a) {
                cuda::Gemm(k.input(0), k.input(1), k.has_input(2) ? k.input(2) : Tensor(),
                           k.output(0), a.transA, a.transB, a.alpha, a.beta);
              },
              ops::kCudaFloats)
          .reference(GemmReference)
          .backward(GemmBackward)
          // A is [M, K] or (transA) [K, M]; Y is [M, N].
          .flops([](const std::vector<Shape>& in, const Shape& out) {
            const int64_t m = out.empty() ? 1 : out[0];
            return 2 * NumElements(out) * (m == 0 ? 0 : NumElements(in[0]) / m);
          });
      // 7 broadcasts C one way, as broadcast=1 did.
      if (v < 7)
        b.attr("broadcast", &GemmAttrs::broadcast).upgrade([](ExportCtx& c, const GemmAttrs&) {
          AddWithInputs(c, {}, {"broadcast"});
        });
    });

SINGA_REGISTER_OP(FusedGemm, GemmAttrs)
    .domain("ai.singa")
    .inputs({"A", "B", "C?"})
    .outputs({"Y"})
    .attr("act_alpha", &GemmAttrs::act_alpha)
    .attr("act_beta", &GemmAttrs::act_beta)
    .attr("activation", &GemmAttrs::activation)
    .attr("alpha", &GemmAttrs::alpha)
    .attr("beta", &GemmAttrs::beta)
    .attr("transA", &GemmAttrs::transA)
    .attr("transB", &GemmAttrs::transB)
    .dtypes({DType::kFloat32}, {0, 1, 2})
    .infer(FusedGemmInfer)
    .kernel([](KernelCtx& k, const GemmAttrs& a) {
      GemmForward(k, a);
      Activate(k.output(0), a);
    })
    .reference([](KernelCtx& k, const GemmAttrs& a) {
      GemmReference(k, a);
      Activate(k.output(0), a);
    });

}  // namespace
}  // namespace singa
