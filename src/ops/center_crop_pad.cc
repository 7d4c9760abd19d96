// CenterCropPad: each of `axes` (default: all) is cropped or zero-padded to
// the length in `shape`, centered: a crop starts at (dim - len) / 2 and a pad
// puts the input at (len - dim) / 2 (floors). The backward is the same op
// back to the input's lengths (the crop and the pad are each other's adjoint).
// https://onnx.ai/onnx/operators/onnx__CenterCropPad.html
#include "ops/movement.h"

namespace singa {
namespace {

struct CenterCropPadAttrs {
  std::vector<int64_t> axes;
};

std::vector<int64_t> Axes(const CenterCropPadAttrs& a, int64_t rank) {
  std::vector<int64_t> axes = a.axes;
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
  for (int64_t& d : axes)
    if (d < 0) d += rank;
  return axes;
}

Shape OutShape(const Shape& x, const std::vector<int64_t>& axes, const std::vector<int64_t>& len) {
  Shape out = x;
  for (size_t i = 0; i < axes.size(); ++i) out[axes[i]] = len[i];
  return out;
}

SpecList Infer(const InferCtx& c, const CenterCropPadAttrs& a) {
  const int64_t rank = c.rank(0);
  for (int64_t d : a.axes)
    SINGA_CHECK(d >= -rank && d < rank, ShapeError,
                c.where() << ": axis " << d << " is out of range for rank " << rank << " ("
                          << c.inputs_string() << ")");
  const std::vector<int64_t> axes = Axes(a, rank);
  ops::CheckDistinctAxes(c, axes);
  const std::vector<int64_t> len = ops::ReadInts(c, 1);
  SINGA_CHECK(len.size() == axes.size(), ShapeError,
              c.where() << ": shape has " << len.size() << " values for " << axes.size()
                        << " axes (" << c.inputs_string() << ")");
  for (int64_t l : len)
    SINGA_CHECK(l >= 0, ShapeError,
                c.where() << ": shape has a negative length (" << c.inputs_string() << ")");
  return {{c.dtype(0), OutShape(c.shape(0), axes, len)}};
}

void Forward(KernelCtx& k, const CenterCropPadAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const Tensor& x = k.input(0);
  // Zero everything, then copy the overlap (a crop of x into a window of y).
  ops::VisitElementSize(
      y.dtype(),
      [&]<class E>(Tag<E>) { std::fill_n(static_cast<E*>(y.raw_data()), y.numel(), E{}); },
      "CenterCropPad");
  Tensor src = x, dst = y;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    const int64_t dim = x.shape()[d], len = y.shape()[d];
    if (len < dim) src = src.Slice(d, (dim - len) / 2, (dim - len) / 2 + len);
    if (len > dim) dst = dst.Slice(d, (len - dim) / 2, (len - dim) / 2 + dim);
  }
  if (src.numel() > 0) cpu::ConvertCopy(src, dst);
}

TensorList Backward(const GradCtx& g, const CenterCropPadAttrs& a) {
  const Tensor& x = g.input(0);
  const std::vector<int64_t> axes = Axes(a, x.ndim());
  std::vector<int64_t> len;
  for (int64_t d : axes) len.push_back(x.shape()[d]);
  const Tensor shape = Tensor::FromVector<int64_t>({static_cast<int64_t>(len.size())}, len);
  return {Call1("CenterCropPad", {g.grad_output(0), shape}, {{"axes", axes}}), Tensor()};
}

}  // namespace

SINGA_REGISTER_OP(CenterCropPad, CenterCropPadAttrs)
    .since_opset(18)
    .inputs({"input_data", "shape"})
    .outputs({"output_data"})
    .attr("axes", &CenterCropPadAttrs::axes)
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt32, DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
