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
    .alias([](const InferCtx& c, const NoAttrs&) { return TensorList{View(c)}; });

}  // namespace singa
