// Unsqueeze: inserts size-1 axes at the listed positions of the output.
// Opset 13 moved `axes` from an attribute to an input (opsets 1-10 only
// reject negative axes: the attribute schema serves them). The output is a view of
// the input.
// https://onnx.ai/onnx/operators/onnx__Unsqueeze.html
#include "ops/movement.h"

namespace singa {
namespace {

struct UnsqueezeAttrs {
  std::vector<int64_t> axes;
};

// Views only restride, so shape inference builds the view too: it touches no data.
Tensor View(const InferCtx& c, const std::vector<int64_t>& given) {
  const int64_t out_rank = c.rank(0) + static_cast<int64_t>(given.size());
  std::vector<int64_t> axes;
  for (int64_t v : given) axes.push_back(ops::CheckAxis(c, v, out_rank));
  ops::CheckDistinctAxes(c, axes);
  // Inserting in ascending order puts every axis at its final position.
  std::sort(axes.begin(), axes.end());
  Tensor t = c.input(0);
  for (int64_t d : axes) t = t.Unsqueeze(d);
  return t;
}

SpecList Spec(const Tensor& view) { return {{view.dtype(), view.shape()}}; }

}  // namespace

SINGA_REGISTER_OP(Unsqueeze, UnsqueezeAttrs)
    .since_opset(1)
    .inputs({"data"})
    .outputs({"expanded"})
    .attr("axes", &UnsqueezeAttrs::axes, /*required=*/true)
    .dtypes(ops::AnyDType())
    .infer([](const InferCtx& c, const UnsqueezeAttrs& a) { return Spec(View(c, a.axes)); })
    .alias([](const InferCtx& c, const UnsqueezeAttrs& a) { return TensorList{View(c, a.axes)}; })
    .backward(ops::ReshapeGrad{})
    .upgrade([](ExportCtx& c, const UnsqueezeAttrs& a) {  // 13: axes an input
      AddWithInputs(c, {c.AddInts(a.axes, "axes")}, {"axes"});
    });
SINGA_REGISTER_OP(Unsqueeze, NoAttrs)
    .since_opset(13)
    .inputs({"data", "axes"})
    .outputs({"expanded"})
    .dtypes(ops::AnyDType())
    .dtypes({DType::kInt64}, {1})
    .host_inputs({1})
    .infer([](const InferCtx& c, const NoAttrs&) { return Spec(View(c, ops::ReadInts(c, 1))); })
    .alias([](const InferCtx& c, const NoAttrs&) {
      return TensorList{View(c, ops::ReadInts(c, 1))};
    })
    .backward(ops::ReshapeGrad{});

}  // namespace singa
