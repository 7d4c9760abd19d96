#include "singa/nn/model.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

#include "singa/core/file.h"
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
}  // namespace

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
  // The results stand for the step, not for the tape of its first run.
  for (Tensor& t : outputs)
    if (t.defined()) t = t.Detach();
  outputs_ = outputs;
  arena_bytes_ = device_.PlanGraphMemory(outputs_);
  ops_ = device_.runtime().TakeGraph();
  captured_ = true;
  Run();
  return Copies(outputs_);
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
  return Copies(outputs_);
}

void GraphStep::Run() { DeviceRuntime::Replay(ops_); }

void GraphStep::Reset() {
  captured_ = false;
  inputs_.clear();
  outputs_.clear();
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

namespace {
constexpr char kAuxPrefix[] = "aux:";

// The states and `aux` (kept apart in the file, aux under a prefix).
void SaveStatesFile(const std::string& path, const TensorMap& states, const TensorMap& aux) {
  TensorMap all = states;
  for (auto& [k, v] : aux) all[kAuxPrefix + k] = v;
  SaveTensors(path, all);
}

TensorMap LoadStatesInto(const TensorMap& targets, const std::string& path) {
  TensorMap file = LoadTensors(path), states, aux;
  for (auto& [k, v] : file) {
    if (k.rfind(kAuxPrefix, 0) == 0)
      aux[k.substr(sizeof(kAuxPrefix) - 1)] = v;
    else
      states[k] = v;
  }
  std::ostringstream diff;
  for (auto& [k, v] : targets) {
    auto it = states.find(k);
    if (it == states.end())
      diff << "\n  missing in the file: " << k << " " << v.ToString();
    else if (it->second.shape() != v.shape() || it->second.dtype() != v.dtype())
      diff << "\n  " << k << ": the model has " << v.ToString() << ", the file "
           << it->second.ToString();
  }
  for (auto& [k, v] : states)
    if (!targets.count(k)) diff << "\n  not in the model: " << k << " " << v.ToString();
  SINGA_CHECK(diff.str().empty(), IOError,
              "load_states: '" << path << "' does not match the model:" << diff.str());
  for (auto& [k, v] : targets) {
    Tensor t = v;
    t.CopyFrom(states[k]);
  }
  return aux;
}

}  // namespace

void Model::SaveStates(const std::string& path, const TensorMap& aux) const {
  SaveStatesFile(path, GetStates(), aux);
}

TensorMap Model::LoadStates(const std::string& path) { return LoadStatesInto(GetStates(), path); }

// ---- the states file ----------------------------------------------------
// "SINGAST1", a uint64 count, then per tensor: uint32 name length, name,
// int32 dtype (ONNX code), uint32 rank, int64 dims, uint64 byte count, data.

namespace {
constexpr char kMagic[8] = {'S', 'I', 'N', 'G', 'A', 'S', 'T', '1'};

template <class T>
void Put(std::FILE* f, T v) {
  std::fwrite(&v, sizeof(T), 1, f);
}

template <class T>
T Get(std::istream& is, const std::string& path) {
  T v{};
  is.read(reinterpret_cast<char*>(&v), sizeof(T));
  SINGA_CHECK(is.good(), IOError, "load_states: '" << path << "' is truncated");
  return v;
}

void WriteTensors(std::FILE* f, const TensorMap& tensors) {
  std::fwrite(kMagic, sizeof(kMagic), 1, f);
  Put<uint64_t>(f, tensors.size());
  for (auto& [name, t] : tensors) {
    SINGA_CHECK(t.dtype() != DType::kString, DTypeError,
                "save_states: '" << name << "' is a string tensor");
    const Tensor c = t.ToDevice(Device::Cpu()).Contiguous();
    Put<uint32_t>(f, static_cast<uint32_t>(name.size()));
    std::fwrite(name.data(), 1, name.size(), f);
    Put<int32_t>(f, static_cast<int32_t>(c.dtype()));
    Put<uint32_t>(f, static_cast<uint32_t>(c.ndim()));
    for (int64_t d : c.shape()) Put<int64_t>(f, d);
    Put<uint64_t>(f, c.nbytes());
    if (c.nbytes()) std::fwrite(c.raw_data(), 1, c.nbytes(), f);
  }
}
}  // namespace

void SaveTensors(const std::string& path, const TensorMap& tensors) {
  // Through a temporary file renamed over the target: a failed or
  // interrupted save leaves the previous file as it was.
  WriteFileAtomically(
      path, [&](std::FILE* f) { WriteTensors(f, tensors); }, "save_states");
}

TensorMap LoadTensors(const std::string& path) {
  std::ifstream is(path, std::ios::binary | std::ios::ate);
  SINGA_CHECK(is.good(), IOError, "load_states: cannot open '" << path << "'");
  const auto file_size = static_cast<uint64_t>(is.tellg());
  is.seekg(0);
  // What the file says it holds is checked against what it has left before
  // anything is allocated.
  auto left = [&] { return file_size - static_cast<uint64_t>(is.tellg()); };
  auto corrupt = [&](const std::string& part) {
    return IOError("load_states: '" + path + "' is corrupt (" + part + ")");
  };
  char magic[sizeof(kMagic)] = {};
  is.read(magic, sizeof(magic));
  SINGA_CHECK(is.good() && std::memcmp(magic, kMagic, sizeof(kMagic)) == 0, IOError,
              "load_states: '" << path << "' is not a singa states file");
  const auto count = Get<uint64_t>(is, path);
  TensorMap out;
  for (uint64_t i = 0; i < count; ++i) {
    const auto len = Get<uint32_t>(is, path);
    if (len > left()) throw corrupt("name length");
    std::string name(len, '\0');
    is.read(name.data(), len);
    const auto code = Get<int32_t>(is, path);
    if (code <= 0 || code >= kNumDTypes || code == static_cast<int32_t>(DType::kString))
      throw corrupt("dtype of '" + name + "'");
    const auto rank = Get<uint32_t>(is, path);
    if (rank > 64) throw corrupt("rank of '" + name + "'");
    Shape shape(rank);
    for (auto& d : shape) {
      d = Get<int64_t>(is, path);
      if (d < 0) throw corrupt("shape of '" + name + "'");
    }
    const auto dtype = static_cast<DType>(code);
    const auto bytes = Get<uint64_t>(is, path);
    if (bytes > left())
      throw IOError("load_states: '" + path + "' is truncated ('" + name + "' needs " +
                    std::to_string(bytes) + " bytes, " + std::to_string(left()) + " are left)");
    size_t want = 0;
    try {
      want = TensorBytes(shape, dtype, "'" + name + "'");
    } catch (const Error& e) {
      throw corrupt(e.what());
    }
    if (bytes != want) throw corrupt("size of '" + name + "'");
    Tensor t(shape, dtype);
    if (bytes) {
      is.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(bytes));
      SINGA_CHECK(is.good(), IOError, "load_states: '" << path << "' is truncated");
    }
    out[name] = t;
  }
  return out;
}

}  // namespace singa::nn
