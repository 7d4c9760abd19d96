// GatherND: output[b..., i...] = data[b..., indices[b..., i..., :]...], the
// last axis of indices (length m) addressing the leading m axes of data after
// the batch_dims shared batch axes; each index picks the slice of the axes
// left. Output shape: indices.shape[:-1] + data.shape[batch_dims + m:].
// Negative indices count from the end. The data's gradient is ScatterND
// (add) of the output's gradient at the same places.
// https://onnx.ai/onnx/operators/onnx__GatherND.html
#include "ops/movement.h"

namespace singa {
namespace {

struct GatherNDAttrs {
  int64_t batch_dims = 0;
};

SpecList Infer(const InferCtx& c, const GatherNDAttrs& a) {
  const Shape& d = c.shape(0);
  const Shape& i = c.shape(1);
  const int64_t r = c.rank(0), q = c.rank(1), b = a.batch_dims;
  SINGA_CHECK(r >= 1 && q >= 1, ShapeError,
              c.where() << ": data and indices must have rank >= 1 (" << c.inputs_string() << ")");
  SINGA_CHECK(b >= 0 && b < std::min(r, q), ShapeError,
              c.where() << ": batch_dims " << b << " must be in [0, min(rank(data), rank(indices)))"
                        << " (" << c.inputs_string() << ")");
  for (int64_t k = 0; k < b; ++k)
    SINGA_CHECK(
        d[k] == i[k], ShapeError,
        c.where() << ": the batch axes of data and indices differ (" << c.inputs_string() << ")");
  const int64_t m = i[q - 1];
  SINGA_CHECK(m >= 1 && m <= r - b, ShapeError,
              c.where() << ": the last axis of indices (" << m << ") must be in [1, " << r - b
                        << "] (" << c.inputs_string() << ")");
  Shape out(i.begin(), i.end() - 1);
  out.insert(out.end(), d.begin() + b + m, d.end());
  return {{c.dtype(0), out}};
}

// Element offsets (into dense data) of the slices the index tuples pick, and
// the slice size. Also used to build the gradient's full indices.
struct Picks {
  std::vector<int64_t> offsets;
  int64_t slice = 1;
};

Picks Pick(const Shape& d, const Tensor& indices, int64_t b, const char* op) {
  const int64_t r = static_cast<int64_t>(d.size());
  const int64_t m = indices.shape().back();
  int64_t batch = 1, per_batch_data = 1;
  for (int64_t k = 0; k < b; ++k) batch *= d[k];
  for (int64_t k = b; k < r; ++k) per_batch_data *= d[k];
  Picks p;
  for (int64_t k = b + m; k < r; ++k) p.slice *= d[k];
  const std::vector<int64_t> idx = indices.ToVector<int64_t>();
  const int64_t tuples = static_cast<int64_t>(idx.size()) / m;
  const int64_t per_batch = batch ? tuples / batch : 0;
  p.offsets.resize(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0;
    for (int64_t j = 0; j < m; ++j) {
      int64_t v = idx[t * m + j];
      const int64_t n = d[b + j];
      SINGA_CHECK(v >= -n && v < n, ShapeError,
                  op << ": index " << v << " is out of range for axis " << b + j << " of data "
                     << ToString(d));
      if (v < 0) v += n;
      off = off * n + v;
    }
    p.offsets[t] = (per_batch ? t / per_batch : 0) * per_batch_data + off * p.slice;
  }
  return p;
}

void Forward(KernelCtx& k, const GatherNDAttrs& a) {
  const Tensor& y = k.output(0);
  const Tensor x = k.input(0).Contiguous();
  const Picks p = Pick(x.shape(), k.input(1), a.batch_dims, "GatherND");
  if (y.numel() == 0) return;
  ops::VisitElementSize(
      y.dtype(),
      [&]<class E>(Tag<E>) {
        const E* in = static_cast<const E*>(x.raw_data());
        E* out = static_cast<E*>(y.raw_data());
        const int64_t s = p.slice;
        ParallelFor(0, static_cast<int64_t>(p.offsets.size()),
                    std::max<int64_t>(1, cpu::kElementwiseGrain / std::max<int64_t>(s, 1)),
                    [&](int64_t lo, int64_t hi) {
                      for (int64_t t = lo; t < hi; ++t)
                        std::copy(in + p.offsets[t], in + p.offsets[t] + s, out + t * s);
                    });
      },
      "GatherND");
}

// With batch axes, the indices gain the batch coordinates in front so that
// ScatterND (which has no batch_dims) adds each slice back where it came from.
TensorList Backward(const GradCtx& g, const GatherNDAttrs& a) {
  const Tensor& x = g.input(0);
  const Tensor& indices = g.input(1);
  Tensor full = indices;
  const int64_t b = a.batch_dims;
  if (b > 0) {
    const int64_t m = indices.shape().back();
    const std::vector<int64_t> idx = indices.ToVector<int64_t>();
    const int64_t tuples = static_cast<int64_t>(idx.size()) / m;
    int64_t batch = 1;
    for (int64_t k = 0; k < b; ++k) batch *= x.shape()[k];
    const int64_t per_batch = batch ? tuples / batch : 0;
    std::vector<int64_t> v;
    v.reserve(tuples * (b + m));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t bi = per_batch ? t / per_batch : 0;
      std::vector<int64_t> coords(b);
      for (int64_t k = b - 1; k >= 0; --k) {
        coords[k] = bi % x.shape()[k];
        bi /= x.shape()[k];
      }
      v.insert(v.end(), coords.begin(), coords.end());
      v.insert(v.end(), idx.begin() + t * m, idx.begin() + (t + 1) * m);
    }
    Shape s = indices.shape();
    s.back() = b + m;
    full = Tensor::FromVector<int64_t>(s, v);
  }
  const Tensor zeros = Tensor::Zeros(x.shape(), x.dtype(), x.device());
  return {Call1("ScatterND", {zeros, full, g.grad_output(0)}, {{"reduction", std::string("add")}}),
          Tensor()};
}

}  // namespace

// 12 added batch_dims; 13 bfloat16.
[[maybe_unused]] static const bool kGatherND = RegisterVersions<GatherNDAttrs>(
    "GatherND", {11, 12, 13}, [](OpBuilder<GatherNDAttrs>& b, int v) {
      b.inputs({"data", "indices"})
          .outputs({"output"})
          .dtypes(v >= 13 ? dtypes::kAll : ops::kAllButBFloat16, {0})
          .dtypes({DType::kInt64}, {1})
          .infer(Infer)
          .kernel(Forward)
          .backward(Backward);
      if (v >= 12) b.attr("batch_dims", &GatherNDAttrs::batch_dims);
    });

}  // namespace singa
