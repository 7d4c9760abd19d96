// StringConcat: the elementwise concatenation of two string tensors, with
// numpy broadcasting.
// https://onnx.ai/onnx/operators/onnx__StringConcat.html
#include "ops/common.h"

namespace singa {
namespace {

SpecList StringConcatInfer(const InferCtx& c, const NoAttrs&) { return ops::BroadcastSpec(c); }

void StringConcatForward(KernelCtx& k, const NoAttrs&) {
  cpu::Binary<std::string, std::string, std::string>(
      k.input(0), k.input(1), k.output(0),
      [](const std::string& a, const std::string& b) { return a + b; });
}

}  // namespace

SINGA_REGISTER_OP(StringConcat, NoAttrs)
    .since_opset(20)
    .inputs({"X", "Y"})
    .outputs({"Z"})
    .dtypes({DType::kString}, {0, 1})
    .infer(StringConcatInfer)
    .kernel(StringConcatForward);

}  // namespace singa
