// Values (singa/ops/value.h): a tensor, a sequence of tensors, or none.
#include "singa/ops/value.h"

namespace singa {

Value Value::Sequence(TensorList elements, DType dtype) {
  Value v;
  v.seq_ = std::make_shared<const TensorList>(std::move(elements));
  v.seq_dtype_ = dtype;
  return v;
}

const Tensor& Value::tensor() const {
  SINGA_CHECK(!seq_, DTypeError, "a sequence (" << ToString() << ") where a tensor is expected");
  return tensor_;
}

const TensorList& Value::sequence() const {
  SINGA_CHECK(seq_, DTypeError, "a " << ToString() << " where a sequence is expected");
  return *seq_;
}

DType Value::element_dtype() const {
  if (seq_dtype_ != DType::kUndefined || sequence().empty()) return seq_dtype_;
  return sequence()[0].dtype();
}

std::string Value::ToString() const {
  if (!seq_) return tensor_.defined() ? tensor_.ToString() : "none";
  std::string s = "seq(";
  for (size_t i = 0; i < seq_->size(); ++i) s += (i ? ", " : "") + (*seq_)[i].ToString();
  if (seq_->empty()) s += std::string(Name(seq_dtype_));
  return s + ")";
}

}  // namespace singa
