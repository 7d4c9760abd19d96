// And, Or, Xor (numpy-broadcasting) and Not on bool tensors.
// https://onnx.ai/onnx/operators/onnx__And.html (Or, Xor, Not alike)
#include "ops/common.h"

namespace singa {
namespace {

template <class Op>
void LogicalForward(KernelCtx& k, const NoAttrs&) {
  cpu::Binary<bool, bool, bool>(k.input(0), k.input(1), k.output(0), Op{});
}

struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  bool operator()(bool a, bool b) const { return a != b; }
};

void NotForward(KernelCtx& k, const NoAttrs&) {
  cpu::Unary<bool, bool>(k.input(0), k.output(0), [](bool v) { return !v; });
}

SpecList Infer(const InferCtx& c, const NoAttrs&) { return ops::BroadcastSpec(c, DType::kBool); }

const std::vector<DType> kBool = {DType::kBool};

}  // namespace

// Version 7 brought multidirectional broadcasting.
SINGA_REGISTER_OP(And, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(kBool, {0, 1})
    .infer(Infer)
    .kernel(LogicalForward<AndOp>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kAnd, NoAttrs>, {DType::kBool});
SINGA_REGISTER_OP(Or, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(kBool, {0, 1})
    .infer(Infer)
    .kernel(LogicalForward<OrOp>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kOr, NoAttrs>, {DType::kBool});
SINGA_REGISTER_OP(Xor, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(kBool, {0, 1})
    .infer(Infer)
    .kernel(LogicalForward<XorOp>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kXor, NoAttrs>, {DType::kBool});
SINGA_REGISTER_OP(Not, NoAttrs)
    .since_opset(1)
    .inputs({"X"})
    .outputs({"Y"})
    .dtypes(kBool)
    .infer(SameAsInput(0))
    .kernel(NotForward) SINGA_CUDA_KERNEL(
        [](KernelCtx& k, const NoAttrs&) {  // x xor true
          cuda::BinaryOp(cuda::Binary::kXor, k.input(0),
                         Tensor::Full({}, 1, DType::kBool, k.input(0).device()), k.output(0));
        },
        kBool);

}  // namespace singa
