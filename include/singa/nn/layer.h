// Layer: a piece of a model with named parameters and sub-layers (SINGA's
// layer.Layer). Parameters are created lazily from the first input's shape,
// so `Linear(10)` needs no input size. Parameters and sub-layers are
// registered by name; the dotted path ("block1.conv.W") is the key of
// GetParams/GetStates, the optimizer's state key and the ONNX initializer
// name.
//
//   class Mlp : public nn::Layer {
//    public:
//     Mlp() { fc1_ = Add("fc1", std::make_shared<nn::Linear>(64));
//             fc2_ = Add("fc2", std::make_shared<nn::Linear>(10)); }
//     TensorList Forward(const TensorList& x) override {
//       return (*fc2_)(Relu((*fc1_)(x[0])));
//     }
//    private:
//     std::shared_ptr<nn::Linear> fc1_, fc2_;
//   };
//   Mlp m;  Tensor y = m(x);  m.GetParams();   // {"fc1.W", "fc1.b", "fc2.W", "fc2.b"}
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "singa/core/tensor.h"

namespace singa::nn {

using TensorMap = std::map<std::string, Tensor>;
// Named tensors in registration order (a layer's own, then its sub-layers').
using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

class Layer {
 public:
  Layer() = default;
  virtual ~Layer() = default;
  Layer(const Layer&) = delete;
  Layer& operator=(const Layer&) = delete;

  // Initializes on the first call (Initialize), then runs Forward.
  TensorList operator()(const TensorList& inputs);
  Tensor operator()(const Tensor& x) { return (*this)(TensorList{x})[0]; }

  // Trainable parameters by dotted name (shared with the layer: changing
  // their values changes the layer).
  TensorMap GetParams() const;
  // Copies values into the named parameters; names must exist and shapes match.
  void SetParams(const TensorMap& values);
  // Parameters plus buffers (BatchNorm's running statistics).
  TensorMap GetStates() const;
  void SetStates(const TensorMap& values);
  // GetParams and GetStates in registration order.
  NamedTensors Params() const;
  NamedTensors States() const;

  bool initialized() const { return initialized_; }
  // Gives every parameter and buffer its dotted path as Tensor::name()
  // (Model::Compile does this for the whole model).
  void NameTensors(const std::string& prefix = "");

 protected:
  // Creates parameters from the first inputs' shapes.
  virtual void Initialize(const TensorList& inputs) {}
  virtual TensorList Forward(const TensorList& inputs) = 0;

  // Registration; returns the registered object.
  Tensor& AddParam(const std::string& name, Tensor t);
  Tensor& AddBuffer(const std::string& name, Tensor t);
  template <class L>
  std::shared_ptr<L> Add(const std::string& name, std::shared_ptr<L> layer) {
    AddLayer(name, layer);
    return layer;
  }
  void AddLayer(const std::string& name, std::shared_ptr<Layer> layer);
  // Drops the parameter, buffer or sub-layer registered as `name`, if any.
  void Remove(const std::string& name);
  // For layers whose call protocol is not operator() (the Python binding's).
  void set_initialized() { initialized_ = true; }

 private:
  void Collect(const std::string& prefix, bool with_buffers, NamedTensors& out) const;
  void Assign(const TensorMap& values, bool with_buffers, const char* what);

  bool initialized_ = false;
  std::vector<std::pair<std::string, Tensor>> params_, buffers_;
  std::vector<std::pair<std::string, std::shared_ptr<Layer>>> layers_;
};

// A layer that runs a function of its inputs (activations, Flatten, ...).
class Lambda : public Layer {
 public:
  using Fn = std::function<TensorList(const TensorList&)>;
  explicit Lambda(Fn fn) : fn_(std::move(fn)) {}

 protected:
  TensorList Forward(const TensorList& x) override { return fn_(x); }

 private:
  Fn fn_;
};

// Layers run in order, each on the previous one's outputs.
class Sequential : public Layer {
 public:
  Sequential& Append(std::shared_ptr<Layer> layer);

 protected:
  TensorList Forward(const TensorList& x) override;

 private:
  std::vector<std::shared_ptr<Layer>> seq_;
};

}  // namespace singa::nn
