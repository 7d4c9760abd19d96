// Size: the number of elements of the input, as an int64 scalar.
// https://onnx.ai/onnx/operators/onnx__Size.html
#include "ops/movement.h"

namespace singa {
namespace {

void Forward(KernelCtx& k, const NoAttrs&) { *k.output(0).data<int64_t>() = k.input(0).numel(); }

}  // namespace

SINGA_REGISTER_OP(Size, NoAttrs)
    .since_opset(1)
    .inputs({"data"})
    .outputs({"size"})
    .dtypes(ops::AnyDType())
    .infer([](const InferCtx&, const NoAttrs&) {
      return SpecList{{DType::kInt64, {}}};
    })
    .kernel(Forward) SINGA_CUDA_KERNEL(ops::MetadataOnHost(Forward), ops::kCudaCopy);

}  // namespace singa
