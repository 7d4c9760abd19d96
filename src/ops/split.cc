// Split: cuts the input along `axis` into consecutive parts, of the lengths
// in `split` (an attribute before opset 13, an input since) or equal ones.
// Opset 18 adds `num_outputs`, where the last part may be shorter. Opsets 2-10
// differ from 11 only in rejecting a negative axis: one schema serves them.
// https://onnx.ai/onnx/operators/onnx__Split.html
#include "ops/movement.h"
#include "singa/ops/export_ctx.h"

namespace singa {
namespace {

struct SplitAttrs {
  int64_t axis = 0;
  std::optional<std::vector<int64_t>> split;  // opset 11
  std::optional<int64_t> num_outputs;         // opset 18
};

std::vector<int64_t> Lengths(const InferCtx& c, const SplitAttrs& a, int64_t axis) {
  const int64_t dim = c.shape(0)[axis];
  const int64_t n = c.num_outputs();
  std::optional<std::vector<int64_t>> split = a.split;
  if (c.has_input(1)) split = ops::ReadInts(c, 1);
  if (split) {
    SINGA_CHECK(
        !a.num_outputs, ShapeError,
        c.where() << ": give `split` or `num_outputs`, not both (" << c.inputs_string() << ")");
    int64_t sum = 0;
    for (int64_t v : *split) {
      SINGA_CHECK(v >= 0, ShapeError,
                  c.where() << ": split " << ToString(*split) << " has a negative length ("
                            << c.inputs_string() << ")");
      sum += v;
    }
    SINGA_CHECK(sum == dim, ShapeError,
                c.where() << ": split " << ToString(*split) << " sums to " << sum
                          << ", not the size " << dim << " of axis " << axis << " ("
                          << c.inputs_string() << ")");
    SINGA_CHECK(static_cast<int64_t>(split->size()) == n, ShapeError,
                c.where() << ": split " << ToString(*split) << " has " << split->size()
                          << " parts but " << n << " outputs are requested (" << c.inputs_string()
                          << ")");
    return *split;
  }
  if (a.num_outputs) {
    SINGA_CHECK(*a.num_outputs >= 1 && *a.num_outputs == n, ShapeError,
                c.where() << ": num_outputs is " << *a.num_outputs << " but " << n
                          << " outputs are requested (" << c.inputs_string() << ")");
    // Parts of ceil(dim / n); the last one takes what is left.
    const int64_t part = (dim + n - 1) / n;
    std::vector<int64_t> lengths;
    for (int64_t i = 0, left = dim; i < n; ++i, left -= part)
      lengths.push_back(std::max<int64_t>(0, std::min(part, left)));
    return lengths;
  }
  SINGA_CHECK(dim % n == 0, ShapeError,
              c.where() << ": axis " << axis << " of size " << dim << " does not split into " << n
                        << " equal parts (" << c.inputs_string() << ")");
  return std::vector<int64_t>(n, dim / n);
}

SpecList Infer(const InferCtx& c, const SplitAttrs& a) {
  const int64_t axis = ops::CheckAxis(c, a.axis, c.rank(0));
  SpecList out;
  for (int64_t len : Lengths(c, a, axis)) {
    Shape s = c.shape(0);
    s[axis] = len;
    out.push_back({c.dtype(0), s});
  }
  return out;
}

// kCopy: cpu::ConvertCopy, or cuda::Copy on a GPU.
template <auto kCopy>
void Forward(KernelCtx& k, const SplitAttrs& a) {
  const Tensor& x = k.input(0);
  const int64_t axis = a.axis < 0 ? a.axis + x.ndim() : a.axis;
  int64_t offset = 0;
  for (int i = 0; i < k.num_outputs(); ++i) {
    const int64_t n = k.output(i).shape()[axis];
    kCopy(x.Slice(axis, offset, offset + n), k.output(i));
    offset += n;
  }
}

// The input's gradient joins the outputs' gradients (zeros where an output
// got none).
TensorList Backward(const GradCtx& g, const SplitAttrs& a) {
  const Tensor& x = g.input(0);
  const int64_t axis = a.axis < 0 ? a.axis + x.ndim() : a.axis;
  TensorList parts;
  for (int i = 0; i < g.num_outputs(); ++i) {
    const Tensor& dy = g.grad_output(i);
    parts.push_back(dy.defined() ? dy : Tensor::Zeros(g.output(i).shape(), x.dtype(), x.device()));
  }
  TensorList d(g.num_inputs());
  d[0] = Call1("Concat", parts, {{"axis", axis}});
  return d;
}

// Opset 18 wants `split` or `num_outputs`; ours splits equally into the
// outputs asked for when neither is given, which num_outputs says.
void Export18(ExportCtx& c, const SplitAttrs& a) {
  if (a.num_outputs || (c.num_inputs() > 1 && !c.input_name(1).empty())) return c.AddDefault();
  AttrMap attrs = c.attrs();
  attrs["num_outputs"] = static_cast<int64_t>(c.num_outputs());
  std::vector<std::string> out;
  for (int i = 0; i < c.num_outputs(); ++i) out.push_back(c.output_name(i));
  c.AddNode("Split", {c.input_name(0)}, out, attrs);
}

// 13: `split` an input; 18 wants num_outputs for equal parts.
void Upgrade2(ExportCtx& c, const SplitAttrs& a) {
  AttrMap attrs = c.attrs();
  attrs.erase("split");
  std::vector<std::string> in = {c.input_name(0)};
  if (a.split)
    in.push_back(c.AddInts(*a.split, "split"));
  else if (c.opset() >= 18)
    attrs["num_outputs"] = static_cast<int64_t>(c.num_outputs());
  c.AddNode("Split", in, c.output_names(), attrs);
}

}  // namespace

// 13 made `split` an input, 18 added num_outputs.
[[maybe_unused]] static const bool kSplit =
    RegisterVersions<SplitAttrs>("Split", {2, 13, 18}, [](OpBuilder<SplitAttrs>& b, int v) {
      b.outputs({"outputs..."})
          .attr("axis", &SplitAttrs::axis)
          .dtypes(dtypes::kAll, {0})
          .infer(Infer)
          .kernel(Forward<cpu::ConvertCopy>) SINGA_CUDA_KERNEL(Forward<cuda::Copy>, ops::kCudaCopy)
          .backward(Backward);
      if (v >= 13)
        b.inputs({"input", "split?"}).dtypes({DType::kInt64}, {1}).host_inputs({1});
      else
        b.inputs({"input"}).attr("split", &SplitAttrs::split).upgrade(Upgrade2);
      if (v >= 18) b.attr("num_outputs", &SplitAttrs::num_outputs).to_onnx(Export18);
    });

}  // namespace singa
