// Binarizer (ai.onnx.ml): y = x > threshold ? 1 : 0 elementwise, in x's dtype.
// A NaN compares false and maps to 0, as in onnxruntime.
// https://onnx.ai/onnx/operators/onnx_aionnxml_Binarizer.html
#include "ops/common.h"

namespace singa {
namespace {

struct BinarizerAttrs {
  float threshold = 0.0f;
};

void BinarizerForward(KernelCtx& k, const BinarizerAttrs& a) {
  VisitNumeric(
      k.input(0).dtype(),
      [&]<class T>(Tag<T>) {
        // NOTE: the threshold is a float attribute; comparing in double keeps
        // int64 inputs above 2^24 exact.
        const double t = a.threshold;
        cpu::Unary<T, T>(k.input(0), k.output(0),
                         [t](T v) { return static_cast<double>(v) > t ? T(1) : T(0); });
      },
      "Binarizer");
}

}  // namespace

SINGA_REGISTER_OP(Binarizer, BinarizerAttrs)
    .domain("ai.onnx.ml")
    .since_opset(1)
    .inputs({"X"})
    .outputs({"Y"})
    .attr("threshold", &BinarizerAttrs::threshold)
    .dtypes({DType::kFloat32, DType::kFloat64, DType::kInt64, DType::kInt32}, {0})
    .infer(SameAsInput(0))
    .kernel(BinarizerForward);

}  // namespace singa
