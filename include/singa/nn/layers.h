// The built-in layers of SINGA's layer module. Sizes of the input side are
// taken from the first input (lazy initialization); weights are initialized
// as SINGA does (Gaussian with std sqrt(2 / (fan_in + fan_out)) for Linear
// and Conv2d, U(-1/sqrt(H), 1/sqrt(H)) for the recurrent layers).
//
//   auto conv = std::make_shared<nn::Conv2d>(32, 3, nn::Conv2d::Options{.padding = 1});
//   auto fc = std::make_shared<nn::Linear>(10);
//   Tensor y = (*fc)(Call1("Flatten", {(*conv)(x)}));
//
// Dropout and BatchNorm2d follow TrainingMode() (see ops/tape.h).
#pragma once

#include <string>
#include <vector>

#include "singa/nn/layer.h"

namespace singa::nn {

// An input size taken from the first input.
inline constexpr int64_t kLazy = -1;

// y = x W + b; W is [in, out] (SINGA's layout). x may have any rank >= 1.
class Linear : public Layer {
 public:
  explicit Linear(int64_t out_features) : out_(out_features) {}
  // in_features may be kLazy.
  Linear(int64_t in_features, int64_t out_features, bool bias = true)
      : in_(in_features), out_(out_features), bias_(bias) {}

 protected:
  void Initialize(const TensorList& x) override;
  TensorList Forward(const TensorList& x) override;

 private:
  int64_t in_ = kLazy, out_;
  bool bias_ = true;
  Tensor W_, b_;
};

// ONNX Gemm as a layer: y = alpha * op(x) op(W) + beta * b, W [out, in] when trans_b.
class Gemm : public Layer {
 public:
  struct Options {
    float alpha = 1.0f, beta = 1.0f;
    bool trans_a = false, trans_b = true, bias = true;
  };
  explicit Gemm(int64_t nb_kernels, Options o) : out_(nb_kernels), o_(o) {}
  explicit Gemm(int64_t nb_kernels) : Gemm(nb_kernels, Options{}) {}

 protected:
  void Initialize(const TensorList& x) override;
  TensorList Forward(const TensorList& x) override;

 private:
  int64_t out_;
  Options o_;
  Tensor W_, b_;
};

// Rows of W [input_dim, output_dim] picked by integer indices.
class Embedding : public Layer {
 public:
  Embedding(int64_t input_dim, int64_t output_dim) : in_(input_dim), out_(output_dim) {}

 protected:
  void Initialize(const TensorList& x) override;
  TensorList Forward(const TensorList& x) override;

 private:
  int64_t in_, out_;
  Tensor W_;
};

// 2-D convolution, NCHW; W is [nb_kernels, C / group, kh, kw].
class Conv2d : public Layer {
 public:
  struct Options {
    std::vector<int64_t> stride = {1, 1};
    std::vector<int64_t> padding = {0, 0};
    std::vector<int64_t> dilation = {1, 1};
    int64_t group = 1;
    bool bias = true;
    std::string pad_mode = "NOTSET";    // ONNX auto_pad: NOTSET, SAME_UPPER, SAME_LOWER, VALID
    std::string activation = "NOTSET";  // or "RELU"
  };
  Conv2d(int64_t nb_kernels, std::vector<int64_t> kernel_size, Options o);
  Conv2d(int64_t nb_kernels, int64_t kernel_size, Options o)
      : Conv2d(nb_kernels, {kernel_size, kernel_size}, std::move(o)) {}
  Conv2d(int64_t nb_kernels, int64_t kernel_size) : Conv2d(nb_kernels, kernel_size, Options{}) {}

 protected:
  void Initialize(const TensorList& x) override;
  TensorList Forward(const TensorList& x) override;

 private:
  int64_t out_;
  std::vector<int64_t> kernel_;
  Options o_;
  Tensor W_, b_;
};

// Depthwise convolution (group = channels) followed by a 1x1 convolution.
class SeparableConv2d : public Layer {
 public:
  SeparableConv2d(int64_t nb_kernels, int64_t kernel_size, Conv2d::Options o);

