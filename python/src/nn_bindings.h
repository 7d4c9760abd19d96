// Trampolines that let Python subclass nn::Layer, nn::Model and
// sonnx::SONNXModel: the C++ side (Layer::operator(), Model::Call and
// Compile) calls a Python subclass's initialize, forward and
// train_one_batch through the `_*_from_cpp` adapters of
// python/singa/layer.py and model.py, which turn the tensor lists into the
// arguments the Python method takes and its results back into a list.
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/trampoline.h>

#include <memory>
#include <string>
#include <utility>

#include "singa/nn/model.h"

namespace singa {

// A layer's protected members, for the binding (a member pointer taken
// through a derived class reaches them).
struct LayerAccess {
  static void SetInitialized(nn::Layer& l) { (l.*(&Access::set_initialized))(); }
  static void AddParam(nn::Layer& l, const std::string& n, Tensor t) {
    (l.*(&Access::AddParam))(n, std::move(t));
  }
  static void AddBuffer(nn::Layer& l, const std::string& n, Tensor t) {
    (l.*(&Access::AddBuffer))(n, std::move(t));
  }
  static void AddLayer(nn::Layer& l, const std::string& n, std::shared_ptr<nn::Layer> sub) {
    (l.*(&Access::AddLayer))(n, std::move(sub));
  }
  static void Remove(nn::Layer& l, const std::string& n) { (l.*(&Access::Remove))(n); }

 private:
  struct Access : nn::Layer {
    using nn::Layer::AddBuffer;
    using nn::Layer::AddLayer;
    using nn::Layer::AddParam;
    using nn::Layer::Remove;
    using nn::Layer::set_initialized;
  };
};

template <class Base>
struct PyLayer : Base {
  NB_TRAMPOLINE(Base);
  void Initialize(const TensorList& x) override {
    NB_OVERRIDE_NAME("_initialize_from_cpp", Initialize, x);
  }
  TensorList Forward(const TensorList& x) override {
    NB_OVERRIDE_PURE_NAME("_forward_from_cpp", Forward, x);
  }
};

template <class Base>
struct PyModel : PyLayer<Base> {
  using PyLayer<Base>::PyLayer;
  using NBBase = Base;
  using PyLayer<Base>::nb_trampoline;
  TensorList TrainOneBatch(const TensorList& x) override {
    NB_OVERRIDE_NAME("_train_from_cpp", TrainOneBatch, x);
  }
};

}  // namespace singa
