// ScatterElements: output = data, then output[..., indices[i], ...] =
// updates[i] for every element i of indices (the index replacing the
// coordinate along `axis`), or combined with what is there by `reduction`
// (add, mul from opset 16; max, min from 18). Scatter (opset 9, deprecated in
// 11) is ScatterElements without reduction. Writes happen in row-major order
// of indices, so with repeated indices and no reduction the last one wins.
// https://onnx.ai/onnx/operators/onnx__ScatterElements.html
// https://onnx.ai/onnx/operators/onnx__Scatter.html
#include <algorithm>

#include "ops/elements.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

struct ScatterAttrs {
  int64_t axis = 0;
  std::string reduction = "none";
};

// kMinMax: opset 18 added max and min to the reductions.
template <bool kMinMax>
SpecList Infer(const InferCtx& c, const ScatterAttrs& a) {
  const std::string& r = a.reduction;
  const bool minmax = kMinMax && (r == "max" || r == "min");
  SINGA_CHECK(r == "none" || r == "add" || r == "mul" || minmax, ShapeError,
              c.where() << ": reduction must be none, add, mul" << (kMinMax ? ", max or min" : "")
                        << ", got '" << r << "'");
  SINGA_CHECK(r == "none" || c.dtype(0) != DType::kString, DTypeError,
              c.where() << ": reduction '" << r << "' needs numbers (" << c.inputs_string() << ")");
  ops::CheckElementsShapes(c, a.axis, 1);
  SINGA_CHECK(
      c.shape(2) == c.shape(1), ShapeError,
      c.where() << ": updates must have the shape of indices (" << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}

template <class T, class F>
void Apply(T* out, const T* upd, const std::vector<int64_t>& off, F f) {
  // Sequential: repeated indices must combine in order.
  for (size_t i = 0; i < off.size(); ++i) out[off[i]] = f(out[off[i]], upd[i]);
}

void Forward(KernelCtx& k, const ScatterAttrs& a) {
  const Tensor& y = k.output(0);
  cpu::ConvertCopy(k.input(0), y);
  if (k.input(1).numel() == 0) return;
  const int64_t axis = a.axis < 0 ? a.axis + y.ndim() : a.axis;
  const std::vector<int64_t> off =
      ops::ElementOffsets(y.shape(), k.input(1), axis, "ScatterElements");
  const Tensor u = k.input(2).Contiguous();
  if (a.reduction == "none") {
    ops::VisitElementSize(
        y.dtype(),
        [&]<class T>(Tag<T>) {
          Apply(static_cast<T*>(y.raw_data()), static_cast<const T*>(u.raw_data()), off,
                [](const T&, const T& v) { return v; });
        },
        "ScatterElements");
    return;
  }
  VisitDType(
      y.dtype(),
      [&]<class T>(Tag<T>) {
        using A = std::conditional_t<std::is_same_v<T, bool>, bool, Acc<T>>;
        T* out = y.data<T>();
        const T* upd = u.data<T>();
        if (a.reduction == "add")
          Apply(out, upd, off, [](T x, T v) { return static_cast<T>(A(x) + A(v)); });
        else if (a.reduction == "mul")
          Apply(out, upd, off, [](T x, T v) { return static_cast<T>(A(x) * A(v)); });
        else if (a.reduction == "max")
          Apply(out, upd, off, [](T x, T v) { return static_cast<T>(std::max(A(x), A(v))); });
        else
          Apply(out, upd, off, [](T x, T v) { return static_cast<T>(std::min(A(x), A(v))); });
      },
      "ScatterElements");
}

// none: d data = dY with the written positions zeroed, d updates = dY read
// back at them (GatherElements); add: d data = dY, d updates the same.
// NOTE: with repeated indices and no reduction only the last write reaches
// the output, yet every duplicate gets that position's gradient (the spec
// leaves the result with duplicates undefined).
TensorList Backward(const GradCtx& g, const ScatterAttrs& a) {
  SINGA_CHECK(a.reduction == "none" || a.reduction == "add", UnsupportedOp,
              g.op().name << ": no gradient for reduction '" << a.reduction << "'");
  const Tensor& dy = g.grad_output(0);
  const Tensor& idx = g.input(1);
  TensorList d(3);
  if (g.needs_grad(0))
    d[0] = a.reduction == "add"
               ? dy
               : Call1("ScatterElements",
                       {dy, idx, Tensor::Zeros(idx.shape(), dy.dtype(), dy.device())},
                       {{"axis", a.axis}});
  if (g.needs_grad(2)) d[2] = Call1("GatherElements", {dy, idx}, {{"axis", a.axis}});
  return d;
}

const std::vector<DType> kIndex = {DType::kInt32, DType::kInt64};
}  // namespace

#define SINGA_SCATTER(NAME, VERSION, TYPES, INFER, ...)                    \
  SINGA_REGISTER_OP(NAME, ScatterAttrs)                                    \
      .since_opset(VERSION)                                                \
      .inputs({"data", "indices", "updates"})                              \
      .outputs({"output"})                                                 \
      .attr("axis", &ScatterAttrs::axis) __VA_ARGS__.dtypes(TYPES, {0, 2}) \
      .dtypes(kIndex, {1})                                                 \
      .infer(INFER)                                                        \
      .kernel(Forward)                                                     \
      .backward(Backward)

// Removed in 11: ScatterElements is the same op.
SINGA_SCATTER(Scatter, 9, ops::kAllButBFloat16, Infer<false>)
    .removed_in(11)
    .upgrade([](ExportCtx& c, const ScatterAttrs&) {
      c.AddNode("ScatterElements", c.input_names(), c.output_names(), c.attrs());
    });
SINGA_SCATTER(ScatterElements, 11, ops::kAllButBFloat16, Infer<false>);
// 13 added bfloat16; 16 the reduction attribute (add, mul); 18 max and min.
SINGA_SCATTER(ScatterElements, 13, dtypes::kAll, Infer<false>);
SINGA_SCATTER(ScatterElements, 16, dtypes::kAll, Infer<false>,
              .attr("reduction", &ScatterAttrs::reduction));
SINGA_SCATTER(ScatterElements, 18, dtypes::kAll, Infer<true>,
              .attr("reduction", &ScatterAttrs::reduction));

}  // namespace singa
