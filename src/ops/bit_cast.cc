// BitCast: the bytes of X reinterpreted as dtype `to` (same bit width, same
// shape); no value conversion. Little endian, as this machine is.
// NOTE: the 4- and 2-bit types are held one per byte here, so their bit
// patterns are not what a packed BitCast would see: they are not claimed.
// https://onnx.ai/onnx/operators/onnx__BitCast.html
#include <cstring>

#include "ops/movement.h"

namespace singa {
namespace {

struct BitCastAttrs {
  DType to = DType::kUndefined;
};

bool Castable(DType d) {
  return d != DType::kString && d != DType::kUInt4 && d != DType::kInt4 &&
         d != DType::kFloat4E2M1 && d != DType::kUInt2 && d != DType::kInt2 &&
         d != DType::kUndefined;
}

SpecList Infer(const InferCtx& c, const BitCastAttrs& a) {
  SINGA_CHECK(
      Castable(a.to), DTypeError,
      c.where() << ": cannot bit-cast to " << Name(a.to) << " (" << c.inputs_string() << ")");
  SINGA_CHECK(SizeOf(a.to) == SizeOf(c.dtype(0)), DTypeError,
              c.where() << ": " << Name(c.dtype(0)) << " and " << Name(a.to)
                        << " differ in bit width (" << c.inputs_string() << ")");
  return {{a.to, c.shape(0)}};
}

void Forward(KernelCtx& k, const BitCastAttrs&) {
  const Tensor& y = k.output(0);
  if (y.numel() == 0) return;
  const Tensor x = k.input(0).Contiguous();
  std::memcpy(y.raw_data(), x.raw_data(), y.nbytes());
}

const std::vector<DType> kTypes = [] {
  std::vector<DType> v;
  for (DType d : ops::AnyDType())
    if (Castable(d)) v.push_back(d);
  return v;
}();

}  // namespace

SINGA_REGISTER_OP(BitCast, BitCastAttrs)
    .since_opset(26)
    .inputs({"input"})
    .outputs({"output"})
    .attr("to", &BitCastAttrs::to, true)
    .dtypes(kTypes)
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
