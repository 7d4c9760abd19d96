// Trilu: keeps the upper (j - i >= k) or lower (j - i <= k) triangle of each
// matrix in the last two axes and zeroes the rest; k (optional, default 0)
// is a scalar int64. The backward applies the same mask to the gradient.
// https://onnx.ai/onnx/operators/onnx__Trilu.html
#include "ops/movement.h"

namespace singa {
namespace {

struct TriluAttrs {
  bool upper = true;
};

int64_t Diagonal(const Tensor& k) {
  if (!k.defined()) return 0;
  return k.ToVector<int64_t>()[0];
}

SpecList Infer(const InferCtx& c, const TriluAttrs&) {
  SINGA_CHECK(c.rank(0) >= 2, ShapeError,
              c.where() << ": input must have rank >= 2 (" << c.inputs_string() << ")");
  if (c.has_input(1))
    SINGA_CHECK(c.input(1).numel() == 1 && c.rank(1) <= 1, ShapeError,
                c.where() << ": k must be a scalar (" << c.inputs_string() << ")");
  return {{c.dtype(0), c.shape(0)}};
}

void Forward(KernelCtx& k, const TriluAttrs& a) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const int64_t diag = Diagonal(k.has_input(1) ? k.input(1) : Tensor());
  const int64_t rows = y.shape()[y.ndim() - 2], cols = y.shape()[y.ndim() - 1];
  const int64_t batch = y.numel() / (rows * cols);
  const Tensor x = k.input(0).Contiguous();
  ops::VisitElementSize(
      y.dtype(),
      [&]<class E>(Tag<E>) {
        const E* in = static_cast<const E*>(x.raw_data());
        E* out = static_cast<E*>(y.raw_data());
        ParallelFor(0, batch * rows, std::max<int64_t>(1, cpu::kElementwiseGrain / cols),
                    [&](int64_t lo, int64_t hi) {
                      for (int64_t r = lo; r < hi; ++r) {
                        const int64_t i = r % rows;
                        for (int64_t j = 0; j < cols; ++j) {
                          const bool keep = a.upper ? j - i >= diag : j - i <= diag;
                          out[r * cols + j] = keep ? in[r * cols + j] : E{};
                        }
                      }
                    });
      },
      "Trilu");
}

TensorList Backward(const GradCtx& g, const TriluAttrs& a) {
  std::vector<Tensor> in = {g.grad_output(0)};
  if (g.has_input(1)) in.push_back(g.input(1));
  TensorList grads(g.num_inputs());
  grads[0] = Call1("Trilu", in, {{"upper", int64_t{a.upper}}});
  return grads;
}

}  // namespace

SINGA_REGISTER_OP(Trilu, TriluAttrs)
    .since_opset(14)
    .inputs({"input", "k?"})
    .outputs({"output"})
    .attr("upper", &TriluAttrs::upper)
    .dtypes(dtypes::kAll, {0})
    .dtypes({DType::kInt64}, {1})
    .infer(Infer)
    .kernel(Forward)
    .backward(Backward);

}  // namespace singa
