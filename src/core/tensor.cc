#include "singa/core/tensor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <limits>
#include <numeric>

namespace singa {

namespace {
size_t PhysicalMemory() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page)
                               : std::numeric_limits<size_t>::max();
}
std::atomic<size_t> g_max_tensor_bytes{PhysicalMemory()};

// Debug builds check every view: the elements its shape and strides reach
// lie inside its block.
Tensor InBlock(Tensor t) {
#ifndef NDEBUG
  if (t.defined() && t.numel() > 0) {
    int64_t lo = t.offset(), hi = t.offset();
    for (size_t i = 0; i < t.shape().size(); ++i) {
      const int64_t span = (t.shape()[i] - 1) * t.strides()[i];
      (span < 0 ? lo : hi) += span;
    }
    assert(lo >= 0 && static_cast<size_t>(hi + 1) * t.itemsize() <= t.block()->size());
  }
#endif
  return t;
}
}  // namespace

size_t MaxTensorBytes() { return g_max_tensor_bytes.load(std::memory_order_relaxed); }
void SetMaxTensorBytes(size_t bytes) { g_max_tensor_bytes.store(bytes, std::memory_order_relaxed); }

size_t TensorBytes(const Shape& shape, DType dtype, std::string_view what) {
  for (int64_t d : shape)
    SINGA_CHECK(d >= 0, ShapeError,
                what << ": negative dimension in shape " << singa::ToString(shape));
  int64_t n = 0;
  try {
    n = NumElements(shape);
  } catch (const ShapeError& e) {
    throw ShapeError(std::string(what) + ": " + e.what());
  }
  size_t bytes = 0;
  SINGA_CHECK(!__builtin_mul_overflow(static_cast<size_t>(n), SizeOf(dtype), &bytes), ShapeError,
              what << ": " << Name(dtype) << singa::ToString(shape) << " needs more bytes than "
                   << "a size_t counts");
  SINGA_CHECK(bytes <= MaxTensorBytes(), MemoryError,
              what << ": " << Name(dtype) << singa::ToString(shape) << " needs " << bytes
                   << " bytes, more than the limit of " << MaxTensorBytes()
                   << " (singa.set_max_tensor_bytes)");
  return bytes;
}

Tensor::Tensor(Shape shape, DType dtype, Device device)
    : device_(device), dtype_(dtype), shape_(std::move(shape)) {
  SINGA_CHECK(dtype != DType::kUndefined, DTypeError, "Tensor: dtype is undefined");
  const size_t bytes = TensorBytes(shape_, dtype);
  strides_ = ContiguousStrides(shape_);
  block_ = std::make_shared<Block>(device, bytes, dtype);
}

Tensor Tensor::Zeros(Shape shape, DType dtype, Device device) {
  return Full(std::move(shape), 0.0, dtype, device);
}
Tensor Tensor::Ones(Shape shape, DType dtype, Device device) {
  return Full(std::move(shape), 1.0, dtype, device);
}

Tensor Tensor::Full(Shape shape, double value, DType dtype, Device device) {
  // A new constant: filled now even while a graph is captured, so that code
  // reading it on the host (shape inference, say) sees its values.
  CaptureSuspendGuard now(device);
  Tensor t(std::move(shape), dtype, device);
  t.Fill(value);
  return t;
}

Tensor Tensor::Wrap(void* data, DType dtype, Shape shape, Strides strides,
                    std::shared_ptr<void> owner, Device device) {
  SINGA_CHECK(shape.size() == strides.size(), ShapeError,
              "Tensor::Wrap: shape " << singa::ToString(shape) << " and strides "
                                     << singa::ToString(strides) << " differ in rank");
  Tensor t;
  t.device_ = device;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.strides_ = std::move(strides);
  // The block spans the bytes the strides reach; offset stays 0 because the
  // pointer given is the first element.
  t.block_ = std::make_shared<Block>(device, data, t.nbytes(), std::move(owner));
  return t;
}

int64_t Tensor::dim(int64_t axis) const {
  return shape_[NormalizeAxis(axis, ndim(), "Tensor::dim")];
}

