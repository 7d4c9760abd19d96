// Reshape: the input's elements in row-major order under a new shape. In
// `shape`, -1 infers one dimension and 0 copies the input's dimension (or,
// with allowzero=1 since opset 14, means a zero-sized dimension). The output
// is a view of the input (a copy when the input's strides cannot express it).
// https://onnx.ai/onnx/operators/onnx__Reshape.html
#include "ops/movement.h"

namespace singa {
namespace {

struct ReshapeAttrs {
  bool allowzero = false;
};

Shape OutputShape(const InferCtx& c, const ReshapeAttrs& a) {
  const Shape& in = c.shape(0);
  Shape out = ops::ReadInts(c, 1);
  int64_t infer = -1, known = 1;
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i] == 0 && !a.allowzero) {
      SINGA_CHECK(i < in.size(), ShapeError,
                  c.where() << ": shape " << ToString(out) << " copies dimension " << i
                            << " (0) that the input does not have (" << c.inputs_string() << ")");
      out[i] = in[i];
    }
    if (out[i] == -1) {
      SINGA_CHECK(infer < 0, ShapeError,
                  c.where() << ": shape " << ToString(out) << " has more than one -1 ("
                            << c.inputs_string() << ")");
      infer = static_cast<int64_t>(i);
      continue;
    }
    SINGA_CHECK(out[i] >= 0, ShapeError,
                c.where() << ": shape " << ToString(out) << " has a negative dimension ("
                          << c.inputs_string() << ")");
    known *= out[i];
  }
  const int64_t n = NumElements(in);
  if (infer >= 0) {
    SINGA_CHECK(known != 0 && n % known == 0, ShapeError,
                c.where() << ": cannot infer the -1 of shape " << ToString(ops::ReadInts(c, 1))
                          << " (" << c.inputs_string() << ")");
    out[infer] = n / known;
    known *= out[infer];
  }
  SINGA_CHECK(known == n, ShapeError,
              c.where() << ": cannot reshape " << n << " elements to shape "
                        << ToString(ops::ReadInts(c, 1)) << " (" << c.inputs_string() << ")");
  return out;
}

SpecList Infer(const InferCtx& c, const ReshapeAttrs& a) {
  return {{c.dtype(0), OutputShape(c, a)}};
}

TensorList Alias(const InferCtx& c, const ReshapeAttrs& a) {
  return {c.input(0).Reshape(OutputShape(c, a))};
}

}  // namespace

SINGA_REGISTER_OP(Reshape, ReshapeAttrs)
    .since_opset(5)
    .inputs({"data", "shape"})
    .outputs({"reshaped"})
    .dtypes(ops::AnyDType(), {0})
    .dtypes({DType::kInt64}, {1})
    .host_inputs({1})
    .infer(Infer)
    .alias(Alias)
    .backward(ops::ReshapeGrad{});
SINGA_REGISTER_OP(Reshape, ReshapeAttrs)
    .since_opset(14)
    .inputs({"data", "shape"})
    .outputs({"reshaped"})
    .attr("allowzero", &ReshapeAttrs::allowzero)
    .dtypes(ops::AnyDType(), {0})
    .dtypes({DType::kInt64}, {1})
    .host_inputs({1})
    .infer(Infer)
    .alias(Alias)
    .backward(ops::ReshapeGrad{});

}  // namespace singa
