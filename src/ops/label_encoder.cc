// LabelEncoder (ai.onnx.ml): maps each element of X through the table
// keys_* -> values_* (parallel lists, or since opset 4 the 1-D tensors
// keys_tensor / values_tensor); an element that is no key maps to the
// default of the values' type. Exactly one keys_* and one values_* are set;
// the keys have X's dtype, Y has the values' dtype and X's shape. Float keys
// compare by value, a NaN key matching every NaN; a repeated key maps to its
// last value (opset 4's rule; opset 2 leaves it open).
// https://onnx.ai/onnx/operators/onnx_aionnxml_LabelEncoder.html
#include <cmath>
#include <unordered_map>

#include "ops/common.h"

namespace singa {
namespace {

struct LabelEncoderAttrs {
  std::optional<std::vector<float>> keys_floats;
  std::optional<std::vector<int64_t>> keys_int64s;
  std::optional<std::vector<std::string>> keys_strings;
  std::optional<Tensor> keys_tensor;
  std::optional<std::vector<float>> values_floats;
  std::optional<std::vector<int64_t>> values_int64s;
  std::optional<std::vector<std::string>> values_strings;
  std::optional<Tensor> values_tensor;
  float default_float = -0.0f;
  int64_t default_int64 = -1;
  std::string default_string = "_Unused";
  std::optional<Tensor> default_tensor;
};

// The dtypes of keys and values, from whichever attribute of each is set.
struct Table {
  DType key, value;
  int64_t keys_size, values_size;
};

int CountSet(std::initializer_list<bool> set) { return std::count(set.begin(), set.end(), true); }

Table Describe(const LabelEncoderAttrs& a, const std::string& where) {
  const int keys = CountSet({a.keys_floats.has_value(), a.keys_int64s.has_value(),
                             a.keys_strings.has_value(), a.keys_tensor.has_value()});
  const int values = CountSet({a.values_floats.has_value(), a.values_int64s.has_value(),
                               a.values_strings.has_value(), a.values_tensor.has_value()});
  SINGA_CHECK(keys == 1, ShapeError,
              where << ": exactly one of keys_floats, keys_int64s, keys_strings, keys_tensor must "
                       "be set, got "
                    << keys);
  SINGA_CHECK(values == 1, ShapeError,
              where << ": exactly one of values_floats, values_int64s, values_strings, "
                       "values_tensor must be set, got "
                    << values);
  Table t{};
  for (const auto* tensor : {&a.keys_tensor, &a.values_tensor, &a.default_tensor})
    if (*tensor)
      SINGA_CHECK((*tensor)->defined() && (*tensor)->ndim() <= 1, ShapeError,
                  where << ": keys_tensor, values_tensor and default_tensor must be 1-D, got "
                        << ((*tensor)->defined() ? (*tensor)->ToString() : "an undefined tensor"));
  if (a.keys_floats) {
    t.key = DType::kFloat32;
    t.keys_size = std::ssize(*a.keys_floats);
  }
  if (a.keys_int64s) {
    t.key = DType::kInt64;
    t.keys_size = std::ssize(*a.keys_int64s);
  }
  if (a.keys_strings) {
    t.key = DType::kString;
    t.keys_size = std::ssize(*a.keys_strings);
  }
  if (a.keys_tensor) {
    t.key = a.keys_tensor->dtype();
    t.keys_size = a.keys_tensor->numel();
  }
  if (a.values_floats) {
    t.value = DType::kFloat32;
    t.values_size = std::ssize(*a.values_floats);
  }
  if (a.values_int64s) {
    t.value = DType::kInt64;
    t.values_size = std::ssize(*a.values_int64s);
  }
  if (a.values_strings) {
    t.value = DType::kString;
    t.values_size = std::ssize(*a.values_strings);
  }
  if (a.values_tensor) {
    t.value = a.values_tensor->dtype();
    t.values_size = a.values_tensor->numel();
  }
  SINGA_CHECK(t.keys_size == t.values_size, ShapeError,
              where << ": " << t.keys_size << " keys but " << t.values_size << " values");
  if (a.default_tensor) {
    SINGA_CHECK(a.default_tensor->numel() == 1 && a.default_tensor->dtype() == t.value, DTypeError,
                where << ": default_tensor must hold one " << Name(t.value)
                      << " (the values' dtype), got " << a.default_tensor->ToString());
  }
  return t;
}

// The elements of a list attribute or a tensor attribute as Cs.
template <class C, class L>
std::vector<C> Elements(const std::optional<L>& list, const std::optional<Tensor>& tensor) {
  if (tensor) {
    const Tensor t = tensor->Contiguous();
    const C* p = t.data<C>();
    return std::vector<C>(p, p + t.numel());
  }
  if constexpr (std::is_convertible_v<typename L::value_type, C>)
    return std::vector<C>(list->begin(), list->end());
  else
    return {};
}

template <class K, class V>
void Encode(KernelCtx& k, const LabelEncoderAttrs& a) {
  const std::vector<K> keys = a.keys_floats   ? Elements<K>(a.keys_floats, a.keys_tensor)
                              : a.keys_int64s ? Elements<K>(a.keys_int64s, a.keys_tensor)
                              : a.keys_strings
                                  ? Elements<K>(a.keys_strings, a.keys_tensor)
                                  : Elements<K>(std::optional<std::vector<K>>(), a.keys_tensor);
  const std::vector<V> values = a.values_floats   ? Elements<V>(a.values_floats, a.values_tensor)
                                : a.values_int64s ? Elements<V>(a.values_int64s, a.values_tensor)
                                : a.values_strings
                                    ? Elements<V>(a.values_strings, a.values_tensor)
                                    : Elements<V>(std::optional<std::vector<V>>(), a.values_tensor);
  V fallback{};
  if (a.default_tensor) {
    fallback = Elements<V>(std::optional<std::vector<V>>(), a.default_tensor)[0];
  } else if constexpr (std::is_same_v<V, std::string>) {
    fallback = a.default_string;
  } else if constexpr (std::is_floating_point_v<V>) {
    fallback = static_cast<V>(a.default_float);
  } else {
    fallback = static_cast<V>(a.default_int64);
  }
  std::unordered_map<K, V> table;
  std::optional<V> nan_value;
  for (size_t i = 0; i < keys.size(); ++i) {
    if constexpr (std::is_floating_point_v<K>) {
      if (std::isnan(keys[i])) {
        nan_value = values[i];
        continue;
      }
    }
    table[keys[i]] = values[i];
  }
  cpu::Unary<K, V>(k.input(0), k.output(0), [&](const K& x) -> V {
    if constexpr (std::is_floating_point_v<K>) {
      if (std::isnan(x)) return nan_value ? *nan_value : fallback;
    }
    auto it = table.find(x);
    return it == table.end() ? fallback : it->second;
  });
}

// The key and value types LabelEncoder-4 allows.
template <class F>
void VisitLabel(DType dt, F&& f) {
  switch (dt) {
    case DType::kString:
      return f(Tag<std::string>{});
    case DType::kInt64:
      return f(Tag<int64_t>{});
    case DType::kInt32:
      return f(Tag<int32_t>{});
    case DType::kInt16:
      return f(Tag<int16_t>{});
    case DType::kFloat32:
      return f(Tag<float>{});
    case DType::kFloat64:
      return f(Tag<double>{});
    default:
      throw DTypeError("LabelEncoder: no kernel for dtype " + std::string(Name(dt)));
  }
}

const std::vector<DType> kTypes2 = {DType::kString, DType::kInt64, DType::kFloat32};
const std::vector<DType> kTypes4 = {DType::kString, DType::kInt64, DType::kFloat32,
                                    DType::kInt32,  DType::kInt16, DType::kFloat64};

SpecList Infer(const InferCtx& c, const LabelEncoderAttrs& a) {
  const Table t = Describe(a, c.where());
  SINGA_CHECK(t.key == c.dtype(0), DTypeError,
              c.where() << ": the keys are " << Name(t.key) << " but X is " << Name(c.dtype(0))
                        << "; keys and X must have one dtype (" << c.inputs_string() << ")");
  const std::vector<DType>& allowed = c.op().since_version >= 4 ? kTypes4 : kTypes2;
  SINGA_CHECK(std::find(allowed.begin(), allowed.end(), t.value) != allowed.end(), DTypeError,
              c.where() << ": values of dtype " << Name(t.value) << " are not supported");
  return {{t.value, c.shape(0)}};
}

void Forward(KernelCtx& k, const LabelEncoderAttrs& a) {
  const Table t = Describe(a, "LabelEncoder");
  VisitLabel(t.key, [&]<class K>(Tag<K>) {
    VisitLabel(t.value, [&]<class V>(Tag<V>) { Encode<K, V>(k, a); });
  });
}

}  // namespace

// Opset 4 added the tensor attributes and the int16, int32 and double types.
[[maybe_unused]] static const bool kLabelEncoder = RegisterVersions<LabelEncoderAttrs>(
    "LabelEncoder", {2, 4}, [](OpBuilder<LabelEncoderAttrs>& b, int v) {
      b.domain("ai.onnx.ml")
          .inputs({"X"})
          .outputs({"Y"})
          .attr("keys_floats", &LabelEncoderAttrs::keys_floats)
          .attr("keys_int64s", &LabelEncoderAttrs::keys_int64s)
          .attr("keys_strings", &LabelEncoderAttrs::keys_strings)
          .attr("values_floats", &LabelEncoderAttrs::values_floats)
          .attr("values_int64s", &LabelEncoderAttrs::values_int64s)
          .attr("values_strings", &LabelEncoderAttrs::values_strings)
          .attr("default_float", &LabelEncoderAttrs::default_float)
          .attr("default_int64", &LabelEncoderAttrs::default_int64)
          .attr("default_string", &LabelEncoderAttrs::default_string)
          .dtypes(v >= 4 ? kTypes4 : kTypes2, {0})
          .infer(Infer)
          .kernel(Forward);
      if (v >= 4)
        b.attr("keys_tensor", &LabelEncoderAttrs::keys_tensor)
            .attr("values_tensor", &LabelEncoderAttrs::values_tensor)
            .attr("default_tensor", &LabelEncoderAttrs::default_tensor);
    });

}  // namespace singa
