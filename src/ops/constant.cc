// Constant: a tensor given by exactly one attribute: `value` (a tensor), or
// from opset 12 `value_float(s)`, `value_int(s)` or `value_string(s)`
// (sparse_value is refused when the attribute is read: singa has no sparse
// tensors). A model's Constant nodes run once when it is imported and
// become constants (a node without inputs computes a constant).
// https://onnx.ai/onnx/operators/onnx__Constant.html
#include <optional>

#include "ops/common.h"

namespace singa {
namespace {

struct ConstantAttrs {
  std::optional<Tensor> value;
  std::optional<float> value_float;
  std::optional<std::vector<float>> value_floats;
  std::optional<int64_t> value_int;
  std::optional<std::vector<int64_t>> value_ints;
  std::optional<std::string> value_string;
  std::optional<std::vector<std::string>> value_strings;
};

template <class T>
Tensor List(const std::vector<T>& v) {
  return Tensor::FromVector<T>({static_cast<int64_t>(v.size())}, v);
}

// The value, after checking that exactly one attribute gives it.
Tensor ValueOf(const std::string& where, const ConstantAttrs& a) {
  const int given = a.value.has_value() + a.value_float.has_value() + a.value_floats.has_value() +
                    a.value_int.has_value() + a.value_ints.has_value() +
                    a.value_string.has_value() + a.value_strings.has_value();
  SINGA_CHECK(given == 1, InvalidModel,
              where << ": exactly one value attribute is required, " << given << " given");
  if (a.value) {
    SINGA_CHECK(a.value->defined(), InvalidModel, where << ": value is an undefined tensor");
    return *a.value;
  }
  if (a.value_float) return Tensor::Scalar<float>(*a.value_float);
  if (a.value_floats) return List(*a.value_floats);
  if (a.value_int) return Tensor::Scalar<int64_t>(*a.value_int);
  if (a.value_ints) return List(*a.value_ints);
  if (a.value_string) return Tensor::Scalar<std::string>(*a.value_string);
  return List(*a.value_strings);
}

SpecList Infer(const InferCtx& c, const ConstantAttrs& a) {
  const Tensor v = ValueOf(c.where(), a);
  return {{v.dtype(), v.shape()}};
}

// Infer has checked the attributes.
void Forward(KernelCtx& k, const ConstantAttrs& a) {
  Tensor y = k.output(0);
  y.CopyFrom(ValueOf("Constant", a));
}

}  // namespace

// 9, 11 (sparse_value), 13 and later changed only the value's dtypes.
[[maybe_unused]] static const bool kConstant =
    RegisterVersions<ConstantAttrs>("Constant", {1, 12}, [](OpBuilder<ConstantAttrs>& b, int v) {
      b.inputs({})
          .outputs({"output"})
          .attr("value", &ConstantAttrs::value)
          .infer(Infer)
          .kernel(Forward);
      if (v >= 12)
        b.attr("value_float", &ConstantAttrs::value_float)
            .attr("value_floats", &ConstantAttrs::value_floats)
            .attr("value_int", &ConstantAttrs::value_int)
            .attr("value_ints", &ConstantAttrs::value_ints)
            .attr("value_string", &ConstantAttrs::value_string)
            .attr("value_strings", &ConstantAttrs::value_strings);
    });

}  // namespace singa
