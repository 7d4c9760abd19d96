// Expand: broadcasts the input to the numpy-broadcast of its shape and
// `shape`. The output is a view with zero strides on the broadcast axes.
// https://onnx.ai/onnx/operators/onnx__Expand.html
#include "ops/movement.h"

namespace singa {
namespace {

Shape OutputShape(const InferCtx& c) {
  Shape target = ops::ReadInts(c, 1);
  for (int64_t d : target)
    SINGA_CHECK(d >= 0, ShapeError,
                c.where() << ": shape " << ToString(target) << " has a negative dimension ("
                          << c.inputs_string() << ")");
  Shape in = c.shape(0), out(std::max(in.size(), target.size()));
  // Right-aligned bidirectional broadcasting, with a message naming the op.
  for (size_t i = 0; i < out.size(); ++i) {
    int64_t a = i < out.size() - in.size() ? 1 : in[i - (out.size() - in.size())];
    int64_t b = i < out.size() - target.size() ? 1 : target[i - (out.size() - target.size())];
    SINGA_CHECK(a == b || a == 1 || b == 1, ShapeError,
                c.where() << ": cannot broadcast the input to shape " << ToString(target) << " ("
                          << c.inputs_string() << ")");
    out[i] = a == 1 ? b : a;
  }
  return out;
}

}  // namespace

SINGA_REGISTER_OP(Expand, NoAttrs)
    .since_opset(8)
    .inputs({"input", "shape"})
    .outputs({"output"})
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt64}, {1})
    .host_inputs({1})
    .infer([](const InferCtx& c, const NoAttrs&) {
      return SpecList{{c.dtype(0), OutputShape(c)}};
    })
    .alias([](const InferCtx& c, const NoAttrs&) {
      return TensorList{c.input(0).BroadcastTo(OutputShape(c))};
    })
    // The gradient sums the output's gradient over the broadcast axes.
    .backward([](const GradCtx& g, const NoAttrs&) {
      return TensorList{ops::SumToShape(g.grad_output(0), g.input(0).shape()), Tensor()};
    });

}  // namespace singa
