// SplitToSequence: splits `input` along `axis` into a sequence, in the sizes
// `split` gives (a scalar: chunks of that size, the last one shorter; absent:
// chunks of 1, squeezed unless keepdims). The tensor work is Split and
// Squeeze, so autograd records through it.
// https://onnx.ai/onnx/operators/onnx__SplitToSequence.html
#include <algorithm>

#include "singa/ops/op.h"

namespace singa {
namespace {

struct SplitToSequenceAttrs {
  int64_t axis = 0;
  int64_t keepdims = 1;
};

ValueList SplitToSequence(const ValueCtx& c, const SplitToSequenceAttrs& a) {
  const Tensor& x = c.tensor(0);
  int64_t axis = a.axis;
  SINGA_CHECK(axis >= -x.ndim() && axis < x.ndim(), ShapeError,
              c.where() << ": axis " << axis << " is out of range for " << x.ToString());
  if (axis < 0) axis += x.ndim();
  const int64_t length = x.dim(axis);
  std::vector<int64_t> sizes;
  const bool has_split = c.has_input(1);
  if (!has_split) {
    sizes.assign(length, 1);
  } else {
    const Tensor& split = c.tensor(1);
    SINGA_CHECK(split.dtype() == DType::kInt64 || split.dtype() == DType::kInt32, DTypeError,
                c.where() << ": split must be int32 or int64, got " << split.ToString());
    SINGA_CHECK(split.ndim() <= 1, ShapeError,
                c.where() << ": split must be a scalar or 1-D, got " << split.ToString());
    sizes = split.ToVector<int64_t>();
    if (split.ndim() == 0) {
      const int64_t chunk = sizes[0];
      SINGA_CHECK(chunk > 0, ShapeError, c.where() << ": split " << chunk << " must be positive");
      sizes.clear();
      for (int64_t at = 0; at < length; at += chunk) sizes.push_back(std::min(chunk, length - at));
    }
    int64_t total = 0;
    for (int64_t s : sizes) {
      SINGA_CHECK(s >= 0, ShapeError, c.where() << ": split has a negative size " << s);
      total += s;
    }
    SINGA_CHECK(total == length, ShapeError,
                c.where() << ": split sums to " << total << ", but dim " << axis << " of "
                          << x.ToString() << " is " << length);
  }
  if (sizes.empty()) return {Value::Sequence({}, x.dtype())};
  const Tensor split_t =
      Tensor::FromVector<int64_t>({static_cast<int64_t>(sizes.size())}, sizes, x.device());
  TensorList parts =
      CallOp("Split", {x, split_t}, {{"axis", axis}}, kLatestOpset, static_cast<int>(sizes.size()));
  if (!has_split && a.keepdims == 0) {
    const Tensor axes = Tensor::FromVector<int64_t>({1}, {axis}, x.device());
    for (Tensor& p : parts) p = Call1("Squeeze", {p, axes});
  }
  return {Value::Sequence(std::move(parts), x.dtype())};
}

}  // namespace

SINGA_REGISTER_OP(SplitToSequence, SplitToSequenceAttrs)
    .since_opset(11)
    .inputs({"input", "split?"})
    .outputs({"output_sequence"})
    .attr("axis", &SplitToSequenceAttrs::axis)
    .attr("keepdims", &SplitToSequenceAttrs::keepdims)
    .value_kernel(SplitToSequence);

}  // namespace singa
