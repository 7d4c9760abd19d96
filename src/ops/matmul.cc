// MatMul: the matrix product with numpy.matmul semantics. A 1-D A is a row
// (prepended 1, removed from the result), a 1-D B a column (appended 1,
// removed); leading batch dimensions broadcast. f32/f16/bf16 run on oneDNN's
// matmul (inputs described by their strides, so transposed views cost no
// copy); every dtype has the plain-loop reference kernel.
// Opsets 9 and 13 only added dtypes to opset 1's MatMul.
// https://onnx.ai/onnx/operators/onnx__MatMul.html
#include "kernels/cpu/matmul.h"

#include "ops/common.h"

namespace singa {
namespace {

std::vector<DType> MatMulTypes() {
  std::vector<DType> v = dtypes::kFloats;
  for (DType d : {DType::kInt32, DType::kInt64, DType::kUInt32, DType::kUInt64}) v.push_back(d);
  return v;
}

SpecList MatMulInfer(const InferCtx& c, const NoAttrs&) {
  const Shape& a = c.shape(0);
  const Shape& b = c.shape(1);
  SINGA_CHECK(!a.empty() && !b.empty(), ShapeError,
              c.where() << ": inputs must have rank >= 1 (" << c.inputs_string() << ")");
  const int64_t ka = a.back(), kb = b.size() == 1 ? b[0] : b[b.size() - 2];
  SINGA_CHECK(ka == kb, ShapeError,
              c.where() << ": inner dimensions differ, " << ka << " vs " << kb << " ("
                        << c.inputs_string() << ")");
  Shape batch_a(a.begin(), a.end() - std::min<size_t>(a.size(), 2));
  Shape batch_b(b.begin(), b.end() - std::min<size_t>(b.size(), 2));
  Shape out = BroadcastShapes(batch_a, batch_b, c.where());
  if (a.size() >= 2) out.push_back(a[a.size() - 2]);
  if (b.size() >= 2) out.push_back(b.back());
  return {{c.dtype(0), out}};
}

// The operands as (..., M, K) and (..., K, N) of the output's rank, and the
// output as (..., M, N): views, no copies.
struct Operands {
  Tensor a, b, y;
};

Operands Prepare(KernelCtx& k) {
  Tensor a = k.input(0), b = k.input(1);
  if (a.ndim() == 1) a = a.Unsqueeze(0);
  if (b.ndim() == 1) b = b.Unsqueeze(1);
  const int64_t r = std::max(a.ndim(), b.ndim());
  while (a.ndim() < r) a = a.Unsqueeze(0);
  while (b.ndim() < r) b = b.Unsqueeze(0);
  Shape full(r);
  for (int64_t d = 0; d + 2 < r; ++d) full[d] = std::max(a.shape()[d], b.shape()[d]);
  for (int64_t d = 0; d + 2 < r; ++d)
    if (a.shape()[d] == 0 || b.shape()[d] == 0) full[d] = 0;
  full[r - 2] = a.shape()[r - 2];
  full[r - 1] = b.shape()[r - 1];
  return {a, b, k.output(0).Reshape(full)};
}

void MatMulReference(KernelCtx& k, const NoAttrs&) {
  Operands o = Prepare(k);
  cpu::MatMulLoops(o.a, o.b, o.y);
}

void MatMulForward(KernelCtx& k, const NoAttrs&) {
  Operands o = Prepare(k);
  if (o.y.numel() == 0) return;
  // A float32 product of rows by a parameter (a dense batch of them by one
  // matrix: its rows), or a small one (B is then packed on each call):
  // cpu::PanelMatMul, as Gemm's.
  const int64_t kk = o.a.shape().back(), n = o.y.shape().back();
  if (o.y.dtype() == DType::kFloat32 && o.a.is_contiguous() && o.y.is_contiguous() && kk > 0 &&
      o.b.numel() == kk * n) {
    const int64_t m = o.y.numel() / n;
    // (o.b is a view when it was broadcast to A's rank: the input tells.)
    const bool param = k.input(1).stores_grad();
    if (cpu::PanelMatMulFits(m, kk, n) && (param || m * kk * n <= (int64_t{1} << 16))) {
      cpu::PanelMatMul(o.a.data<float>(), cpu::PanelWeights(o.b.Reshape({kk, n}).Transpose()),
                       nullptr, o.y.data<float>(), m, kk, n);
      return;
    }
  }
  if (!cpu::DnnlMatMul(o.a, o.b, o.y)) cpu::MatMulLoops(o.a, o.b, o.y);
}

// The last two axes swapped (a view).
Tensor SwapLast(const Tensor& t) {
  std::vector<int64_t> perm(t.ndim());
  for (int64_t d = 0; d < t.ndim(); ++d) perm[d] = d;
  std::swap(perm[t.ndim() - 2], perm[t.ndim() - 1]);
  return t.Permute(perm);
}

// dA = dY @ B^T and dB = A^T @ dY on the operands promoted to matrices, each
// summed over the batch axes it was broadcast along.
TensorList MatMulBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor& a = g.input(0);
  const Tensor& b = g.input(1);
  const Tensor a2 = a.ndim() == 1 ? a.Unsqueeze(0) : a;
  const Tensor b2 = b.ndim() == 1 ? b.Unsqueeze(1) : b;
  const Tensor& dy = g.grad_output(0);
  const int64_t kept = (a.ndim() >= 2) + (b.ndim() >= 2);
  Shape full(dy.shape().begin(), dy.shape().end() - kept);
  full.push_back(a2.shape()[a2.ndim() - 2]);
  full.push_back(b2.shape()[b2.ndim() - 1]);
  const Tensor dy2 = dy.Reshape(full);
  TensorList d(2);
  if (g.needs_grad(0))
    d[0] = ops::SumToShape(Call1("MatMul", {dy2, SwapLast(b2)}), a2.shape()).Reshape(a.shape());
  if (g.needs_grad(1))
    d[1] = ops::SumToShape(Call1("MatMul", {SwapLast(a2), dy2}), b2.shape()).Reshape(b.shape());
  return d;
}

}  // namespace

SINGA_REGISTER_OP(MatMul, NoAttrs)
    .since_opset(1)
    .inputs({"A", "B"})
    .outputs({"Y"})
    .dtypes(MatMulTypes(), {0, 1})
    .infer(MatMulInfer)
    .kernel(MatMulForward)
        SINGA_CUDA_KERNEL([](KernelCtx& k,
                             const NoAttrs&) { cuda::MatMul(k.input(0), k.input(1), k.output(0)); },
                          ops::kCudaFloats)
    .reference(MatMulReference)
    .backward(MatMulBackward)
    .flops([](const std::vector<Shape>& in, const Shape& out) {
      return 2 * NumElements(out) * (in[0].empty() ? 1 : in[0].back());
    });

}  // namespace singa
