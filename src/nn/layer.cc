#include "singa/nn/layer.h"

#include "singa/core/error.h"
#include "singa/ops/tape.h"

namespace singa::nn {

TensorList Layer::operator()(const TensorList& inputs) {
  if (!initialized_) {
    // Parameters are leaves: creating them is never part of the tape.
    {
      NoGradGuard no_grad;
      Initialize(inputs);
    }
    initialized_ = true;
  }
  return Forward(inputs);
}

Tensor& Layer::AddParam(const std::string& name, Tensor t) {
  t.set_stores_grad(true);
  params_.emplace_back(name, std::move(t));
  return params_.back().second;
}

Tensor& Layer::AddBuffer(const std::string& name, Tensor t) {
  // Naming gives t its autograd record now, so the layer's copies share the
  // dotted-path name NameParams sets later (export names initializers by it).
  t.set_name(name);
  buffers_.emplace_back(name, std::move(t));
  return buffers_.back().second;
}

void Layer::AddLayer(const std::string& name, std::shared_ptr<Layer> layer) {
  SINGA_CHECK(layer != nullptr, Error, "Layer: sub-layer '" << name << "' is null");
  for (auto& [n, l] : layers_)
    SINGA_CHECK(n != name, Error, "Layer: a sub-layer named '" << name << "' already exists");
  layers_.emplace_back(name, std::move(layer));
}

void Layer::Remove(const std::string& name) {
  auto drop = [&name](auto& entries) {
    std::erase_if(entries, [&name](const auto& e) { return e.first == name; });
  };
  drop(params_);
  drop(buffers_);
  drop(layers_);
}

void Layer::Collect(const std::string& prefix, bool with_buffers, NamedTensors& out) const {
  for (auto& [n, t] : params_) out.emplace_back(prefix + n, t);
  if (with_buffers)
    for (auto& [n, t] : buffers_) out.emplace_back(prefix + n, t);
  for (auto& [n, l] : layers_) l->Collect(prefix + n + ".", with_buffers, out);
}

NamedTensors Layer::Params() const {
  NamedTensors out;
  Collect("", false, out);
  return out;
}

NamedTensors Layer::States() const {
  NamedTensors out;
  Collect("", true, out);
  return out;
}

TensorMap Layer::GetParams() const {
  NamedTensors all = Params();
  return TensorMap(all.begin(), all.end());
}

TensorMap Layer::GetStates() const {
  NamedTensors all = States();
  return TensorMap(all.begin(), all.end());
}

void Layer::Assign(const TensorMap& values, bool with_buffers, const char* what) {
  const TensorMap mine = with_buffers ? GetStates() : GetParams();
  for (auto& [name, v] : values) {
    auto it = mine.find(name);
    SINGA_CHECK(it != mine.end(), ShapeError,
                what << ": the model has no " << (with_buffers ? "state" : "parameter")
                     << " named '" << name << "'");
    SINGA_CHECK(it->second.shape() == v.shape(), ShapeError,
                what << ": '" << name << "' is " << it->second.ToString() << ", the value is "
                     << v.ToString());
    Tensor target = it->second;
    target.CopyFrom(v);
  }
}

void Layer::SetParams(const TensorMap& values) { Assign(values, false, "set_params"); }
void Layer::SetStates(const TensorMap& values) { Assign(values, true, "set_states"); }

void Layer::NameTensors(const std::string& prefix) {
  for (auto& [n, t] : params_) t.set_name(prefix + n);
  for (auto& [n, t] : buffers_) t.set_name(prefix + n);
  for (auto& [n, l] : layers_) l->NameTensors(prefix + n + ".");
}

Sequential& Sequential::Append(std::shared_ptr<Layer> layer) {
  AddLayer(std::to_string(seq_.size()), layer);
  seq_.push_back(std::move(layer));
  return *this;
}

TensorList Sequential::Forward(const TensorList& x) {
  TensorList y = x;
  for (auto& l : seq_) y = (*l)(y);
  return y;
}

}  // namespace singa::nn
