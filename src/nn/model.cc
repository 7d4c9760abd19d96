#include "singa/nn/model.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "singa/core/file.h"
#include "singa/ops/op.h"
#include "singa/ops/tape.h"

namespace singa::nn {

// ---- GraphStep ----------------------------------------------------------

namespace {
// What a step hands out, and what it reads: copies, so that a replay
// rewrites only the step's own tensors, never one a caller holds.
TensorList Copies(const TensorList& outputs) {
  TensorList out;
  out.reserve(outputs.size());
  for (const Tensor& t : outputs) out.push_back(t.defined() ? t.Clone() : t);
  return out;
}

// The record on a step's results: the capture's inputs and its outputs with
// their records (OpSchema::expand).
struct StepAttrs {
  TensorList inputs, outputs;
};

const OpSchema& StepOp() {
  static const OpSchema* schema = [] {
    OpBuilder<StepAttrs>("GraphStep")
        .domain("ai.singa")
        .inputs({"inputs..."})
        .outputs({"outputs..."})
        .expand([](const StepAttrs& a, const TensorList&) {
          return OpSchema::Expansion{a.inputs, a.outputs};
        });
    return OpRegistry::Find("GraphStep", kLatestOpset, "ai.singa");
  }();
  return *schema;
}
// Registered with the other ops, so the registry lists it.
[[maybe_unused]] const bool kStepRegistered = (StepOp(), true);
}  // namespace

TensorList GraphStep::Results(const TensorList& inputs) const {
  TensorList out = Copies(outputs_);
  for (const Tensor& t : out)
    if (!t.defined()) return out;
  internal::MaybeRecord(StepOp(), record_, inputs, out);
  return out;
}

TensorList GraphStep::Capture(const TensorList& inputs, const Fn& fn) {
  SINGA_CHECK(!inputs.empty() && inputs[0].defined(), Error, "graph mode: a step needs inputs");
  Reset();
  device_ = inputs[0].device();
  SINGA_CHECK(!device_.graph_enabled(), Error,
              "graph mode: " << device_.ToString() << " is already capturing a graph");
  // The step reads inputs of its own, into which each replay copies the
  // call's: it never writes a tensor the caller handed it.
  inputs_ = Copies(inputs);
  device_.ResetGraph();
  device_.EnableGraph(true);
  TensorList outputs;
  try {
    outputs = fn(inputs_);
  } catch (...) {
    device_.EnableGraph(false);
    device_.ResetGraph();
    throw;
  }
  device_.EnableGraph(false);
  record_ = std::make_shared<const StepAttrs>(StepAttrs{inputs_, outputs});
  // The results stand for the step, not for the tape of its first run.
  for (Tensor& t : outputs)
    if (t.defined()) t = t.Detach();
  outputs_ = outputs;
  arena_bytes_ = device_.PlanGraphMemory(outputs_);
  ops_ = device_.runtime().TakeGraph();
  captured_ = true;
  Run();
  return Results(inputs);
}

TensorList GraphStep::Replay(const TensorList& inputs) {
  SINGA_CHECK(captured_, Error, "graph mode: no step was captured");
  SINGA_CHECK(inputs.size() == inputs_.size(), Error,
              "graph mode: the step was captured with " << inputs_.size() << " inputs, got "
                                                        << inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    SINGA_CHECK(inputs[i].shape() == inputs_[i].shape() && inputs[i].dtype() == inputs_[i].dtype(),
                ShapeError,
                "graph mode: input " << i << " is " << inputs[i].ToString()
                                     << " but the step was captured with " << inputs_[i].ToString()
                                     << "; turn graph mode off (or on again) to recapture");
    inputs_[i].CopyFrom(inputs[i]);
  }
  Run();
  return Results(inputs);
}

void GraphStep::Run() { DeviceRuntime::Replay(ops_); }

void GraphStep::Reset() {
  captured_ = false;
  inputs_.clear();
  outputs_.clear();
  record_.reset();
  ops_.clear();
  arena_bytes_ = 0;
}

// ---- Model --------------------------------------------------------------

void Model::Compile(const TensorList& inputs, bool is_train, bool use_graph, bool sequential) {
  {
    NoGradGuard no_grad;
    TrainingModeGuard mode(false);
    (*this)(inputs);
  }
  NameTensors();
  training_ = is_train;
  Graph(use_graph, sequential);
}

std::string Model::StepKey(const TensorList& inputs, const std::string& tag) const {
  std::string key = training_ ? "train" : "eval";
  for (const Tensor& t : inputs) key.append(";").append(t.ToString());
  return key.append(";").append(tag);
}

TensorList Model::Call(const TensorList& inputs, const std::string& tag) {
  GradModeGuard grad(training_);
  TrainingModeGuard mode(training_);
  auto run = [this](const TensorList& x) { return training_ ? TrainOneBatch(x) : (*this)(x); };
  if (!use_graph_) return run(inputs);
  const std::string key = StepKey(inputs, tag);
  if (auto it = steps_.find(key); it != steps_.end()) return it->second.Replay(inputs);
  // Kept only once captured: a step that failed is captured anew next time.
  GraphStep step;
  TensorList outputs = step.Capture(inputs, run);
  steps_.emplace(key, std::move(step));
  return outputs;
}

TensorList Model::TrainOneBatch(const TensorList&) {
  throw Error("Model: TrainOneBatch is not defined; override it to train");
}

void Model::Graph(bool mode, bool sequential) {
  if (mode != use_graph_ || sequential != sequential_) steps_.clear();
  use_graph_ = mode;
  sequential_ = sequential;
}

opt::Optimizer& Model::optimizer() {
  SINGA_CHECK(optimizer_ != nullptr, Error, "Model: no optimizer set (call SetOptimizer)");
  return *optimizer_;
}

void Model::SaveStates(const std::string& path, const TensorMap& aux) const {
  SaveStatesFile(path, GetStates(), aux);
}

TensorMap Model::LoadStates(const std::string& path) {
  const TensorMap targets = GetStates();
  StatesFile file = LoadStatesFile(path);
  std::ostringstream diff;
  for (auto& [k, v] : targets) {
    auto it = file.states.find(k);
    if (it == file.states.end())
      diff << "\n  missing in the file: " << k << " " << v.ToString();
    else if (it->second.shape() != v.shape() || it->second.dtype() != v.dtype())
      diff << "\n  " << k << ": the model has " << v.ToString() << ", the file "
           << it->second.ToString();
  }
  for (auto& [k, v] : file.states)
    if (!targets.count(k)) diff << "\n  not in the model: " << k << " " << v.ToString();
  SINGA_CHECK(diff.str().empty(), IOError,
              "load_states: '" << path << "' does not match the model:" << diff.str());
  for (auto& [k, v] : targets) {
    Tensor t = v;
    t.CopyFrom(file.states[k]);
  }
  return file.aux;
}

}  // namespace singa::nn
