// Concat: joins the inputs along `axis`; all other dimensions must match.
// Opsets 4-10 differ only in rejecting a negative axis: one schema serves them.
// https://onnx.ai/onnx/operators/onnx__Concat.html
#include "ops/movement.h"

namespace singa {
namespace {

struct ConcatAttrs {
  int64_t axis = 0;
};

SpecList Infer(const InferCtx& c, const ConcatAttrs& a) {
  const int64_t rank = c.rank(0);
  SINGA_CHECK(rank > 0, ShapeError,
              c.where() << ": cannot concatenate 0-d tensors (" << c.inputs_string() << ")");
  const int64_t axis = ops::CheckAxis(c, a.axis, rank);
  Shape out = c.shape(0);
  for (int i = 1; i < c.num_inputs(); ++i) {
    const Shape& s = c.shape(i);
    bool fits = static_cast<int64_t>(s.size()) == rank;
    for (int64_t d = 0; fits && d < rank; ++d) fits = d == axis || s[d] == out[d];
    SINGA_CHECK(fits, ShapeError,
                c.where() << ": input " << i << " does not match input 0 outside axis " << axis
                          << " (" << c.inputs_string() << ")");
    out[axis] += s[axis];
  }
  return {{c.dtype(0), out}};
}

// kCopy: cpu::ConvertCopy, or cuda::Copy on a GPU.
template <auto kCopy>
void Forward(KernelCtx& k, const ConcatAttrs& a) {
  const Tensor& y = k.output(0);
  const int64_t axis = a.axis < 0 ? a.axis + y.ndim() : a.axis;
  int64_t offset = 0;
  for (int i = 0; i < k.num_inputs(); ++i) {
    const Tensor& x = k.input(i);
    const int64_t n = x.shape()[axis];
    kCopy(x, y.Slice(axis, offset, offset + n));
    offset += n;
  }
}

// Each input's gradient is its part of the output's gradient.
TensorList Backward(const GradCtx& g, const ConcatAttrs& a) {
  const Tensor& dy = g.grad_output(0);
  const int64_t axis = a.axis < 0 ? a.axis + dy.ndim() : a.axis;
  TensorList d(g.num_inputs());
  int64_t offset = 0;
  for (int i = 0; i < g.num_inputs(); ++i) {
    const int64_t n = g.input(i).shape()[axis];
    if (g.needs_grad(i)) d[i] = dy.Slice(axis, offset, offset + n);
    offset += n;
  }
  return d;
}

}  // namespace

SINGA_REGISTER_OP(Concat, ConcatAttrs)
    .since_opset(4)
    .inputs({"inputs..."})
    .outputs({"concat_result"})
    .attr("axis", &ConcatAttrs::axis, /*required=*/true)
    .dtypes(dtypes::kAll, {0})
    .infer(Infer)
    .kernel(Forward<cpu::ConvertCopy>) SINGA_CUDA_KERNEL(Forward<cuda::Copy>, ops::kCudaCopy)
    .backward(Backward);

}  // namespace singa
