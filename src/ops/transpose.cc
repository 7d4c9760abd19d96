// Transpose: permutes the axes (default: reverses them). The output is a
// strided view of the input: consumers take any strides, and one that needs
// dense memory copies once there.
// https://onnx.ai/onnx/operators/onnx__Transpose.html
#include "ops/movement.h"

namespace singa {
namespace {

struct TransposeAttrs {
  std::optional<std::vector<int64_t>> perm;
};

std::vector<int64_t> Perm(const InferCtx& c, const TransposeAttrs& a) {
  const int64_t rank = c.rank(0);
  if (!a.perm) {
    std::vector<int64_t> p(rank);
    for (int64_t i = 0; i < rank; ++i) p[i] = rank - 1 - i;
    return p;
  }
  SINGA_CHECK(static_cast<int64_t>(a.perm->size()) == rank, ShapeError,
              c.where() << ": perm " << ToString(*a.perm) << " does not have one entry per axis ("
                        << c.inputs_string() << ")");
  std::vector<int64_t> p;
  for (int64_t v : *a.perm) p.push_back(ops::CheckAxis(c, v, rank));
  ops::CheckDistinctAxes(c, p);
  return p;
}

SpecList Infer(const InferCtx& c, const TransposeAttrs& a) {
  Shape out;
  for (int64_t p : Perm(c, a)) out.push_back(c.shape(0)[p]);
  return {{c.dtype(0), out}};
}

TensorList Alias(const InferCtx& c, const TransposeAttrs& a) {
  return {c.input(0).Permute(Perm(c, a))};
}

// The gradient is the output's gradient under the inverse permutation.
TensorList Backward(const GradCtx& g, const TransposeAttrs& a) {
  const int64_t rank = g.input(0).ndim();
  std::vector<int64_t> inverse(rank);
  for (int64_t i = 0; i < rank; ++i) {
    int64_t p = a.perm ? (*a.perm)[i] : rank - 1 - i;
    if (p < 0) p += rank;
    inverse[p] = i;
  }
  return {g.grad_output(0).Permute(inverse)};
}

}  // namespace

SINGA_REGISTER_OP(Transpose, TransposeAttrs)
    .since_opset(1)
    .inputs({"data"})
    .outputs({"transposed"})
    .attr("perm", &TransposeAttrs::perm)
    .dtypes(ops::AnyDType())
    .infer(Infer)
    .alias(Alias)
    .backward(Backward);

}  // namespace singa
