// MaxUnpool: the partial inverse of MaxPool. X [N, C, D1..Dk] and I (X's
// shape: MaxPool's Indices, flat positions in the unpooled tensor) give the
// unpooled tensor of spatial sizes (D - 1) * stride - pad_begin - pad_end +
// kernel, zero but for Y.flat[I[j]] = X.flat[j]. With output_shape (an input,
// of Y's rank) that tensor sits at the start of a zero Y of that shape (as
// onnx's reference computes it: the indices address the unpooled shape).
// Backward: dX = dY's unpooled part gathered at I.
// https://onnx.ai/onnx/operators/onnx__MaxUnpool.html
#include "ops/common.h"

namespace singa {
namespace {

struct MaxUnpoolAttrs {
  std::vector<int64_t> kernel_shape;
  std::vector<int64_t> pads;
  std::vector<int64_t> strides;
};

Shape Unpooled(const InferCtx& c, const MaxUnpoolAttrs& a) {
  const Shape& x = c.shape(0);
  SINGA_CHECK(x.size() >= 3 && x.size() <= 5, ShapeError,
              c.where() << ": X must have 1 to 3 spatial dimensions (" << c.inputs_string() << ")");
  SINGA_CHECK(c.shape(1) == x, ShapeError,
              c.where() << ": I must have X's shape (" << c.inputs_string() << ")");
  const size_t nd = x.size() - 2;
  SINGA_CHECK(a.kernel_shape.size() == nd && (a.strides.empty() || a.strides.size() == nd) &&
                  (a.pads.empty() || a.pads.size() == 2 * nd),
              ShapeError,
              c.where() << ": kernel_shape, strides and pads must have " << nd << ", " << nd
                        << " and " << 2 * nd << " values (" << c.inputs_string() << ")");
  Shape y = {x[0], x[1]};
  for (size_t i = 0; i < nd; ++i) {
    const int64_t s = a.strides.empty() ? 1 : a.strides[i];
    const int64_t pads = a.pads.empty() ? 0 : a.pads[i] + a.pads[nd + i];
    const int64_t o = (x[2 + i] - 1) * s - pads + a.kernel_shape[i];
    SINGA_CHECK(o >= 0, ShapeError,
                c.where() << ": the unpooled spatial dim " << i << " would be " << o << " ("
                          << c.inputs_string() << ")");
    y.push_back(x[2 + i] == 0 ? 0 : o);
  }
  return y;
}

SpecList Infer(const InferCtx& c, const MaxUnpoolAttrs& a) {
  const Shape u = Unpooled(c, a);
  if (!c.has_input(2)) return {{c.dtype(0), u}};
  const std::vector<int64_t> out = ops::ReadInts(c, 2);
  SINGA_CHECK(out.size() == u.size(), ShapeError,
              c.where() << ": output_shape must have " << u.size() << " values ("
                        << c.inputs_string() << ")");
  for (size_t i = 0; i < u.size(); ++i)
    SINGA_CHECK(i < 2 ? out[i] == u[i] : out[i] >= u[i], ShapeError,
                c.where() << ": output_shape " << ToString(Shape(out))
                          << " is smaller than the unpooled shape " << ToString(u) << " ("
                          << c.inputs_string() << ")");
  return {{c.dtype(0), Shape(out)}};
}

void Forward(KernelCtx& k, const MaxUnpoolAttrs& a) {
  const Tensor& y = k.output(0);
  Tensor(y).Fill(0);
  if (y.empty() || k.input(0).empty()) return;
  static const OpSchema& schema = OpRegistry::Get("MaxUnpool");
  const Shape u = Unpooled(InferCtx(schema, k.inputs, 1, ""), a);
  const int64_t total = NumElements(u);
  // The unpooled tensor is a view of Y's start.
  Tensor view = y;
  for (size_t d = 0; d < u.size(); ++d) view = view.Slice(static_cast<int64_t>(d), 0, u[d]);
  Tensor dense = Tensor::Zeros(u, y.dtype());
  const std::vector<int64_t> idx = k.input(1).ToVector<int64_t>();
  const Tensor x = k.input(0).Contiguous();
  VisitNumeric(y.dtype(), [&]<class T>(Tag<T>) {
    const T* px = x.data<T>();
    T* pd = dense.data<T>();
    for (size_t j = 0; j < idx.size(); ++j) {
      SINGA_CHECK(
          idx[j] >= 0 && idx[j] < total, ShapeError,
          "MaxUnpool: index " << idx[j] << " is outside the unpooled shape " << ToString(u));
      pd[idx[j]] = px[j];
    }
  });
  cpu::ConvertCopy(dense, view);
}

TensorList Backward(const GradCtx& g, const MaxUnpoolAttrs& a) {
  static const OpSchema& schema = OpRegistry::Get("MaxUnpool");
  const TensorList xi = {g.input(0), g.input(1)};
  const Shape u = Unpooled(InferCtx(schema, xi, 1, ""), a);
  Tensor part = g.grad_output(0);
  for (size_t d = 0; d < u.size(); ++d) part = part.Slice(static_cast<int64_t>(d), 0, u[d]);
  TensorList d(g.num_inputs());
  d[0] = Call1("Gather", {part.Reshape({NumElements(u)}), g.input(1)});
  return d;
}

}  // namespace

SINGA_REGISTER_OP(MaxUnpool, MaxUnpoolAttrs)
    .since_opset(9)
    .inputs({"X", "I", "output_shape?"})
    .outputs({"output"})
    .attr("kernel_shape", &MaxUnpoolAttrs::kernel_shape, true)
    .attr("pads", &MaxUnpoolAttrs::pads)
    .attr("strides", &MaxUnpoolAttrs::strides)
    .dtypes(dtypes::kFloats, {0})
    .dtypes({DType::kInt64}, {1})
    .dtypes({DType::kInt64}, {2})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
