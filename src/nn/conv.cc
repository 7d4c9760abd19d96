// Conv2d, SeparableConv2d, Pooling, BatchNorm2d and Dropout layers.
#include <cmath>

#include "singa/core/random.h"
#include "singa/nn/functional.h"
#include "singa/nn/layers.h"
#include "singa/ops/tape.h"

namespace singa::nn {

namespace {
std::vector<int64_t> OnnxPads(const std::vector<int64_t>& padding, size_t dims) {
  std::vector<int64_t> p = padding;
  if (p.empty()) p.assign(dims, 0);
  if (p.size() == 1) p.assign(dims, p[0]);
  SINGA_CHECK(p.size() == dims, ShapeError,
              "padding must have 1 or " << dims << " values, got " << p.size());
  std::vector<int64_t> pads = p;  // ONNX: begins then ends
  pads.insert(pads.end(), p.begin(), p.end());
  return pads;
}

void CheckSpatial(const char* layer, const Tensor& x, int64_t dims) {
  SINGA_CHECK(x.ndim() == dims + 2, ShapeError,
              layer << ": input must be [N, C" << (dims == 2 ? ", H, W" : ", L") << "], got "
                    << x.ToString());
}
}  // namespace

Conv2d::Conv2d(int64_t nb_kernels, std::vector<int64_t> kernel_size, Options o)
    : out_(nb_kernels), kernel_(std::move(kernel_size)), o_(std::move(o)) {
  if (kernel_.size() == 1) kernel_.push_back(kernel_[0]);
  SINGA_CHECK(kernel_.size() == 2, ShapeError, "Conv2d: kernel_size must have 1 or 2 values");
  SINGA_CHECK(o_.activation == "NOTSET" || o_.activation == "RELU", Error,
              "Conv2d: activation must be NOTSET or RELU, got " << o_.activation);
  for (auto* v : {&o_.stride, &o_.dilation})
    if (v->size() == 1) v->push_back((*v)[0]);
}

void Conv2d::Initialize(const TensorList& x) {
  CheckSpatial("Conv2d", x.at(0), 2);
  const int64_t c = x[0].dim(1);
  SINGA_CHECK(o_.group >= 1 && c % o_.group == 0 && out_ % o_.group == 0, ShapeError,
              "Conv2d: group " << o_.group << " must divide the input channels (" << c
                               << ") and nb_kernels (" << out_ << ")");
  const int64_t fan_in = c / o_.group * kernel_[0] * kernel_[1];
  Tensor w({out_, c / o_.group, kernel_[0], kernel_[1]}, x[0].dtype(), x[0].device());
  Gaussian(w, 0.0, std::sqrt(2.0 / static_cast<double>(fan_in + out_)));
  W_ = AddParam("W", w);
  if (o_.bias) b_ = AddParam("b", Tensor::Zeros({out_}, x[0].dtype(), x[0].device()));
}

TensorList Conv2d::Forward(const TensorList& x) {
  CheckSpatial("Conv2d", x.at(0), 2);
  AttrMap attrs = {{"strides", o_.stride}, {"dilations", o_.dilation}, {"group", o_.group}};
  if (o_.pad_mode == "NOTSET")
    attrs["pads"] = OnnxPads(o_.padding, 2);
  else
    attrs["auto_pad"] = o_.pad_mode;
  Tensor y = Call1("Conv", o_.bias ? TensorList{x[0], W_, b_} : TensorList{x[0], W_}, attrs);
  return {o_.activation == "RELU" ? Call1("Relu", {y}) : y};
}

SeparableConv2d::SeparableConv2d(int64_t nb_kernels, int64_t kernel_size, Conv2d::Options o)
    : out_(nb_kernels), kernel_(kernel_size), o_(std::move(o)) {}

void SeparableConv2d::Initialize(const TensorList& x) {
  CheckSpatial("SeparableConv2d", x.at(0), 2);
  const int64_t c = x[0].dim(1);
  Conv2d::Options dw = o_;
  dw.group = c;
  depthwise_ = Add("depthwise", std::make_shared<Conv2d>(c, kernel_, dw));
  Conv2d::Options pw;
  pw.bias = o_.bias;
  pointwise_ = Add("pointwise", std::make_shared<Conv2d>(out_, 1, pw));
}

TensorList SeparableConv2d::Forward(const TensorList& x) { return (*pointwise_)((*depthwise_)(x)); }

Pooling::Pooling(std::vector<int64_t> kernel_size, Options o)
    : kernel_(std::move(kernel_size)), o_(std::move(o)) {
  SINGA_CHECK(!kernel_.empty() && kernel_.size() <= 2, ShapeError,
              "Pooling: kernel_size must have 1 or 2 values");
  if (o_.stride.empty()) o_.stride = kernel_;
  if (o_.stride.size() == 1) o_.stride.assign(kernel_.size(), o_.stride[0]);
}

TensorList Pooling::Forward(const TensorList& x) {
  const auto dims = static_cast<int64_t>(kernel_.size());
  CheckSpatial(o_.is_max ? "MaxPool" : "AvgPool", x.at(0), dims);
  AttrMap attrs = {{"kernel_shape", kernel_}, {"strides", o_.stride}};
  if (o_.pad_mode == "NOTSET")
    attrs["pads"] = OnnxPads(o_.padding, kernel_.size());
  else
    attrs["auto_pad"] = o_.pad_mode;
  return {Call1(o_.is_max ? "MaxPool" : "AveragePool", {x[0]}, attrs)};
}

void BatchNorm2d::Initialize(const TensorList& x) {
  const Tensor& in = x.at(0);
  SINGA_CHECK(in.ndim() >= 2, ShapeError,
              "BatchNorm2d: input must be [N, C, ...], got " << in.ToString());
  const int64_t c = in.dim(1);
  scale_ = AddParam("scale", Tensor::Ones({c}, in.dtype(), in.device()));
  bias_ = AddParam("bias", Tensor::Zeros({c}, in.dtype(), in.device()));
  running_mean_ = AddBuffer("running_mean", Tensor::Zeros({c}, in.dtype(), in.device()));
  running_var_ = AddBuffer("running_var", Tensor::Ones({c}, in.dtype(), in.device()));
}

TensorList BatchNorm2d::Forward(const TensorList& x) {
  const bool training = TrainingMode();
  AttrMap attrs = {
      {"epsilon", epsilon_}, {"momentum", momentum_}, {"training_mode", int64_t{training}}};
  TensorList out =
      CallOp("BatchNormalization", {x.at(0), scale_, bias_, running_mean_, running_var_}, attrs,
             kLatestOpset, training ? 3 : 1);
  if (training) {
    running_mean_.CopyFrom(out[1]);
    running_var_.CopyFrom(out[2]);
  }
  return {out[0]};
}

TensorList Dropout::Forward(const TensorList& x) {
  if (!TrainingMode() || ratio_ == 0.0f) return {x.at(0)};
  Tensor ratio = Tensor::Scalar<float>(ratio_, x[0].device());
  Tensor on = Tensor::Scalar<bool>(true, x[0].device());
  return {Call1("Dropout", {x[0], ratio, on})};
}

}  // namespace singa::nn
