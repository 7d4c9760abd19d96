// Linear, Gemm and Embedding layers.
#include <cmath>

#include "singa/core/random.h"
#include "singa/nn/functional.h"
#include "singa/nn/layers.h"

namespace singa::nn {

namespace {
// SINGA's initialization for dense weights.
Tensor GaussianWeight(Shape shape, int64_t fan_in, int64_t fan_out, const Tensor& like) {
  Tensor w(std::move(shape), like.dtype(), like.device());
  Gaussian(w, 0.0, std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)));
  return w;
}

int64_t LastDim(const char* layer, const Tensor& x) {
  SINGA_CHECK(x.ndim() >= 1, ShapeError,
              layer << ": input must have a feature axis, got " << x.ToString());
  return x.dim(-1);
}
}  // namespace

void Linear::Initialize(const TensorList& x) {
  const int64_t in = LastDim("Linear", x.at(0));
  SINGA_CHECK(in_ < 0 || in_ == in, ShapeError,
              "Linear(" << in_ << ", " << out_ << "): input " << x[0].ToString() << " has " << in
                        << " features");
  in_ = in;
  W_ = AddParam("W", GaussianWeight({in_, out_}, in_, out_, x[0]));
  if (bias_) b_ = AddParam("b", Tensor::Zeros({out_}, x[0].dtype(), x[0].device()));
}

TensorList Linear::Forward(const TensorList& x) {
  const Tensor& in = x.at(0);
  SINGA_CHECK(LastDim("Linear", in) == in_, ShapeError,
              "Linear(" << in_ << ", " << out_ << "): input " << in.ToString() << " has "
                        << in.dim(-1) << " features");
  if (in.ndim() == 2) return CallOp("Gemm", bias_ ? TensorList{in, W_, b_} : TensorList{in, W_});
  Tensor y = Call1("MatMul", {in, W_});
  return {bias_ ? Call1("Add", {y, b_}) : y};
}

void Gemm::Initialize(const TensorList& x) {
  const Tensor& a = x.at(0);
  SINGA_CHECK(a.ndim() == 2, ShapeError, "Gemm: input must be 2-D, got " << a.ToString());
  const int64_t in = o_.trans_a ? a.dim(0) : a.dim(1);
  W_ = AddParam("W", GaussianWeight(o_.trans_b ? Shape{out_, in} : Shape{in, out_}, in, out_, a));
  if (o_.bias) b_ = AddParam("b", Tensor::Zeros({out_}, a.dtype(), a.device()));
}

TensorList Gemm::Forward(const TensorList& x) {
  AttrMap attrs = {{"alpha", o_.alpha},
                   {"beta", o_.beta},
                   {"transA", int64_t{o_.trans_a}},
                   {"transB", int64_t{o_.trans_b}}};
  return CallOp("Gemm", o_.bias ? TensorList{x.at(0), W_, b_} : TensorList{x.at(0), W_}, attrs);
}

void Embedding::Initialize(const TensorList& x) {
  Tensor w({in_, out_}, DType::kFloat32, x.at(0).device());
  Gaussian(w, 0.0, 1.0);
  W_ = AddParam("W", w);
}

TensorList Embedding::Forward(const TensorList& x) {
  SINGA_CHECK(IsInteger(x.at(0).dtype()), DTypeError,
              "Embedding: indices must be integers, got " << x[0].ToString());
  return CallOp("Gather", {W_, x[0]});
}

}  // namespace singa::nn
