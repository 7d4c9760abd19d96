// Model: a Layer that trains (SINGA's model.Model). A subclass defines
// Forward and TrainOneBatch; Compile initializes the parameters from
// placeholder inputs; Call runs TrainOneBatch in training mode and Forward
// otherwise. In graph mode the first call is captured through Device::Exec
// and later calls replay the recording natively, with one memory plan.
//
//   class Net : public nn::Model {
//     TensorList Forward(const TensorList& x) override { return (*fc_)(x); }
//     TensorList TrainOneBatch(const TensorList& xy) override {
//       Tensor out = Forward({xy[0]})[0];
//       Tensor loss = nn::SoftmaxCrossEntropy(out, xy[1]);
//       optimizer().BackwardAndUpdate(loss);
//       return {out, loss};
//     }
//   };
//   net.SetOptimizer(std::make_shared<opt::SGD>(opt::SGD::Options{.lr = 0.05}));
//   net.Compile({x}, /*is_train=*/true, /*use_graph=*/true);
//   for (...) { x.CopyFrom(batch); y.CopyFrom(labels); auto r = net.Call({x, y}); }
//   net.SaveStates("net.states");
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "singa/nn/layer.h"
#include "singa/opt/optimizer.h"

namespace singa::nn {

// A step captured once and replayed: Capture runs fn on `inputs` while the
// inputs' device records, plans the memory of what it created, keeps the
// recording and runs it once; Replay copies new inputs (of the captured
// shapes) into the captured ones and runs the recording again. Each call
// returns copies of the outputs, recorded as one application of the step,
// which the ONNX export expands into the ops of the capture.
class GraphStep {
 public:
  using Fn = std::function<TensorList(const TensorList&)>;
  bool captured() const { return captured_; }
  TensorList Capture(const TensorList& inputs, const Fn& fn);
  TensorList Replay(const TensorList& inputs);
  void Reset();
  size_t arena_bytes() const { return arena_bytes_; }
  size_t num_ops() const { return ops_.size(); }

 private:
  void Run();
  TensorList Results(const TensorList& inputs) const;
  bool captured_ = false;
  Device device_;
  TensorList inputs_, outputs_;
  std::shared_ptr<const void> record_;  // the capture's inputs and recorded outputs
  std::vector<DeviceRuntime::Op> ops_;
  size_t arena_bytes_ = 0;
};

class Model : public Layer {
 public:
  // Initializes every layer by running Forward on `inputs` (their shapes
  // matter, not their values), names all parameters and buffers by their
  // dotted paths, and sets the training and graph modes.
  void Compile(const TensorList& inputs, bool is_train = true, bool use_graph = false,
               bool sequential = false);
  // TrainOneBatch in training mode, Forward otherwise. In graph mode the
  // first call with each input signature (shapes, dtypes) is captured and
  // later calls with that signature replay it. `tag` is part of the
  // signature: what else the step depends on (the Python binding passes the
  // step's arguments that are not tensors).
  TensorList Call(const TensorList& inputs, const std::string& tag = "");
  // The key of the step Call runs for these inputs and tag, and whether that
  // step is captured already (the next Call replays it).
  std::string StepKey(const TensorList& inputs, const std::string& tag = "") const;
  bool HasStep(const std::string& key) const { return steps_.count(key) > 0; }
  // Override with one training step; the default throws.
  virtual TensorList TrainOneBatch(const TensorList& inputs);

  void Train(bool mode = true) { training_ = mode; }
  void Eval() { Train(false); }
  bool training() const { return training_; }
  // Switches graph mode; a change drops the captured steps. `sequential` is
  // SINGA's: keep the recorded order. One CPU stream runs the recorded order
  // either way (it is a dependency order).
  void Graph(bool mode = true, bool sequential = false);
  bool graph_mode() const { return use_graph_; }
  bool sequential() const { return sequential_; }

  void SetOptimizer(std::shared_ptr<opt::Optimizer> optimizer) {
    optimizer_ = std::move(optimizer);
  }
  opt::Optimizer& optimizer();

  // Writes the states (parameters and buffers) and `aux` (named tensors of
  // the caller's) to `path` through a temporary file renamed into place, so
  // an interrupted save leaves the previous file whole.
  void SaveStates(const std::string& path, const TensorMap& aux = {}) const;
  // Loads states saved by SaveStates; names, shapes and dtypes must match the
  // model's (the error lists every difference). Returns the aux tensors.
  TensorMap LoadStates(const std::string& path);

  // The captured steps of graph mode: one per mode and input signature.
  size_t num_captured_steps() const { return steps_.size(); }
  const std::map<std::string, GraphStep>& captured_steps() const { return steps_; }

 private:
  bool training_ = false, use_graph_ = false, sequential_ = false;
  std::shared_ptr<opt::Optimizer> optimizer_;
  std::map<std::string, GraphStep> steps_;
};

// The states file of SaveStates: SINGA's checkpoint (a zip of
// tensor_dict.npz and states_attr.json, the model's states with
// state_type 0 and the aux states with 1), written atomically. Loading also
// reads the earlier "SINGAST1" files. IOError names what is wrong.
struct StatesFile {
  TensorMap states, aux;
};
void SaveStatesFile(const std::string& path, const TensorMap& states, const TensorMap& aux = {});
StatesFile LoadStatesFile(const std::string& path);

}  // namespace singa::nn
