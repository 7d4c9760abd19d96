// Slice: takes starts[i]:ends[i]:steps[i] along axes[i] (numpy slicing:
// negative values count from the end, out-of-range ones clamp, negative steps
// walk backwards). The output is a strided view of the input. Opset 1 takes
// starts, ends and axes as attributes; opset 10 as inputs, with steps.
// https://onnx.ai/onnx/operators/onnx__Slice.html
#include "ops/movement.h"

namespace singa {
namespace {

struct Slice1Attrs {
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes;
};

// One slice per entry of starts/ends, along axes (default 0, 1, ...) with
// steps (default 1): opset 1's attributes or opset 10's inputs.
struct Spec {
  std::vector<int64_t> starts, ends;
  std::optional<std::vector<int64_t>> axes, steps;
};
Spec FromInputs(const InferCtx& c) {
  Spec s{ops::ReadInts(c, 1), ops::ReadInts(c, 2), std::nullopt, std::nullopt};
  if (c.has_input(3)) s.axes = ops::ReadInts(c, 3);
  if (c.has_input(4)) s.steps = ops::ReadInts(c, 4);
  return s;
}
Spec FromInputs(const GradCtx& g) {
  Spec s{g.input(1).ToVector<int64_t>(), g.input(2).ToVector<int64_t>(), std::nullopt,
         std::nullopt};
  if (g.has_input(3)) s.axes = g.input(3).ToVector<int64_t>();
  if (g.has_input(4)) s.steps = g.input(4).ToVector<int64_t>();
  return s;
}
Spec FromAttrs(const Slice1Attrs& a) { return {a.starts, a.ends, a.axes, std::nullopt}; }

// Views only restride, so shape inference builds the view too: it touches no data.
Tensor View(const InferCtx& c, const Spec& s) {
  const int64_t rank = c.rank(0);
  const size_t n = s.starts.size();
  SINGA_CHECK(s.ends.size() == n, ShapeError,
              c.where() << ": starts and ends differ in length (" << c.inputs_string() << ")");
  std::vector<int64_t> axes(n), steps(n, 1);
  if (s.axes) {
    SINGA_CHECK(s.axes->size() == n, ShapeError,
                c.where() << ": axes and starts differ in length (" << c.inputs_string() << ")");
    for (size_t i = 0; i < n; ++i) axes[i] = ops::CheckAxis(c, (*s.axes)[i], rank);
    ops::CheckDistinctAxes(c, axes);
  } else {
    SINGA_CHECK(
        static_cast<int64_t>(n) <= rank, ShapeError,
        c.where() << ": " << n << " starts for rank " << rank << " (" << c.inputs_string() << ")");
    for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  }
  if (s.steps) {
    steps = *s.steps;
    SINGA_CHECK(steps.size() == n, ShapeError,
                c.where() << ": steps and starts differ in length (" << c.inputs_string() << ")");
    for (int64_t st : steps)
      SINGA_CHECK(st != 0, ShapeError, c.where() << ": a step is 0 (" << c.inputs_string() << ")");
  }
  Tensor t = c.input(0);
  for (size_t i = 0; i < n; ++i) t = t.Slice(axes[i], s.starts[i], s.ends[i], steps[i]);
  return t;
}
SpecList Infer(const Tensor& view) { return {{view.dtype(), view.shape()}}; }

// The input's gradient is zeros with the output's gradient written into the
// sliced positions (the same view taken of the zeros).
TensorList Backward(const GradCtx& g, const Spec& s) {
  const Tensor& x = g.input(0);
  const size_t n = s.starts.size();
  std::vector<int64_t> axes(n), steps(n, 1);
  for (size_t i = 0; i < n; ++i) axes[i] = static_cast<int64_t>(i);
  if (s.axes) axes = *s.axes;
  if (s.steps) steps = *s.steps;
  Tensor dx = Tensor::Zeros(x.shape(), x.dtype(), x.device());
  Tensor view = dx;
  for (size_t i = 0; i < n; ++i) {
    const int64_t axis = axes[i] < 0 ? axes[i] + x.ndim() : axes[i];
    view = view.Slice(axis, s.starts[i], s.ends[i], steps[i]);
  }
  view.CopyFrom(g.grad_output(0));
  TensorList d(g.num_inputs());
  d[0] = dx;
  return d;
}

}  // namespace

SINGA_REGISTER_OP(Slice, Slice1Attrs)
    .since_opset(1)
    .inputs({"data"})
    .outputs({"output"})
    .attr("starts", &Slice1Attrs::starts, /*required=*/true)
    .attr("ends", &Slice1Attrs::ends, /*required=*/true)
    .attr("axes", &Slice1Attrs::axes)
    .dtypes(dtypes::kAll, {0})
    .infer([](const InferCtx& c, const Slice1Attrs& a) { return Infer(View(c, FromAttrs(a))); })
    .alias([](const InferCtx& c, const Slice1Attrs& a) {
      return TensorList{View(c, FromAttrs(a))};
    })
    .backward([](const GradCtx& g, const Slice1Attrs& a) { return Backward(g, FromAttrs(a)); })
    .upgrade([](ExportCtx& c, const Slice1Attrs& a) {  // 10: starts, ends, axes inputs
      AddWithInputs(c,
                    {c.AddInts(a.starts, "starts"), c.AddInts(a.ends, "ends"),
                     a.axes ? c.AddInts(*a.axes, "axes") : ""},
                    {"starts", "ends", "axes"});
    });
SINGA_REGISTER_OP(Slice, NoAttrs)
    .since_opset(10)
    .inputs({"data", "starts", "ends", "axes?", "steps?"})
    .outputs({"output"})
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt32, DType::kInt64}, {1, 2, 3, 4})
    .host_inputs({1, 2, 3, 4})
    .infer([](const InferCtx& c, const NoAttrs&) { return Infer(View(c, FromInputs(c))); })
    .alias([](const InferCtx& c, const NoAttrs&) { return TensorList{View(c, FromInputs(c))}; })
    .backward([](const GradCtx& g, const NoAttrs&) { return Backward(g, FromInputs(g)); });

}  // namespace singa
