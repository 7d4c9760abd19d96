// Helpers shared by the control-flow ops (if.cc, loop.cc, scan.cc): reading
// a condition and stacking per-iteration results, all through registered
// ops so autograd records through a loop.
#pragma once

#include <string>

#include "singa/ops/op.h"

namespace singa::control_flow {

// A one-element tensor read as a bool (If's cond, Loop's cond); `what`
// names it in errors.
inline bool Truth(const ValueCtx& c, const Value& v, const char* what) {
  SINGA_CHECK(!v.is_sequence(), DTypeError,
              c.where() << ": " << what << " must be a tensor, got " << v.ToString());
  const Tensor& t = v.tensor();
  SINGA_CHECK(t.defined() && t.numel() == 1, ShapeError,
              c.where() << ": " << what << " must have one element, got "
                        << (t.defined() ? t.ToString() : std::string("none")));
  return t.Item<bool>();
}

// A value that must be a tensor (a scan output).
inline const Tensor& TensorOf(const ValueCtx& c, const Value& v, const std::string& what) {
  SINGA_CHECK(!v.is_sequence(), DTypeError,
              c.where() << ": " << what << " must be a tensor, got " << v.ToString());
  return v.tensor();
}

// Stacks equally shaped tensors along a new axis, through Unsqueeze and
// Concat. None: an empty [0] tensor of `dtype` (float32 when undefined).
inline Tensor Stack(const ValueCtx& c, const ValueList& vs, int64_t axis, DType dtype) {
  if (vs.empty())
    return Tensor({0}, dtype == DType::kUndefined ? DType::kFloat32 : dtype, c.device());
  const int64_t rank = TensorOf(c, vs[0], "a scan output").ndim();
  if (axis < 0) axis += rank + 1;
  const Tensor axes = Tensor::FromVector<int64_t>({1}, {axis}, c.device());
  TensorList parts;
  for (const Value& v : vs)
    parts.push_back(Call1("Unsqueeze", {TensorOf(c, v, "a scan output"), axes}));
  return Call1("Concat", parts, {{"axis", axis}});
}

}  // namespace singa::control_flow
