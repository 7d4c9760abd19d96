// Equal, Less, Greater, LessOrEqual, GreaterOrEqual: numpy-broadcasting
// comparisons with a bool output. Equal also compares bools and strings.
// 16-bit floats compare exactly (through float). NaN compares false.
// https://onnx.ai/onnx/operators/onnx__Equal.html (Less, Greater, ... alike)
#include <functional>

#include "ops/common.h"

namespace singa {
namespace {

template <class Cmp>
void CompareForward(KernelCtx& k, const NoAttrs&) {
  const DType dt = k.input(0).dtype();
  if (dt == DType::kString) {
    cpu::Binary<std::string, std::string, bool>(
        k.input(0), k.input(1), k.output(0),
        [](const std::string& a, const std::string& b) { return Cmp{}(a, b); });
    return;
  }
  VisitDType(dt, [&]<class T>(Tag<T>) {
    cpu::Binary<T, T, bool>(k.input(0), k.input(1), k.output(0), [](T a, T b) {
      return Cmp{}(static_cast<Acc<T>>(a), static_cast<Acc<T>>(b));
    });
  });
}

SpecList Infer(const InferCtx& c, const NoAttrs&) { return ops::BroadcastSpec(c, DType::kBool); }

}  // namespace

// Each registration is the oldest version with today's meaning (7 brought
// multidirectional broadcasting; later versions only added dtypes).
SINGA_REGISTER_OP(Equal, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kAll, {0, 1})
    .infer(Infer)
    .kernel(CompareForward<std::equal_to<>>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kEqual, NoAttrs>, ops::kCudaMath);
SINGA_REGISTER_OP(Less, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(CompareForward<std::less<>>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kLess, NoAttrs>, ops::kCudaMath);
SINGA_REGISTER_OP(Greater, NoAttrs)
    .since_opset(7)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(CompareForward<std::greater<>>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kGreater, NoAttrs>, ops::kCudaMath);
SINGA_REGISTER_OP(LessOrEqual, NoAttrs)
    .since_opset(12)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(CompareForward<std::less_equal<>>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kLessOrEqual, NoAttrs>, ops::kCudaMath);
SINGA_REGISTER_OP(GreaterOrEqual, NoAttrs)
    .since_opset(12)
    .inputs({"A", "B"})
    .outputs({"C"})
    .dtypes(dtypes::kNumeric, {0, 1})
    .infer(Infer)
    .kernel(CompareForward<std::greater_equal<>>)
        SINGA_CUDA_KERNEL(ops::CudaBinary<cuda::Binary::kGreaterOrEqual, NoAttrs>, ops::kCudaMath);

}  // namespace singa
