// ScatterND: output = data, then each index tuple indices[i..., :] (length m,
// addressing the leading m axes of data) receives the slice updates[i..., ...]
// (shape data.shape[m:]), replacing what is there or combined with it by
// `reduction` (add, mul from opset 16; max, min from 18). Writes happen in
// row-major order of the tuples. Negative indices count from the end.
// https://onnx.ai/onnx/operators/onnx__ScatterND.html
#include <algorithm>

#include "ops/movement.h"

namespace singa {
namespace {

struct ScatterNDAttrs {
  std::string reduction = "none";
};

template <bool kMinMax>
SpecList Infer(const InferCtx& c, const ScatterNDAttrs& a) {
  const std::string& red = a.reduction;
  const bool minmax = kMinMax && (red == "max" || red == "min");
  SINGA_CHECK(red == "none" || red == "add" || red == "mul" || minmax, ShapeError,
              c.where() << ": reduction must be none, add, mul" << (kMinMax ? ", max or min" : "")
                        << ", got '" << red << "'");
  SINGA_CHECK(
      red == "none" || (c.dtype(0) != DType::kString && c.dtype(0) != DType::kBool), DTypeError,
      c.where() << ": reduction '" << red << "' needs numbers (" << c.inputs_string() << ")");
  const Shape& d = c.shape(0);
  const Shape& i = c.shape(1);
  const int64_t r = c.rank(0), q = c.rank(1);
  SINGA_CHECK(r >= 1 && q >= 1, ShapeError,
              c.where() << ": data and indices must have rank >= 1 (" << c.inputs_string() << ")");
  const int64_t m = i[q - 1];
  SINGA_CHECK(m >= 1 && m <= r, ShapeError,
              c.where() << ": the last axis of indices (" << m << ") must be in [1, " << r << "] ("
                        << c.inputs_string() << ")");
  Shape want(i.begin(), i.end() - 1);
  want.insert(want.end(), d.begin() + m, d.end());
  SINGA_CHECK(c.shape(2) == want, ShapeError,
              c.where() << ": updates must have shape " << ToString(want) << " ("
                        << c.inputs_string() << ")");
  return {{c.dtype(0), d}};
}

void Forward(KernelCtx& k, const ScatterNDAttrs& a) {
  const Tensor& y = k.output(0);
  cpu::ConvertCopy(k.input(0), y);
  const Tensor& indices = k.input(1);
  const Shape& d = y.shape();
  const int64_t m = indices.shape().back();
  int64_t slice = 1;
  for (size_t j = m; j < d.size(); ++j) slice *= d[j];
  const std::vector<int64_t> idx = indices.ToVector<int64_t>();
  const int64_t tuples = static_cast<int64_t>(idx.size()) / m;
  std::vector<int64_t> off(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t o = 0;
    for (int64_t j = 0; j < m; ++j) {
      int64_t v = idx[t * m + j];
      SINGA_CHECK(v >= -d[j] && v < d[j], ShapeError,
                  "ScatterND: index " << v << " is out of range for axis " << j << " of data "
                                      << y.ToString());
      if (v < 0) v += d[j];
      o = o * d[j] + v;
    }
    off[t] = o * slice;
  }
  if (y.numel() == 0 || tuples == 0) return;
  const Tensor u = k.input(2).Contiguous();
  if (a.reduction == "none") {
    ops::VisitElementSize(
        y.dtype(),
        [&]<class E>(Tag<E>) {
          E* out = static_cast<E*>(y.raw_data());
          const E* upd = static_cast<const E*>(u.raw_data());
          for (int64_t t = 0; t < tuples; ++t)
            std::copy(upd + t * slice, upd + (t + 1) * slice, out + off[t]);
        },
        "ScatterND");
    return;
  }
  VisitNumeric(
      y.dtype(),
      [&]<class T>(Tag<T>) {
        using A = Acc<T>;
        T* out = y.data<T>();
        const T* upd = u.data<T>();
        auto apply = [&](auto f) {
          for (int64_t t = 0; t < tuples; ++t)
            for (int64_t e = 0; e < slice; ++e) {
              T& o = out[off[t] + e];
              o = static_cast<T>(f(A(o), A(upd[t * slice + e])));
            }
        };
        if (a.reduction == "add")
          apply([](A x, A v) { return x + v; });
        else if (a.reduction == "mul")
          apply([](A x, A v) { return x * v; });
        else if (a.reduction == "max")
          apply([](A x, A v) { return std::max(x, v); });
        else
          apply([](A x, A v) { return std::min(x, v); });
      },
      "ScatterND");
}

// none: d data = dY with the written slices zeroed, d updates = dY read back
// there (GatherND); add: d data = dY, d updates the same.
// NOTE: with repeated tuples and no reduction only the last write reaches the
// output, yet every duplicate gets that slice's gradient (the spec leaves
// duplicates undefined).
TensorList Backward(const GradCtx& g, const ScatterNDAttrs& a) {
  SINGA_CHECK(a.reduction == "none" || a.reduction == "add", UnsupportedOp,
              g.op().name << ": no gradient for reduction '" << a.reduction << "'");
  const Tensor& dy = g.grad_output(0);
  const Tensor& idx = g.input(1);
  TensorList d(3);
  if (g.needs_grad(0))
    d[0] = a.reduction == "add"
               ? dy
               : Call1("ScatterND",
                       {dy, idx, Tensor::Zeros(g.input(2).shape(), dy.dtype(), dy.device())});
  if (g.needs_grad(2)) d[2] = Call1("GatherND", {dy, idx});
  return d;
}

}  // namespace

#define SINGA_SCATTER_ND(VERSION, TYPES, INFER, ...)         \
  SINGA_REGISTER_OP(ScatterND, ScatterNDAttrs)               \
      .since_opset(VERSION)                                  \
      .inputs({"data", "indices", "updates"})                \
      .outputs({"output"}) __VA_ARGS__.dtypes(TYPES, {0, 2}) \
      .dtypes({DType::kInt64}, {1})                          \
      .infer(INFER)                                          \
      .kernel(Forward)                                       \
      .backward(Backward)

SINGA_SCATTER_ND(11, ops::kAllButBFloat16, Infer<false>);
// 13 added bfloat16; 16 the reduction attribute (add, mul); 18 max and min.
SINGA_SCATTER_ND(13, dtypes::kAll, Infer<false>);
SINGA_SCATTER_ND(16, dtypes::kAll, Infer<false>, .attr("reduction", &ScatterNDAttrs::reduction));
SINGA_SCATTER_ND(18, dtypes::kAll, Infer<true>, .attr("reduction", &ScatterNDAttrs::reduction));
#undef SINGA_SCATTER_ND

}  // namespace singa
