// Where: output = condition ? X : Y elementwise, with 3-way numpy
// broadcasting; X and Y of any (same) dtype, including string.
// https://onnx.ai/onnx/operators/onnx__Where.html
#include "ops/common.h"
#include "ops/grad_util.h"

namespace singa {
namespace {

template <class T>
void Select(KernelCtx& k) {
  cpu::Ternary<bool, T, T, T>(k.input(0), k.input(1), k.input(2), k.output(0),
                              [](bool c, const T& x, const T& y) { return c ? x : y; });
}

// Selection only moves values, so non-string types dispatch on element size.
void WhereForward(KernelCtx& k, const NoAttrs&) {
  switch (DType dt = k.input(1).dtype(); dt == DType::kString ? 0 : SizeOf(dt)) {
    case 0:
      Select<std::string>(k);
      break;
    case 1:
      Select<uint8_t>(k);
      break;
    case 2:
      Select<uint16_t>(k);
      break;
    case 4:
      Select<uint32_t>(k);
      break;
    case 8:
      Select<uint64_t>(k);
      break;
    default:
      throw DTypeError("Where: no kernel for dtype " + std::string(Name(dt)));
  }
}

SpecList Infer(const InferCtx& c, const NoAttrs&) {
  SpecList s = ops::BroadcastSpec(c);
  s[0].dtype = c.dtype(1);
  return s;
}

const std::vector<DType> kBool = {DType::kBool};

// Backward: dY goes to X where the condition holds and to Y elsewhere, each
// summed back over its broadcast; the condition gets none.
TensorList WhereBackward(const GradCtx& g, const NoAttrs&) {
  const Tensor &c = g.input(0), &dy = g.grad_output(0);
  const Tensor zero = grad::Scalar(0, dy);
  TensorList d(3);
  if (g.needs_grad(1)) d[1] = ops::SumToShape(grad::Where(c, dy, zero), g.input(1).shape());
  if (g.needs_grad(2)) d[2] = ops::SumToShape(grad::Where(c, zero, dy), g.input(2).shape());
  return d;
}

}  // namespace

// Version 16 only added bfloat16.
SINGA_REGISTER_OP(Where, NoAttrs)
    .since_opset(9)
    .inputs({"condition", "X", "Y"})
    .outputs({"output"})
    .dtypes(kBool, {0})
    .dtypes(dtypes::kAll, {1, 2})
    .infer(Infer)
    .kernel(WhereForward) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const NoAttrs&) {
          cuda::Where(k.input(0), k.input(1), k.input(2), k.output(0));
        },
        {DType::kBool})
    .backward(WhereBackward);

}  // namespace singa
