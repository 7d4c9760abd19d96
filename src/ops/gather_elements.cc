// GatherElements: output[i_0, ..., i_{r-1}] = data[i_0, ..., indices[i], ...,
// i_{r-1}] (the index replacing the coordinate along `axis`); output has the
// shape of indices. Negative indices count from the end.
// https://onnx.ai/onnx/operators/onnx__GatherElements.html
#include "ops/elements.h"

namespace singa {
namespace {

struct GatherElementsAttrs {
  int64_t axis = 0;
};

SpecList Infer(const InferCtx& c, const GatherElementsAttrs& a) {
  ops::CheckElementsShapes(c, a.axis, 1);
  return {{c.dtype(0), c.shape(1)}};
}

void Forward(KernelCtx& k, const GatherElementsAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const Tensor x = k.input(0).Contiguous();
  const int64_t axis = a.axis < 0 ? a.axis + x.ndim() : a.axis;
  const std::vector<int64_t> off =
      ops::ElementOffsets(x.shape(), k.input(1), axis, "GatherElements");
  ops::VisitElementSize(
      x.dtype(),
      [&]<class T>(Tag<T>) {
        const T* in = static_cast<const T*>(x.raw_data());
        T* out = static_cast<T*>(y.raw_data());
        ParallelFor(0, y.numel(), cpu::kElementwiseGrain, [&](int64_t lo, int64_t hi) {
          for (int64_t i = lo; i < hi; ++i) out[i] = in[off[i]];
        });
      },
      "GatherElements");
}

// d data: dY added back where it was read from (a ScatterElements-add into
// zeros, so repeated indices accumulate).
TensorList Backward(const GradCtx& g, const GatherElementsAttrs& a) {
  TensorList d(2);
  const Tensor& x = g.input(0);
  d[0] = Call1("ScatterElements",
               {Tensor::Zeros(x.shape(), g.grad_output(0).dtype(), x.device()), g.input(1),
                g.grad_output(0)},
               {{"axis", a.axis}, {"reduction", std::string("add")}});
  return d;
}

const std::vector<DType> kIndex = {DType::kInt32, DType::kInt64};
}  // namespace

SINGA_REGISTER_OP(GatherElements, GatherElementsAttrs)
    .since_opset(11)
    .inputs({"data", "indices"})
    .outputs({"output"})
    .attr("axis", &GatherElementsAttrs::axis)
    .dtypes(ops::kAllButBFloat16, {0})
    .dtypes(kIndex, {1})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);
// 13 added bfloat16.
SINGA_REGISTER_OP(GatherElements, GatherElementsAttrs)
    .since_opset(13)
    .inputs({"data", "indices"})
    .outputs({"output"})
    .attr("axis", &GatherElementsAttrs::axis)
    .dtypes(dtypes::kAll, {0})
    .dtypes(kIndex, {1})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
