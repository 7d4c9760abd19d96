// Slice: takes starts[i]:ends[i]:steps[i] along axes[i] (numpy slicing:
// negative values count from the end, out-of-range ones clamp, negative steps
// walk backwards). The output is a strided view of the input.
// https://onnx.ai/onnx/operators/onnx__Slice.html
#include "ops/movement.h"

namespace singa {
namespace {

// Views only restride, so shape inference builds the view too: it touches no data.
Tensor View(const InferCtx& c) {
  const int64_t rank = c.rank(0);
  const std::vector<int64_t> starts = ops::ReadInts(c, 1), ends = ops::ReadInts(c, 2);
  const size_t n = starts.size();
  SINGA_CHECK(ends.size() == n, ShapeError,
              c.where() << ": starts and ends differ in length (" << c.inputs_string() << ")");
  std::vector<int64_t> axes(n), steps(n, 1);
  if (c.has_input(3)) {
    std::vector<int64_t> given = ops::ReadInts(c, 3);
    SINGA_CHECK(given.size() == n, ShapeError,
                c.where() << ": axes and starts differ in length (" << c.inputs_string() << ")");
    for (size_t i = 0; i < n; ++i) axes[i] = ops::CheckAxis(c, given[i], rank);
    ops::CheckDistinctAxes(c, axes);
  } else {
    SINGA_CHECK(
        static_cast<int64_t>(n) <= rank, ShapeError,
        c.where() << ": " << n << " starts for rank " << rank << " (" << c.inputs_string() << ")");
    for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  }
  if (c.has_input(4)) {
    steps = ops::ReadInts(c, 4);
    SINGA_CHECK(steps.size() == n, ShapeError,
                c.where() << ": steps and starts differ in length (" << c.inputs_string() << ")");
    for (int64_t s : steps)
      SINGA_CHECK(s != 0, ShapeError, c.where() << ": a step is 0 (" << c.inputs_string() << ")");
  }
  Tensor t = c.input(0);
  for (size_t i = 0; i < n; ++i) t = t.Slice(axes[i], starts[i], ends[i], steps[i]);
  return t;
}

// The input's gradient is zeros with the output's gradient written into the
// sliced positions (the same view taken of the zeros).
TensorList Backward(const GradCtx& g, const NoAttrs&) {
  const Tensor& x = g.input(0);
  const std::vector<int64_t> starts = g.input(1).ToVector<int64_t>();
  const std::vector<int64_t> ends = g.input(2).ToVector<int64_t>();
  const size_t n = starts.size();
  std::vector<int64_t> axes(n), steps(n, 1);
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  if (g.has_input(3)) axes = g.input(3).ToVector<int64_t>();
  if (g.has_input(4)) steps = g.input(4).ToVector<int64_t>();
  Tensor dx = Tensor::Zeros(x.shape(), x.dtype());
  Tensor view = dx;
  for (size_t i = 0; i < n; ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + x.ndim() : axes[i];
    view = view.Slice(axis, starts[i], ends[i], steps[i]);
  }
  view.CopyFrom(g.grad_output(0));
  TensorList d(g.num_inputs());
  d[0] = dx;
  return d;
}

}  // namespace

SINGA_REGISTER_OP(Slice, NoAttrs)
    .since_opset(10)
    .inputs({"data", "starts", "ends", "axes?", "steps?"})
    .outputs({"output"})
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt32, DType::kInt64}, {1, 2, 3, 4})
    .infer([](const InferCtx& c, const NoAttrs&) {
      Tensor v = View(c);
      return SpecList{{v.dtype(), v.shape()}};
    })
    .alias([](const InferCtx& c, const NoAttrs&) { return TensorList{View(c)}; })
    .backward(Backward);

}  // namespace singa
