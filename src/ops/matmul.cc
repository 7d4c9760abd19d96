// MatMul: the matrix product with numpy.matmul semantics. A 1-D A is a row
// (prepended 1, removed from the result), a 1-D B a column (appended 1,
// removed); leading batch dimensions broadcast. f32/f16/bf16 run on oneDNN's
// matmul (inputs described by their strides, so transposed views cost no
// copy); every dtype has the plain-loop reference kernel.
// Opset 13 only added bfloat16 to opset 9's MatMul.
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
  if (!cpu::DnnlMatMul(o.a, o.b, o.y)) cpu::MatMulLoops(o.a, o.b, o.y);
}

}  // namespace

SINGA_REGISTER_OP(MatMul, NoAttrs)
    .since_opset(9)
    .inputs({"A", "B"})
    .outputs({"Y"})
    .dtypes(MatMulTypes(), {0, 1})
    .infer(MatMulInfer)
    .kernel(MatMulForward)
    .reference(MatMulReference);

}  // namespace singa
