// BitwiseAnd, BitwiseOr, BitwiseXor (numpy-broadcasting) and BitwiseNot on
// integer tensors.
// https://onnx.ai/onnx/operators/onnx__BitwiseAnd.html (Or, Xor, Not alike)
#include "ops/common.h"

namespace singa {
namespace {

template <class Op>
void BinaryForward(KernelCtx& k, const NoAttrs&) {
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    if constexpr (std::is_integral_v<T>)
      cpu::Binary<T, T, T>(k.input(0), k.input(1), k.output(0),
                           [](T a, T b) { return static_cast<T>(Op{}(a, b)); });
  });
}

void NotForward(KernelCtx& k, const NoAttrs&) {
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    if constexpr (std::is_integral_v<T>)
      cpu::Unary<T, T>(k.input(0), k.output(0), [](T v) { return static_cast<T>(~v); });
  });
}

SpecList Infer(const InferCtx& c, const NoAttrs&) { return ops::BroadcastSpec(c); }

}  // namespace

SINGA_REGISTER_OP(BitwiseAnd, NoAttrs)
    .since_opset(18)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kInts, {0, 1})
    .infer(Infer)
    .kernel(BinaryForward<std::bit_and<>>);
SINGA_REGISTER_OP(BitwiseOr, NoAttrs)
    .since_opset(18)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kInts, {0, 1})
    .infer(Infer)
    .kernel(BinaryForward<std::bit_or<>>);
SINGA_REGISTER_OP(BitwiseXor, NoAttrs)
    .since_opset(18)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kInts, {0, 1})
    .infer(Infer)
    .kernel(BinaryForward<std::bit_xor<>>);
SINGA_REGISTER_OP(BitwiseNot, NoAttrs)
    .since_opset(18)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(dtypes::kInts)
    .infer(SameAsInput(0))
    .kernel(NotForward);

}  // namespace singa
