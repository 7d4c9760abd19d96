// Optional, OptionalHasElement and OptionalGetElement: an optional is a
// Value that is none when empty (singa/ops/value.h). Optional's `type` only
// types an empty result, which a none does not need.
// https://onnx.ai/onnx/operators/onnx__Optional.html (and the others)
#include "singa/ops/op.h"

namespace singa {
namespace {

struct OptionalAttrs {
  std::string type;  // the TypeProto, as text
};
struct NoOptionalAttrs {};

}  // namespace

SINGA_REGISTER_OP(Optional, OptionalAttrs)
    .since_opset(15)
    .inputs({"input?"})
    .outputs({"output"})
    .attr("type", &OptionalAttrs::type)
    .value_kernel([](const ValueCtx& c, const OptionalAttrs&) -> ValueList {
      return {c.input(0)};
    });

SINGA_REGISTER_OP(OptionalHasElement, NoOptionalAttrs)
    .since_opset(15)
    .inputs({"input?"})
    .outputs({"output"})
    .value_kernel([](const ValueCtx& c, const NoOptionalAttrs&) -> ValueList {
      return {Tensor::Scalar<bool>(c.has_input(0), c.device())};
    });

SINGA_REGISTER_OP(OptionalGetElement, NoOptionalAttrs)
    .since_opset(15)
    .inputs({"input"})
    .outputs({"output"})
    .value_kernel([](const ValueCtx& c, const NoOptionalAttrs&) -> ValueList {
      SINGA_CHECK(c.has_input(0), ShapeError, c.where() << ": the optional input is empty");
      return {c.input(0)};
    });

}  // namespace singa
