// Flatten: a 2-D view [prod(d[:axis]), prod(d[axis:])] of the input.
// Opsets 1-10 differ only in rejecting a negative axis: one schema serves them.
// https://onnx.ai/onnx/operators/onnx__Flatten.html
#include "ops/movement.h"

namespace singa {
namespace {

struct FlattenAttrs {
  int64_t axis = 1;
};

Shape OutputShape(const InferCtx& c, const FlattenAttrs& a) {
  const Shape& in = c.shape(0);
  const int64_t rank = c.rank(0);
  SINGA_CHECK(a.axis >= -rank && a.axis <= rank, ShapeError,
              c.where() << ": axis " << a.axis << " is out of range [" << -rank << ", " << rank
                        << "] (" << c.inputs_string() << ")");
  const int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= in[d];
  return {outer, inner};
}

SpecList Infer(const InferCtx& c, const FlattenAttrs& a) {
  return {{c.dtype(0), OutputShape(c, a)}};
}

TensorList Alias(const InferCtx& c, const FlattenAttrs& a) {
  return {c.input(0).Reshape(OutputShape(c, a))};
}

}  // namespace

SINGA_REGISTER_OP(Flatten, FlattenAttrs)
    .since_opset(1)
    .inputs({"input"})
    .outputs({"output"})
    .attr("axis", &FlattenAttrs::axis)
    .dtypes(ops::AnyDType())
    .infer(Infer)
    .alias(Alias)
    .backward(ops::ReshapeGrad{});

}  // namespace singa
