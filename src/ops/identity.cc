// Identity: the input itself (a view sharing its storage); a sequence or an
// empty optional (opset 14 and 16 take any type) passes through as it is.
// https://onnx.ai/onnx/operators/onnx__Identity.html
#include "ops/movement.h"

namespace singa {

SINGA_REGISTER_OP(Identity, NoAttrs)
    .since_opset(1)
    .inputs({"input"})
    .outputs({"output"})
    .dtypes(ops::AnyDType())
    .infer(SameAsInput(0))
    .alias([](const InferCtx& c, const NoAttrs&) { return TensorList{c.input(0)}; })
    .value_kernel([](const ValueCtx& c, const NoAttrs&) { return ValueList{c.input(0)}; })
    .backward([](const GradCtx& g, const NoAttrs&) { return TensorList{g.grad_output(0)}; });

}  // namespace singa