bool Tensor::is_contiguous() const {
  // Empty: nothing to address (and the other dims may be of any size).
  if (std::find(shape_.begin(), shape_.end(), 0) != shape_.end()) return true;
  int64_t expected = 1;
  for (size_t i = shape_.size(); i-- > 0;) {
    if (shape_[i] == 1) continue;
    if (strides_[i] != expected) return false;
    expected *= shape_[i];
  }
  return true;
}

std::string Tensor::ToString() const { return std::string(Name(dtype_)) + singa::ToString(shape_); }

namespace {
const std::shared_ptr<Block>& HollowBlock() {
  static const auto block = std::make_shared<Block>(Device::Cpu(), nullptr, 0, nullptr);
  return block;
}
}  // namespace

Tensor Tensor::Hollow() const {
  Tensor t = *this;
  t.block_ = HollowBlock();
  t.offset_ = 0;
  return t;
}

bool Tensor::hollow() const { return block_ == HollowBlock(); }

void* Tensor::raw_data() const {
  SINGA_CHECK(block_, Error, "access to the data of an undefined tensor");
  char* base = static_cast<char*>(block_->data());
  SINGA_CHECK(base || !hollow() || numel() == 0, Error,
              "the values of " << (name().empty() ? ToString() : "'" + name() + "' " + ToString())
                               << " were not kept: it is recorded for the ONNX export only");
  // An empty block has no memory; a view into it (a slice) addresses none.
  return base ? base + offset_ * static_cast<int64_t>(itemsize()) : nullptr;
}

Tensor Tensor::Reshape(Shape shape) const {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      SINGA_CHECK(infer < 0, ShapeError, "Reshape: more than one -1 in " << singa::ToString(shape));
      infer = static_cast<int64_t>(i);
    } else {
      SINGA_CHECK(shape[i] >= 0 && !__builtin_mul_overflow(known, shape[i], &known), ShapeError,
                  "Reshape: invalid dimension in " << singa::ToString(shape));
    }
  }
  if (infer >= 0) {
    SINGA_CHECK(known != 0 && numel() % known == 0, ShapeError,
                "Reshape: cannot reshape " << ToString() << " to " << singa::ToString(shape));
    shape[infer] = numel() / known;
    known *= shape[infer];
  }
  SINGA_CHECK(known == numel(), ShapeError,
              "Reshape: cannot reshape " << ToString() << " to " << singa::ToString(shape));
  if (!is_contiguous()) return Contiguous().Reshape(std::move(shape));
  Tensor t = Detach();
  t.shape_ = std::move(shape);
  t.strides_ = ContiguousStrides(t.shape_);
  return InBlock(std::move(t));
}

Tensor Tensor::Permute(const std::vector<int64_t>& perm) const {
  SINGA_CHECK(perm.size() == shape_.size(), ShapeError,
              "Transpose: perm " << singa::ToString(perm) << " does not match " << ToString());
  std::vector<bool> seen(perm.size());
  Tensor t = Detach();
  for (size_t i = 0; i < perm.size(); ++i) {
    int64_t p = NormalizeAxis(perm[i], ndim(), "Transpose");
    SINGA_CHECK(!seen[p], ShapeError,
                "Transpose: perm " << singa::ToString(perm) << " repeats an axis");
    seen[p] = true;
    t.shape_[i] = shape_[p];
    t.strides_[i] = strides_[p];
  }
  return InBlock(std::move(t));
}

Tensor Tensor::Transpose() const {
  std::vector<int64_t> perm(shape_.size());
  std::iota(perm.rbegin(), perm.rend(), 0);
  return Permute(perm);
}

Tensor Tensor::Slice(int64_t axis, int64_t start, int64_t stop, int64_t step) const {
  axis = NormalizeAxis(axis, ndim(), "Slice");
  SINGA_CHECK(step != 0, ShapeError, "Slice: step is 0");
  const int64_t n = shape_[axis];
  // Clamp like Python slicing / ONNX Slice.
  auto clamp = [&](int64_t v, int64_t lo, int64_t hi) { return std::min(std::max(v, lo), hi); };
  if (start < 0) start += n;
  if (stop < 0) stop += n;
  int64_t len;
  if (step > 0) {
    start = clamp(start, 0, n);
    stop = clamp(stop, 0, n);
    len = stop > start ? (stop - start + step - 1) / step : 0;
  } else {
    start = clamp(start, -1, n - 1);
    stop = clamp(stop, -1, n - 1);
    len = start > stop ? (start - stop - step - 1) / -step : 0;
  }
  Tensor t = Detach();
  if (len > 0) t.offset_ += start * strides_[axis];
  t.shape_[axis] = len;
  t.strides_[axis] = strides_[axis] * step;
  return InBlock(std::move(t));
}

