// Gather: out[pre..., j..., post...] = data[pre..., indices[j...], post...]
// along `axis`; negative indices count from the end.
// Opsets 1-10 differ only in rejecting negative indices: one schema serves them.
// https://onnx.ai/onnx/operators/onnx__Gather.html
#include "ops/movement.h"
#include "ops/scatter_grad.h"

namespace singa {
namespace {

struct GatherAttrs {
  int64_t axis = 0;
};

SpecList Infer(const InferCtx& c, const GatherAttrs& a) {
  const int64_t rank = c.rank(0);
  SINGA_CHECK(rank > 0, ShapeError,
              c.where() << ": data must have rank >= 1 (" << c.inputs_string() << ")");
  const int64_t axis = ops::CheckAxis(c, a.axis, rank);
  const Shape& data = c.shape(0);
  Shape out(data.begin(), data.begin() + axis);
  out.insert(out.end(), c.shape(1).begin(), c.shape(1).end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return {{c.dtype(0), out}};
}

void Forward(KernelCtx& k, const GatherAttrs& a) {
  const Tensor& x = k.input(0);
  const Tensor& y = k.output(0);
  const int64_t rank = x.ndim();
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  const int64_t n = x.shape()[axis];
  // Index values are data, so they are checked here rather than in Infer.
  std::vector<int64_t> idx = k.input(1).ToVector<int64_t>();
  for (int64_t& i : idx) {
    SINGA_CHECK(i >= -n && i < n, ShapeError,
                "Gather: index " << i << " is out of range for axis " << axis << " of data "
                                 << x.ToString());
    if (i < 0) i += n;
  }
  // Seen as [pre..., len(idx), post...], every output axis maps to one of x.
  std::vector<std::vector<int64_t>> maps;
  Shape flat;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == axis) {
      maps.push_back(idx);
    } else {
      std::vector<int64_t> m(x.shape()[d]);
      for (int64_t i = 0; i < x.shape()[d]; ++i) m[i] = i;
      maps.push_back(std::move(m));
    }
    flat.push_back(static_cast<int64_t>(maps.back().size()));
  }
  ops::GatherAxes(x, y.Reshape(flat), maps, "Gather");
}

// The data's gradient adds each output's gradient back at the row it was
// read from (repeated indices add up).
TensorList Backward(const GradCtx& g, const GatherAttrs& a) {
  const Tensor& x = g.input(0);
  const int64_t rank = x.ndim();
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  const int64_t n = x.shape()[axis];
  std::vector<int64_t> idx = g.input(1).ToVector<int64_t>();
  for (int64_t& i : idx)
    if (i < 0) i += n;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < axis; ++d) outer *= x.shape()[d];
  for (int64_t d = axis + 1; d < rank; ++d) inner *= x.shape()[d];
  return {ops::IndexAdd(g.grad_output(0), outer, inner, idx, n).Reshape(x.shape()), Tensor()};
}

#if SINGA_CUDA
void GatherCuda(KernelCtx& k, const GatherAttrs& a) {
  const int64_t rank = k.input(0).ndim();
  cuda::Gather(k.input(0), k.input(1), k.output(0), a.axis < 0 ? a.axis + rank : a.axis);
}
#endif

}  // namespace

SINGA_REGISTER_OP(Gather, GatherAttrs)
    .since_opset(1)
    .inputs({"data", "indices"})
    .outputs({"output"})
    .attr("axis", &GatherAttrs::axis)
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt32, DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward) SINGA_CUDA_KERNEL(GatherCuda, ops::kCudaCopy)
    .backward(Backward);

}  // namespace singa
