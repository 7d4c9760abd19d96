// Tensor: device + dtype + shape + strides + offset over shared storage (a
// Block). Copying a Tensor shares the storage; views (Reshape of a contiguous
// tensor, Permute, Slice, BroadcastTo) share it too and cost no copy.
// 0-d scalars and empty tensors (a zero-sized dimension) are legal everywhere.
//
//   Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
//   Tensor xt = x.Permute({1, 0});          // a view, not contiguous
//   Tensor c = xt.Contiguous();             // a dense copy
//   float v = c.At<float>({2, 1});          // 6
//   Tensor z = Tensor::Zeros({0, 4});       // empty
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "singa/core/device.h"
#include "singa/core/dtype.h"
#include "singa/core/error.h"
#include "singa/core/shape.h"

namespace singa {

namespace autograd {
struct Node;
}

// The bytes of a dense tensor of this shape and dtype, checked before
// anything is allocated: ShapeError when the count overflows, MemoryError
// when it exceeds MaxTensorBytes(). `what` names the tensor (node, file)
// in the message.
size_t TensorBytes(const Shape& shape, DType dtype, std::string_view what = "Tensor");
// The largest tensor singa allocates: by default the machine's physical
// memory (a bigger one could only end in the kernel's out-of-memory kill).
size_t MaxTensorBytes();
void SetMaxTensorBytes(size_t bytes);

// What autograd knows of a tensor. Copies of a Tensor share it (they are the
// same logical tensor); views made by ops get their own.
struct AutogradMeta {
  bool requires_grad = false;
  bool stores_grad = false;  // a parameter: backward reports its gradient
  std::string name;
  std::shared_ptr<autograd::Node> creator;  // the op application that made it
  int output_index = 0;                     // which output of `creator`
};

class Tensor {
 public:
  // An undefined tensor (no storage): used for absent optional inputs.
  Tensor() = default;
  // A dense tensor with storage allocated on first access, contents unset.
  explicit Tensor(Shape shape, DType dtype = DType::kFloat32, Device device = Device::Cpu());

  static Tensor Zeros(Shape shape, DType dtype = DType::kFloat32, Device device = Device::Cpu());
  static Tensor Ones(Shape shape, DType dtype = DType::kFloat32, Device device = Device::Cpu());
  static Tensor Full(Shape shape, double value, DType dtype = DType::kFloat32,
                     Device device = Device::Cpu());
  template <class T>
  static Tensor FromVector(Shape shape, const std::vector<T>& values,
                           Device device = Device::Cpu());
  template <class T>
  static Tensor Scalar(T value, Device device = Device::Cpu()) {
    return FromVector<T>({}, {value}, device);
  }
  // Wraps memory owned elsewhere; `owner` keeps it alive. Strides in elements.
  static Tensor Wrap(void* data, DType dtype, Shape shape, Strides strides,
                     std::shared_ptr<void> owner, Device device = Device::Cpu());

