// The broadcasting of binary ops before opset 7 (Add, Sub, Mul, Div, Pow):
// without `broadcast` the shapes must be equal; with broadcast=1, B's shape
// lines up with a run of A's dims starting at `axis` (default: A's trailing
// dims), each of B's dims equal to A's or 1, and the output has A's shape.
// These versions run the numpy-broadcasting kernels of the newer ones on B
// viewed with trailing 1s (which numpy broadcasting then aligns the same way).
// https://github.com/onnx/onnx/blob/main/docs/Changelog.md#Add-6
#pragma once

#include <array>
#include <optional>

#include "ops/common.h"

namespace singa::ops {

struct LegacyBroadcastAttrs {
  int64_t broadcast = 0;
  std::optional<int64_t> axis;
  std::vector<int64_t> consumed_inputs;  // opset 1: an in-place hint, ignored
};

// B's shape padded with trailing 1s up to A's rank minus `axis`; the checks
// throw ShapeError naming `where` and both shapes.
inline Shape LegacyAlignedShape(const Shape& a, const Shape& b, const LegacyBroadcastAttrs& at,
                                const std::string& where) {
  const int64_t ra = static_cast<int64_t>(a.size()), rb = static_cast<int64_t>(b.size());
  if (!at.broadcast) {
    SINGA_CHECK(a == b, ShapeError,
                where << ": without broadcast=1 the shapes must be equal, got " << ToString(a)
                      << " and " << ToString(b));
    return b;
  }
  int64_t numel = 1;
  for (int64_t d : b) numel *= d;
  if (numel == 1 && rb > ra) return Shape{};  // a one-element B is a scalar
  int64_t axis = at.axis.value_or(ra - rb);
  if (axis < 0) axis += ra;
  SINGA_CHECK(axis >= 0 && axis + rb <= ra, ShapeError,
              where << ": B of shape " << ToString(b) << " does not fit into A's shape "
                    << ToString(a) << " at axis " << at.axis.value_or(ra - rb));
  Shape out = b;
  for (int64_t i = 0; i < rb; ++i)
    SINGA_CHECK(b[i] == a[axis + i] || b[i] == 1, ShapeError,
                where << ": B of shape " << ToString(b) << " does not broadcast to A's shape "
                      << ToString(a) << " at axis " << axis);
  out.resize(ra - axis, 1);
  return out;
}

// Opset 7's numpy broadcasting aligns B's dims with A's trailing ones: B
// viewed with its trailing 1s says the same.
inline void LegacyBroadcastUpgrade(ExportCtx& c, const LegacyBroadcastAttrs& at) {
  std::vector<std::string> in = c.input_names();
  const Shape& a = c.input(0).shape();
  const Shape& b = c.input(1).shape();
  const Shape aligned = LegacyAlignedShape(a, b, at, c.where());
  if (aligned != b) {
    const std::string shaped = c.FreshName(c.op().name + "_B_aligned");
    c.AddNode("Reshape", {in[1], c.AddInts(aligned, "shape")}, {shaped}, {});
    in[1] = shaped;
  }
  c.AddNode(c.op().name, in, c.output_names(), {});
}

inline SpecList LegacyBroadcastInfer(const InferCtx& c, const LegacyBroadcastAttrs& a) {
  LegacyAlignedShape(c.shape(0), c.shape(1), a, c.where());
  return {{c.dtype(0), c.shape(0)}};
}

// Runs `kernel` (a numpy-broadcasting kernel taking NoAttrs) on A and B viewed
// as aligned to A.
template <class Kernel>
void RunLegacyBroadcast(KernelCtx& k, const LegacyBroadcastAttrs& a, const char* op,
                        Kernel kernel) {
  const Shape aligned = LegacyAlignedShape(k.input(0).shape(), k.input(1).shape(), a, op);
  std::array<Tensor, 2> in = {k.input(0), k.input(1).Reshape(aligned)};
  KernelCtx k2{in, k.outputs};
  kernel(k2, NoAttrs{});
}

// What a backward written for numpy broadcasting reads as its B, and how it
// gives back B's gradient: NoAttrs leaves both alone, the legacy attributes
// view B aligned and reshape its gradient back.
inline Tensor BroadcastB(const GradCtx& g, const NoAttrs&) { return g.input(1); }
inline Tensor BroadcastB(const GradCtx& g, const LegacyBroadcastAttrs& a) {
  return g.input(1).Reshape(LegacyAlignedShape(g.input(0).shape(), g.input(1).shape(), a, ""));
}
template <class A>
Tensor SumToB(const Tensor& grad, const GradCtx& g, const A& a) {
  return SumToShape(grad, BroadcastB(g, a).shape()).Reshape(g.input(1).shape());
}

}  // namespace singa::ops