 protected:
  void Initialize(const TensorList& x) override;
  TensorList Forward(const TensorList& x) override;

 private:
  int64_t out_, kernel_;
  Conv2d::Options o_;
  std::shared_ptr<Conv2d> depthwise_, pointwise_;
};

// Batch normalization over dim 1 of [N, C, ...]: batch statistics in training
// mode (updating running_x = momentum * running_x + (1 - momentum) * batch_x),
// the running ones otherwise.
class BatchNorm2d : public Layer {
 public:
  explicit BatchNorm2d(float momentum = 0.9f, float epsilon = 1e-5f)
      : momentum_(momentum), epsilon_(epsilon) {}

 protected:
  void Initialize(const TensorList& x) override;
  TensorList Forward(const TensorList& x) override;

 private:
  float momentum_, epsilon_;
  Tensor scale_, bias_, running_mean_, running_var_;
};

// Max or average pooling over the trailing 1 or 2 dims.
class Pooling : public Layer {
 public:
  struct Options {
    std::vector<int64_t> stride;  // default: the kernel size
    std::vector<int64_t> padding;
    bool is_max = true;
    std::string pad_mode = "NOTSET";
  };
  Pooling(std::vector<int64_t> kernel_size, Options o);

 protected:
  TensorList Forward(const TensorList& x) override;

 private:
  std::vector<int64_t> kernel_;
  Options o_;
};

// Drops elements with probability `ratio` in training mode (scaling the rest
// by 1 / (1 - ratio)); the identity otherwise.
class Dropout : public Layer {
 public:
  explicit Dropout(float ratio = 0.5f) : ratio_(ratio) {}

 protected:
  TensorList Forward(const TensorList& x) override;

 private:
  float ratio_;
};

// Elman RNN and LSTM over a sequence [T, N, input] (or [N, T, input] with
// batch_first), parameters named and laid out as torch.nn names them
// (weight_ih_l0 [G*H, in], weight_hh_l0, bias_ih_l0, bias_hh_l0, ..._reverse;
// LSTM gates i, f, g, o). Forward takes x and optionally h0 (and c0)
// [layers * directions, N, H]; returns y [T, N, directions * H], h_n (and c_n).
class RNNBase : public Layer {
 public:
  struct Options {
    int64_t num_layers = 1;
    std::string nonlinearity = "tanh";  // RNN only: tanh or relu
    bool bias = true;
    bool batch_first = false;
    float dropout = 0.0f;  // between layers, in training mode
    bool bidirectional = false;
  };

 protected:
  RNNBase(int64_t gates, int64_t input_size, int64_t hidden_size, Options o);
  void Initialize(const TensorList& x) override;
  TensorList Forward(const TensorList& x) override;

 private:
  struct Cell {
    Tensor w_ih, w_hh, b_ih, b_hh;
  };
  // One direction of one layer; returns the outputs per step (in time order).
  TensorList RunDirection(const Cell& cell, const Tensor& x, Tensor& h, Tensor& c,
                          bool reverse) const;
  int64_t gates_, input_, hidden_;
  Options o_;
  std::vector<Cell> cells_;  // layer-major, then direction
};

class RNN : public RNNBase {
 public:
  RNN(int64_t input_size, int64_t hidden_size, Options o)
      : RNNBase(1, input_size, hidden_size, o) {}
  RNN(int64_t input_size, int64_t hidden_size) : RNN(input_size, hidden_size, Options{}) {}
};

class LSTM : public RNNBase {
 public:
  LSTM(int64_t input_size, int64_t hidden_size, Options o)
      : RNNBase(4, input_size, hidden_size, o) {}
  LSTM(int64_t input_size, int64_t hidden_size) : LSTM(input_size, hidden_size, Options{}) {}
};

}  // namespace singa::nn