  bool defined() const { return block_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const { return device_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int64_t axis) const;  // negative axes count from the end
  int64_t ndim() const { return static_cast<int64_t>(shape_.size()); }
  int64_t numel() const { return NumElements(shape_); }
  bool empty() const { return numel() == 0; }
  const Strides& strides() const { return strides_; }
  int64_t offset() const { return offset_; }  // in elements
  size_t itemsize() const { return SizeOf(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel()) * itemsize(); }
  bool is_contiguous() const;
  // "float32[2,3]"
  std::string ToString() const;

  // Pointer to the first element. data<T>() checks T against dtype().
  void* raw_data() const;
  template <class T>
  T* data() const {
    SINGA_CHECK(DTypeOf<T>() == dtype_, DTypeError,
                "tensor of dtype " << Name(dtype_) << " accessed as " << Name(DTypeOf<T>()));
    return static_cast<T*>(raw_data());
  }
  const std::shared_ptr<Block>& block() const { return block_; }
  // Element at a multi-index (slow; for tests and small host-side reads).
  // These host reads copy a GPU tensor to the host first.
  template <class T>
  T At(const std::vector<int64_t>& index) const;
  // All elements in row-major order, converted to T.
  template <class T>
  std::vector<T> ToVector() const;
  // The single element of a 1-element tensor, converted to T.
  template <class T>
  T Item() const;

  // Views (no copy). Reshape copies only when the strides cannot express the
  // new shape; -1 infers one dimension and 0 keeps the input's (ONNX rules
  // are applied by the Reshape op, not here).
  Tensor Reshape(Shape shape) const;
  Tensor Permute(const std::vector<int64_t>& perm) const;
  Tensor Transpose() const;  // reverses the axes
  Tensor Slice(int64_t axis, int64_t start, int64_t stop, int64_t step = 1) const;
  Tensor BroadcastTo(const Shape& shape) const;
  Tensor Squeeze(int64_t axis) const;
  Tensor Unsqueeze(int64_t axis) const;

  // A dense row-major tensor: this one when already contiguous, else a copy.
  Tensor Contiguous() const;
  // Always a dense copy.
  Tensor Clone() const;
  // Converted copy (this one when the dtype already matches).
  Tensor AsType(DType dtype) const;
  // A dense copy on `device` (this one when it is already there).
  Tensor ToDevice(Device device) const;
  // Copies src's values into this tensor's elements (shapes must match;
  // dtypes are converted).
  void CopyFrom(const Tensor& src);
  void Fill(double value);

  // Autograd. A tensor that requires grad and is an op's input makes the op
  // record itself (while grad mode is on, see autograd/autograd.h).
  bool requires_grad() const { return autograd_ && autograd_->requires_grad; }
  bool stores_grad() const { return autograd_ && autograd_->stores_grad; }
  Tensor& set_requires_grad(bool on);
  Tensor& set_stores_grad(bool on);  // implies requires_grad
  const std::string& name() const;
  Tensor& set_name(std::string name);
  const std::shared_ptr<autograd::Node>& creator() const;
  int output_index() const { return autograd_ ? autograd_->output_index : 0; }
  void set_creator(std::shared_ptr<autograd::Node> node, int output_index);
  // The same storage and view without autograd history or flags.
  Tensor Detach() const;
  // The same logical tensor (identity, name, record, dtype, shape) without
  // its values: records kept for the export hold activations this way.
  // Reading its data throws.
  Tensor Hollow() const;
  bool hollow() const;
  // Identity of the logical tensor (shared by copies), for maps keyed by tensor.
  const void* id() const {
    return autograd_ ? static_cast<const void*>(autograd_.get()) : block_.get();
  }

 private:
  friend std::shared_ptr<Block> internal::BlockOf(const Tensor& t);
  friend void internal::TouchBlocks(std::span<const Tensor> writes);
  AutogradMeta& meta();
  std::shared_ptr<Block> block_;
  std::shared_ptr<AutogradMeta> autograd_;
  Device device_;
  DType dtype_ = DType::kUndefined;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
};

using TensorList = std::vector<Tensor>;

template <class T>
Tensor Tensor::FromVector(Shape shape, const std::vector<T>& values, Device device) {
  if (device.type != DeviceType::kCpu) {
    // A constant: copied now even during a graph capture (shape inference
    // may read it), as Full fills now.
    CaptureSuspendGuard now(device);
    return FromVector<T>(std::move(shape), values).ToDevice(device);
  }
  Tensor t(std::move(shape), DTypeOf<T>(), device);
  SINGA_CHECK(
      static_cast<int64_t>(values.size()) == t.numel(), ShapeError,
      "FromVector: " << values.size() << " values for shape " << singa::ToString(t.shape()));
  T* p = t.data<T>();
  for (size_t i = 0; i < values.size(); ++i) p[i] = values[i];
  return t;
}

template <class T>
T Tensor::At(const std::vector<int64_t>& index) const {
  if (device_.type != DeviceType::kCpu) return ToDevice(Device::Cpu()).At<T>(index);
  SINGA_CHECK(index.size() == shape_.size(), ShapeError,
              "At: index of rank " << index.size() << " for shape " << singa::ToString(shape_));
  int64_t off = 0;
  for (size_t i = 0; i < index.size(); ++i) {
    SINGA_CHECK(index[i] >= 0 && index[i] < shape_[i], ShapeError,
                "At: index out of range for shape " << singa::ToString(shape_));
    off += index[i] * strides_[i];
  }
  if constexpr (std::is_same_v<T, std::string>) {
    return data<std::string>()[off];
  } else {
    return VisitDType(dtype_, [&](auto tag) -> T {
      using S = typename decltype(tag)::type;
      const S v = static_cast<const S*>(raw_data())[off];
      if constexpr (std::is_same_v<S, T>)
        return v;
      else if constexpr (std::is_same_v<S, Half> || std::is_same_v<S, BFloat16>)
        return static_cast<T>(static_cast<float>(v));
      else
        return static_cast<T>(v);
    });
  }
}

template <class T>
std::vector<T> Tensor::ToVector() const {
  // The values now, even during a graph capture: a conversion or copy
  // recorded instead of run would be read before it ran.
  CaptureSuspendGuard now(device_);
  if (device_.type != DeviceType::kCpu) return ToDevice(Device::Cpu()).ToVector<T>();
  Tensor c = AsType(DTypeOf<T>()).Contiguous();
  const T* p = c.data<T>();
  return std::vector<T>(p, p + c.numel());
}

template <class T>
T Tensor::Item() const {
  SINGA_CHECK(numel() == 1, ShapeError,
              "Item: tensor of shape " << singa::ToString(shape_) << " has " << numel()
                                       << " elements, not 1");
  return ToVector<T>()[0];
}

}  // namespace singa
