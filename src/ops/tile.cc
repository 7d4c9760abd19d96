// Tile: repeats the input `repeats[d]` times along every axis d.
// https://onnx.ai/onnx/operators/onnx__Tile.html
#include "ops/movement.h"

namespace singa {
namespace {

SpecList Infer(const InferCtx& c, const NoAttrs&) {
  const std::vector<int64_t> repeats = ops::ReadInts(c, 1);
  SINGA_CHECK(static_cast<int64_t>(repeats.size()) == c.rank(0), ShapeError,
              c.where() << ": repeats " << ToString(repeats) << " must have one entry per axis ("
                        << c.inputs_string() << ")");
  Shape out = c.shape(0);
  for (size_t d = 0; d < out.size(); ++d) {
    SINGA_CHECK(repeats[d] >= 0, ShapeError,
                c.where() << ": repeats " << ToString(repeats) << " has a negative entry ("
                          << c.inputs_string() << ")");
    out[d] *= repeats[d];
  }
  return {{c.dtype(0), out}};
}

void Forward(KernelCtx& k, const NoAttrs&) {
  const Tensor& x = k.input(0);
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  std::vector<std::vector<int64_t>> maps(y.ndim());
  for (int64_t d = 0; d < y.ndim(); ++d) {
    maps[d].resize(y.shape()[d]);
    for (int64_t o = 0; o < y.shape()[d]; ++o) maps[d][o] = o % x.shape()[d];
  }
  ops::GatherAxes(x, y, maps, "Tile");
}

}  // namespace

SINGA_REGISTER_OP(Tile, NoAttrs)
    .since_opset(6)
    .inputs({"input", "repeats"})
    .outputs({"output"})
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
