// TensorScatter: present = past, with update written along `axis` (the
// sequence axis) at write_indices[b] for each batch entry b (axis 0), linear
// or wrapping around (mode "circular"); a KV-cache update.
//   present[p..., (w[p0] + s) (mod L), ...] = update[p..., s, ...]
// https://onnx.ai/onnx/operators/onnx__TensorScatter.html
#include "ops/movement.h"

namespace singa {
namespace {

struct TensorScatterAttrs {
  int64_t axis = -2;
  std::string mode = "linear";
};

int64_t Axis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

SpecList Infer(const InferCtx& c, const TensorScatterAttrs& a) {
  SINGA_CHECK(a.mode == "linear" || a.mode == "circular", ShapeError,
              c.where() << ": mode must be linear or circular, got '" << a.mode << "'");
  const int64_t rank = c.rank(0);
  SINGA_CHECK(a.axis >= -rank && a.axis < rank && Axis(a.axis, rank) != 0, ShapeError,
              c.where() << ": axis " << a.axis << " must name a non-batch axis of rank " << rank
                        << " (" << c.inputs_string() << ")");
  const int64_t axis = Axis(a.axis, rank);
  const Shape &past = c.shape(0), &upd = c.shape(1);
  bool ok = c.rank(1) == rank;
  for (int64_t d = 0; ok && d < rank; ++d) ok = d == axis ? upd[d] <= past[d] : upd[d] == past[d];
  SINGA_CHECK(ok, ShapeError,
              c.where() << ": update must have past_cache's shape but for a shorter axis " << axis
                        << " (" << c.inputs_string() << ")");
  if (c.has_input(2))
    SINGA_CHECK(c.rank(2) == 1 && c.shape(2)[0] == past[0], ShapeError,
                c.where() << ": write_indices must hold one index per batch entry ("
                          << c.inputs_string() << ")");
  return {{c.dtype(0), past}};
}

void Forward(KernelCtx& k, const TensorScatterAttrs& a) {
  const Tensor& y = k.output(0);
  cpu::ConvertCopy(k.input(0), y);
  if (y.numel() == 0 || k.input(1).numel() == 0) return;
  const Tensor u = k.input(1).Contiguous();
  const int64_t axis = Axis(a.axis, y.ndim());
  const int64_t batch = y.shape()[0], max_len = y.shape()[axis], len = u.shape()[axis];
  int64_t mid = 1, inner = 1;  // axes between batch and `axis`, and after it
  for (int64_t d = 1; d < axis; ++d) mid *= y.shape()[d];
  for (int64_t d = axis + 1; d < y.ndim(); ++d) inner *= y.shape()[d];
  std::vector<int64_t> w(batch, 0);
  if (k.has_input(2)) w = k.input(2).ToVector<int64_t>();
  const bool circular = a.mode == "circular";
  for (int64_t b = 0; b < batch; ++b) {
    if (circular) continue;
    SINGA_CHECK(w[b] >= 0 && w[b] + len <= max_len, ShapeError,
                "TensorScatter: write index " << w[b] << " of batch entry " << b << " with " << len
                                              << " updates overruns axis " << axis << " of length "
                                              << max_len);
  }
  ops::VisitElementSize(
      y.dtype(),
      [&]<class E>(Tag<E>) {
        const E* in = static_cast<const E*>(u.raw_data());
        E* out = static_cast<E*>(y.raw_data());
        for (int64_t b = 0; b < batch; ++b)
          for (int64_t m = 0; m < mid; ++m)
            for (int64_t s = 0; s < len; ++s) {
              int64_t t = w[b] + s;
              if (circular) t = ((t % max_len) + max_len) % max_len;
              const E* src = in + ((b * mid + m) * len + s) * inner;
              std::copy(src, src + inner, out + ((b * mid + m) * max_len + t) * inner);
            }
      },
      "TensorScatter");
}

}  // namespace

SINGA_REGISTER_OP(TensorScatter, TensorScatterAttrs)
    .since_opset(24)
    .inputs({"past_cache", "update", "write_indices?"})
    .outputs({"present_cache"})
    .attr("axis", &TensorScatterAttrs::axis)
    .attr("mode", &TensorScatterAttrs::mode)
    .dtypes(ops::AnyDType(), {0, 1})
    .dtypes({DType::kInt64}, {2})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
