// Squeeze: removes size-1 axes (the listed ones, or all when none are
// given). Opset 13 moved `axes` from an attribute to an input (opsets 1-10
// only reject negative axes: the attribute schema serves them). The output is
// a view of the input.
// https://onnx.ai/onnx/operators/onnx__Squeeze.html
#include <functional>

#include "ops/movement.h"

namespace singa {
namespace {

struct SqueezeAttrs {
  std::optional<std::vector<int64_t>> axes;
};

// The axes to remove: normalized, distinct, descending, each of size 1.
std::vector<int64_t> Axes(const InferCtx& c, const std::optional<std::vector<int64_t>>& given) {
  const Shape& in = c.shape(0);
  const int64_t rank = c.rank(0);
  std::vector<int64_t> axes;
  if (!given) {
    for (int64_t d = 0; d < rank; ++d)
      if (in[d] == 1) axes.push_back(d);
  } else {
    for (int64_t v : *given) {
      int64_t d = ops::CheckAxis(c, v, rank);
      SINGA_CHECK(in[d] == 1, ShapeError,
                  c.where() << ": axis " << v << " has size " << in[d] << ", not 1 ("
                            << c.inputs_string() << ")");
      axes.push_back(d);
    }
    ops::CheckDistinctAxes(c, axes);
  }
  std::sort(axes.begin(), axes.end(), std::greater<>());
  return axes;
}

// Views only restride, so shape inference builds the view too: it touches no data.
Tensor View(const InferCtx& c, const std::optional<std::vector<int64_t>>& given) {
  Tensor t = c.input(0);
  for (int64_t d : Axes(c, given)) t = t.Squeeze(d);
  return t;
}

std::optional<std::vector<int64_t>> AxesInput(const InferCtx& c) {
  if (!c.has_input(1)) return std::nullopt;
  return ops::ReadInts(c, 1);
}

SpecList Spec(const Tensor& view) { return {{view.dtype(), view.shape()}}; }

}  // namespace

SINGA_REGISTER_OP(Squeeze, SqueezeAttrs)
    .since_opset(1)
    .inputs({"data"})
    .outputs({"squeezed"})
    .attr("axes", &SqueezeAttrs::axes)
    .dtypes(ops::AnyDType())
    .infer([](const InferCtx& c, const SqueezeAttrs& a) { return Spec(View(c, a.axes)); })
    .alias([](const InferCtx& c, const SqueezeAttrs& a) { return TensorList{View(c, a.axes)}; })
    .backward(ops::ReshapeGrad{})
    .upgrade([](ExportCtx& c, const SqueezeAttrs& a) {  // 13: axes an input
      AddWithInputs(c, {a.axes ? c.AddInts(*a.axes, "axes") : ""}, {"axes"});
    });
SINGA_REGISTER_OP(Squeeze, NoAttrs)
    .since_opset(13)
    .inputs({"data", "axes?"})
    .outputs({"squeezed"})
    .dtypes(ops::AnyDType())
    .dtypes({DType::kInt64}, {1})
    .host_inputs({1})
    .infer([](const InferCtx& c, const NoAttrs&) { return Spec(View(c, AxesInput(c))); })
    .alias([](const InferCtx& c, const NoAttrs&) { return TensorList{View(c, AxesInput(c))}; })
    .backward(ops::ReshapeGrad{});

}  // namespace singa
