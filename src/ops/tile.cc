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

// The input's gradient sums the output's gradient over the copies: seen as
// [r0, s0, r1, s1, ...] it is a ReduceSum over the r axes.
#if SINGA_CUDA
// One broadcasting copy: y seen as [r0, d0, r1, d1, ...], x as [1, d0, 1,
// d1, ...] (so x's rank is at most half the kernels' rank limit).
void ForwardCuda(KernelCtx& k, const NoAttrs&) {
  const Tensor &x = k.input(0), &y = k.output(0);
  if (y.numel() == 0) return;
  Shape split, ones;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    split.insert(split.end(), {y.dim(d) / x.dim(d), x.dim(d)});
    ones.insert(ones.end(), {1, x.dim(d)});
  }
  cuda::Copy(x.Reshape(ones).BroadcastTo(split), y.Reshape(split));
}
#endif

TensorList Backward(const GradCtx& g, const NoAttrs&) {
  const Tensor& x = g.input(0);
  const std::vector<int64_t> repeats = g.input(1).ToVector<int64_t>();
  Shape split;
  std::vector<int64_t> axes;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    axes.push_back(static_cast<int64_t>(split.size()));
    split.push_back(repeats[d]);
    split.push_back(x.shape()[d]);
  }
  Tensor dx = g.grad_output(0).Reshape(split);
  if (!axes.empty()) {
    const Tensor ax = Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes);
    dx = Call1("ReduceSum", {dx, ax}, {{"keepdims", int64_t{0}}});
  }
  return {dx.Reshape(x.shape()), Tensor()};
}

}  // namespace

SINGA_REGISTER_OP(Tile, NoAttrs)
    .since_opset(6)
    .inputs({"input", "repeats"})
    .outputs({"output"})
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt64}, {1})
    .host_inputs({1})
    .infer(Infer)
    .kernel(Forward) SINGA_CUDA_KERNEL(ForwardCuda, ops::kCudaCopy,
                                       [](const InferCtx& c, const NoAttrs&) {
                                         return 2 * c.rank(0) <= cuda::kernels::kMaxRank;
                                       })
    .backward(Backward);

}  // namespace singa
