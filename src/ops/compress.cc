// Compress: the slices of `input` along `axis` (no axis: the elements of the
// flattened input) whose entry of the 1-D bool `condition` is true; a
// condition shorter than the axis selects nothing past its end. The gradient
// goes back to the selected positions (zeros elsewhere).
// https://onnx.ai/onnx/operators/onnx__Compress.html
#include <numeric>
#include <optional>

#include "ops/movement.h"
#include "ops/scatter_grad.h"

namespace singa {
namespace {

struct CompressAttrs {
  std::optional<int64_t> axis;
};

std::vector<int64_t> Selected(const Tensor& condition) {
  const std::vector<uint8_t> c = condition.ToVector<uint8_t>();
  std::vector<int64_t> sel;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i]) sel.push_back(static_cast<int64_t>(i));
  return sel;
}

SpecList Infer(const InferCtx& c, const CompressAttrs& a) {
  SINGA_CHECK(c.rank(1) == 1, ShapeError,
              c.where() << ": condition must be 1-D (" << c.inputs_string() << ")");
  const int64_t rank = c.rank(0);
  int64_t n = c.input(0).numel();
  if (a.axis) {
    SINGA_CHECK(*a.axis >= -rank && *a.axis < rank, ShapeError,
                c.where() << ": axis " << *a.axis << " is out of range for rank " << rank << " ("
                          << c.inputs_string() << ")");
    n = c.shape(0)[*a.axis < 0 ? *a.axis + rank : *a.axis];
  }
  const std::vector<int64_t> sel = Selected(c.value(1));
  // A longer condition is fine while its extra entries are false (numpy's rule).
  SINGA_CHECK(sel.empty() || sel.back() < n, ShapeError,
              c.where() << ": condition selects index " << sel.back() << ", out of range for "
                        << (a.axis ? "the axis" : "the flattened input") << " of length " << n
                        << " (" << c.inputs_string() << ")");
  const int64_t k = static_cast<int64_t>(sel.size());
  if (!a.axis) return {{c.dtype(0), {k}}};
  Shape out = c.shape(0);
  out[*a.axis < 0 ? *a.axis + rank : *a.axis] = k;
  return {{c.dtype(0), out}};
}

void Forward(KernelCtx& k, const CompressAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const std::vector<int64_t> sel = Selected(k.input(1));
  Tensor x = k.input(0);
  int64_t axis = 0;
  if (a.axis) {
    axis = *a.axis < 0 ? *a.axis + x.ndim() : *a.axis;
  } else {
    x = x.Contiguous().Reshape({x.numel()});
  }
  std::vector<std::vector<int64_t>> maps;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    if (d == axis) {
      maps.push_back(sel);
    } else {
      std::vector<int64_t> m(x.shape()[d]);
      std::iota(m.begin(), m.end(), int64_t{0});
      maps.push_back(std::move(m));
    }
  }
  ops::GatherAxes(x, y, maps, "Compress");
}

TensorList Backward(const GradCtx& g, const CompressAttrs& a) {
  const Tensor& x = g.input(0);
  const std::vector<int64_t> sel = Selected(g.input(1));
  const Tensor& dy = g.grad_output(0);
  if (a.axis) {
    const int64_t axis = *a.axis < 0 ? *a.axis + x.ndim() : *a.axis;
    return {ops::IndexAddAlong(dy, axis, sel, x.shape()[axis]), Tensor()};
  }
  // Flattened: the positions are distinct, so a scatter places each once.
  const int64_t k = static_cast<int64_t>(sel.size());
  const Tensor idx = Tensor::FromVector<int64_t>({k}, sel);
  const Tensor flat = Call1("ScatterElements", {Tensor::Zeros({x.numel()}, dy.dtype(), dy.device()),
                                                idx, dy.Reshape({k})});
  return {flat.Reshape(x.shape()), Tensor()};
}

}  // namespace

// 11 allowed negative axes; 28 added bfloat16.
[[maybe_unused]] static const bool kCompress = RegisterVersions<CompressAttrs>(
    "Compress", {9, 11, 28}, [](OpBuilder<CompressAttrs>& b, int v) {
      b.inputs({"input", "condition"})
          .outputs({"output"})
          .attr("axis", &CompressAttrs::axis)
          .dtypes(v >= 28 ? dtypes::kAll : ops::kAllButBFloat16, {0})
          .dtypes({DType::kBool}, {1})
          .infer(Infer)
          .kernel(Forward)
          .backward(Backward);
    });

}  // namespace singa
