// DepthToSpace and SpaceToDepth: rearrangements of [N, C, H, W] blocks of
// blocksize b, each a reshape to 6-D, a transpose and a reshape back:
//   DepthToSpace DCR: [N, b, b, C/b^2, H, W]  perm {0, 3, 4, 1, 5, 2} -> [N, C/b^2, H*b, W*b]
//   DepthToSpace CRD: [N, C/b^2, b, b, H, W]  perm {0, 1, 4, 2, 5, 3} -> same
//   SpaceToDepth DCR: [N, C, H/b, b, W/b, b]  perm {0, 3, 5, 1, 2, 4} -> [N, C*b^2, H/b, W/b]
//   SpaceToDepth CRD: [N, C, H/b, b, W/b, b]  perm {0, 1, 3, 5, 2, 4} -> same
// The backward moves the gradient through the inverse permutation.
// https://onnx.ai/onnx/operators/onnx__DepthToSpace.html
// https://onnx.ai/onnx/operators/onnx__SpaceToDepth.html
#include "ops/movement.h"

namespace singa {
namespace {

struct D2SAttrs {
  int64_t blocksize = 0;
  std::string mode = "DCR";
};
struct S2DAttrs {
  int64_t blocksize = 0;
  std::string mode = "DCR";
};

// The 6-D view of the input, the permutation and the output shape.
struct Plan {
  Shape in6;
  std::vector<int64_t> perm;
  Shape out;
};

Plan D2SPlan(const Shape& x, int64_t b, bool crd) {
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  if (crd)
    return {{n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3}, {n, c / (b * b), h * b, w * b}};
  return {{n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2}, {n, c / (b * b), h * b, w * b}};
}
Plan S2DPlan(const Shape& x, int64_t b, bool crd) {
  const int64_t n = x[0], c = x[1], h = x[2], w = x[3];
  if (crd) return {{n, c, h / b, b, w / b, b}, {0, 1, 3, 5, 2, 4}, {n, c * b * b, h / b, w / b}};
  return {{n, c, h / b, b, w / b, b}, {0, 3, 5, 1, 2, 4}, {n, c * b * b, h / b, w / b}};
}

void CheckCommon(const InferCtx& c, int64_t b) {
  SINGA_CHECK(c.rank(0) == 4, ShapeError,
              c.where() << ": input must be 4-D [N, C, H, W] (" << c.inputs_string() << ")");
  SINGA_CHECK(b > 0, ShapeError, c.where() << ": blocksize must be positive, got " << b);
}

SpecList D2SInfer(const InferCtx& c, const D2SAttrs& a) {
  CheckCommon(c, a.blocksize);
  SINGA_CHECK(a.mode == "DCR" || a.mode == "CRD", ShapeError,
              c.where() << ": mode must be DCR or CRD, got '" << a.mode << "'");
  SINGA_CHECK(c.shape(0)[1] % (a.blocksize * a.blocksize) == 0, ShapeError,
              c.where() << ": channels must be divisible by blocksize^2 = "
                        << a.blocksize * a.blocksize << " (" << c.inputs_string() << ")");
  return {{c.dtype(0), D2SPlan(c.shape(0), a.blocksize, a.mode == "CRD").out}};
}
SpecList S2DInfer(const InferCtx& c, const S2DAttrs& a) {
  CheckCommon(c, a.blocksize);
  SINGA_CHECK(a.mode == "DCR" || a.mode == "CRD", ShapeError,
              c.where() << ": mode must be DCR or CRD, got '" << a.mode << "'");
  SINGA_CHECK(c.shape(0)[2] % a.blocksize == 0 && c.shape(0)[3] % a.blocksize == 0, ShapeError,
              c.where() << ": height and width must be divisible by blocksize " << a.blocksize
                        << " (" << c.inputs_string() << ")");
  return {{c.dtype(0), S2DPlan(c.shape(0), a.blocksize, a.mode == "CRD").out}};
}

Shape Permuted(const Shape& s, const std::vector<int64_t>& perm) {
  Shape r;
  for (int64_t p : perm) r.push_back(s[p]);
  return r;
}

void Move(KernelCtx& k, const Plan& p) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const Tensor src = k.input(0).Contiguous().Reshape(p.in6).Permute(p.perm);
  cpu::ConvertCopy(src, y.Reshape(Permuted(p.in6, p.perm)));
}

void D2SForward(KernelCtx& k, const D2SAttrs& a) {
  Move(k, D2SPlan(k.input(0).shape(), a.blocksize, a.mode == "CRD"));
}
void S2DForward(KernelCtx& k, const S2DAttrs& a) {
  Move(k, S2DPlan(k.input(0).shape(), a.blocksize, a.mode == "CRD"));
}

// dX: dY seen in the permuted 6-D shape, transposed back, reshaped to X.
Tensor Unmove(const Tensor& dy, const Plan& p, const Shape& x) {
  std::vector<int64_t> inv(p.perm.size());
  for (size_t i = 0; i < p.perm.size(); ++i) inv[p.perm[i]] = static_cast<int64_t>(i);
  const Tensor t =
      Call1("Transpose", {dy.Contiguous().Reshape(Permuted(p.in6, p.perm))}, {{"perm", inv}});
  return t.Reshape(x);
}
TensorList D2SBackward(const GradCtx& g, const D2SAttrs& a) {
  const Shape& x = g.input(0).shape();
  return {Unmove(g.grad_output(0), D2SPlan(x, a.blocksize, a.mode == "CRD"), x)};
}
TensorList S2DBackward(const GradCtx& g, const S2DAttrs& a) {
  const Shape& x = g.input(0).shape();
  return {Unmove(g.grad_output(0), S2DPlan(x, a.blocksize, a.mode == "CRD"), x)};
}

}  // namespace

// Opset 1 has no mode attribute: always DCR.
// DepthToSpace: 11 added `mode`, 13 bfloat16.
[[maybe_unused]] static const bool kDepthToSpace =
    RegisterVersions<D2SAttrs>("DepthToSpace", {1, 11, 13}, [](OpBuilder<D2SAttrs>& b, int v) {
      b.inputs({"input"})
          .outputs({"output"})
          .attr("blocksize", &D2SAttrs::blocksize, true)
          .dtypes(v >= 13 ? dtypes::kAll : ops::kAllButBFloat16)
          .infer(D2SInfer)
          .kernel(D2SForward)
          .backward(D2SBackward);
      if (v >= 11) b.attr("mode", &D2SAttrs::mode);
    });
// SpaceToDepth: 13 added bfloat16, 28 `mode` (CRD is the inverse of
// DepthToSpace's CRD).
[[maybe_unused]] static const bool kSpaceToDepth =
    RegisterVersions<S2DAttrs>("SpaceToDepth", {1, 13, 28}, [](OpBuilder<S2DAttrs>& b, int v) {
      b.inputs({"input"})
          .outputs({"output"})
          .attr("blocksize", &S2DAttrs::blocksize, true)
          .dtypes(v >= 13 ? dtypes::kAll : ops::kAllButBFloat16)
          .infer(S2DInfer)
          .kernel(S2DForward)
          .backward(S2DBackward);
      if (v >= 28) b.attr("mode", &S2DAttrs::mode);
    });

}  // namespace singa