Tensor Tensor::BroadcastTo(const Shape& shape) const {
  SINGA_CHECK(shape.size() >= shape_.size(), ShapeError,
              "Expand: cannot broadcast " << ToString() << " to " << singa::ToString(shape));
  Tensor t = Detach();
  size_t lead = shape.size() - shape_.size();
  t.shape_ = shape;
  t.strides_.assign(shape.size(), 0);
  for (size_t i = 0; i < shape_.size(); ++i) {
    SINGA_CHECK(shape_[i] == shape[lead + i] || shape_[i] == 1, ShapeError,
                "Expand: cannot broadcast " << ToString() << " to " << singa::ToString(shape));
    t.strides_[lead + i] = shape_[i] == 1 && shape[lead + i] != 1 ? 0 : strides_[i];
  }
  return InBlock(std::move(t));
}

Tensor Tensor::Squeeze(int64_t axis) const {
  axis = NormalizeAxis(axis, ndim(), "Squeeze");
  SINGA_CHECK(shape_[axis] == 1, ShapeError,
              "Squeeze: axis " << axis << " of " << ToString() << " is not 1");
  Tensor t = Detach();
  t.shape_.erase(t.shape_.begin() + axis);
  t.strides_.erase(t.strides_.begin() + axis);
  return t;
}

Tensor Tensor::Unsqueeze(int64_t axis) const {
  axis = NormalizeAxis(axis, ndim() + 1, "Unsqueeze");
  Tensor t = Detach();
  int64_t stride = axis < ndim() ? strides_[axis] * shape_[axis] : 1;
  t.shape_.insert(t.shape_.begin() + axis, 1);
  t.strides_.insert(t.strides_.begin() + axis, stride);
  return t;
}

Tensor Tensor::Contiguous() const {
  if (is_contiguous()) return *this;
  return Clone();
}

Tensor Tensor::Clone() const {
  Tensor t(shape_, dtype_, device_);
  t.CopyFrom(*this);
  return t;
}

Tensor Tensor::AsType(DType dtype) const {
  if (dtype == dtype_) return *this;
  Tensor t(shape_, dtype, device_);
  t.CopyFrom(*this);
  return t;
}

Tensor Tensor::ToDevice(Device device) const {
  if (device == device_) return *this;
  Tensor t(shape_, dtype_, device);
  t.CopyFrom(*this);
  return t;
}

// CopyFrom and Fill run CPU loops: they are defined with them, in
// src/kernels/cpu/convert.cc.

AutogradMeta& Tensor::meta() {
  if (!autograd_) autograd_ = std::make_shared<AutogradMeta>();
  return *autograd_;
}

Tensor& Tensor::set_requires_grad(bool on) {
  meta().requires_grad = on;
  return *this;
}

Tensor& Tensor::set_stores_grad(bool on) {
  meta().stores_grad = on;
  if (on) {
    autograd_->requires_grad = true;
    autograd_->creator.reset();  // a parameter is a leaf
  }
  return *this;
}

const std::string& Tensor::name() const {
  static const std::string kEmpty;
  return autograd_ ? autograd_->name : kEmpty;
}

Tensor& Tensor::set_name(std::string name) {
  meta().name = std::move(name);
  return *this;
}

const std::shared_ptr<autograd::Node>& Tensor::creator() const {
  static const std::shared_ptr<autograd::Node> kNone;
  return autograd_ ? autograd_->creator : kNone;
}

void Tensor::set_creator(std::shared_ptr<autograd::Node> node, int output_index) {
  AutogradMeta& m = meta();
  m.creator = std::move(node);
  m.output_index = output_index;
  m.requires_grad = true;
}

Tensor Tensor::Detach() const {
  Tensor t = *this;
  t.autograd_.reset();
  return t;
}

}  // namespace singa
