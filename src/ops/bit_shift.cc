// BitShift: elementwise x << y or x >> y (numpy broadcasting). A shift
// outside [0, bit width) gives 0 (or -1 for a right shift of a negative
// signed x, the sign filling every bit). Left shifts of signed values shift
// the two's-complement bits. Opset 28 added the signed types.
// https://onnx.ai/onnx/operators/onnx__BitShift.html
#include <type_traits>

#include "ops/common.h"

namespace singa {
namespace {

struct BitShiftAttrs {
  std::string direction;
};

SpecList Infer(const InferCtx& c, const BitShiftAttrs& a) {
  SINGA_CHECK(a.direction == "LEFT" || a.direction == "RIGHT", ShapeError,
              c.where() << ": direction must be LEFT or RIGHT, got '" << a.direction << "'");
  return ops::BroadcastSpec(c);
}

template <class T>
T Shift(T x, T y, bool left) {
  using U = std::make_unsigned_t<T>;
  constexpr int kBits = 8 * sizeof(T);
  const bool in_range = !(std::is_signed_v<T> && y < 0) && y < static_cast<T>(kBits);
  if (left) return in_range ? static_cast<T>(static_cast<U>(static_cast<U>(x) << y)) : T(0);
  if (in_range) return static_cast<T>(x >> y);  // arithmetic for signed x
  return (std::is_signed_v<T> && x < 0) ? static_cast<T>(-1) : T(0);
}

void Forward(KernelCtx& k, const BitShiftAttrs& a) {
  const bool left = a.direction == "LEFT";
  VisitNumeric(k.input(0).dtype(), [&]<class T>(Tag<T>) {
    if constexpr (std::is_integral_v<T>)
      cpu::Binary<T, T, T>(k.input(0), k.input(1), k.output(0),
                           [left](T x, T y) { return Shift(x, y, left); });
  });
}

}  // namespace

SINGA_REGISTER_OP(BitShift, BitShiftAttrs)
    .since_opset(11)
    .inputs({"X", "Y"})
    .outputs({"Z"})
    .attr("direction", &BitShiftAttrs::direction, true)
    .dtypes(dtypes::kUnsignedInts, {0, 1})
    .infer(Infer)
    .kernel(Forward);
SINGA_REGISTER_OP(BitShift, BitShiftAttrs)
    .since_opset(28)
    .inputs({"X", "Y"})
    .outputs({"Z"})
    .attr("direction", &BitShiftAttrs::direction, true)
    .dtypes(dtypes::kInts, {0, 1})
    .infer(Infer)
    .kernel(Forward);

}  // namespace singa
