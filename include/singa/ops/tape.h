// The tape: what the dispatcher records, for autograd and the ONNX export.
// Every op application records a Node (SINGA's `creator`) on its outputs;
// while grad mode is on, one of an op with a registered backward whose
// inputs require grad also saves what backward reads, and
// autograd::Backward walks these back.
//
//   Tensor w = Tensor::Ones({3}).set_stores_grad(true);
//   Tensor y = Call1("Mul", {x, w});       // y.creator() is the Mul node
//   { NoGradGuard no_grad; CallOp("Mul", {x, w}); }  // records nothing
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "singa/core/tensor.h"

namespace singa {

class OpSchema;

// What the dispatcher records. Every op application records its structure
// (op, attributes, links to the records of its inputs) on its outputs, in
// every mode, for the ONNX export (singa/onnx/export.h) and SINGA's
// `creator`: without grad mode such a record keeps no activation alive (the
// inputs made by recorded ops are kept as their dtype and shape only; see
// Tensor::Hollow). With grad mode on (the default in C++; Python's
// autograd.training) an op with a registered backward whose inputs require
// grad also saves the tensors its backward reads.
bool GradEnabled();
// Sets this thread's grad mode (Python's autograd uses this; C++ prefers the guards).
void SetGradEnabled(bool enabled);
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled);
  ~GradModeGuard();
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool prev_;
};
// Recording at all (on by default): off, ops record nothing, for work that is
// not part of any model's computation (initializers, backward itself,
// importer folding, optimizer arithmetic).
bool RecordingEnabled();
void SetRecording(bool on);  // this thread's; C++ prefers NoGradGuard
// Grad mode and recording off.
class NoGradGuard {
 public:
  NoGradGuard();
  ~NoGradGuard();
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool prev_grad_, prev_recording_;
};
// A chain of structure-only records longer than this (a state carried over
// many inference calls) starts over: the op's outputs get no record, so
// memory stays bounded; exporting through such a chain fails naming the output.
inline constexpr int kMaxRecordDepth = 1 << 16;

// Tracing: while on, structure-only records keep their inputs' values too
// (sonnx.to_onnx given a callable turns it on; export hooks may then read
// computed values). Off by default.
bool TracingEnabled();
void SetTracing(bool on);  // this thread's; C++ prefers the guard
class TracingGuard {
 public:
  explicit TracingGuard(bool on = true);
  ~TracingGuard();
  TracingGuard(const TracingGuard&) = delete;
  TracingGuard& operator=(const TracingGuard&) = delete;

 private:
  bool prev_;
};

// Training mode: layers built on ops whose behaviour differs between training
// and inference (Dropout, BatchNormalization) read it and pass the op its
// training_mode; kernels never read it. Off by default (inference).
bool TrainingMode();
void SetTrainingMode(bool on);
class TrainingModeGuard {
 public:
  explicit TrainingModeGuard(bool on);
  ~TrainingModeGuard();
  TrainingModeGuard(const TrainingModeGuard&) = delete;
  TrainingModeGuard& operator=(const TrainingModeGuard&) = delete;

 private:
  bool prev_;
};

namespace autograd {

// One recorded application of an op.
struct Node {
  const OpSchema* op = nullptr;
  std::shared_ptr<const void> attrs;
  TensorList inputs;  // the inputs as given (with their autograd links)
  TensorList saved;   // detached inputs then outputs: the values backward reads
  int num_inputs = 0;
  int num_outputs = 0;
  bool released = false;  // backward ran and freed `saved`, or nothing was saved
  int depth = 0;          // structure-only records: 1 + the longest chain behind
  // Set by backward: whether input i leads to a parameter (stores_grad).
  std::vector<bool> needs_grad;

  // Frees the records behind this one with a worklist, not by recursion: a
  // Loop or an RNN recorded over many steps makes chains of millions.
  ~Node();
};

}  // namespace autograd

// What an op's backward sees.
class GradCtx {
 public:
  GradCtx(const autograd::Node& node, const TensorList& grad_outputs)
      : node_(node), grads_(grad_outputs) {}
  int num_inputs() const { return node_.num_inputs; }
  int num_outputs() const { return node_.num_outputs; }
  bool has_input(int i) const { return i < num_inputs() && node_.saved[i].defined(); }
  const Tensor& input(int i) const { return node_.saved[i]; }
  const Tensor& output(int i) const { return node_.saved[num_inputs() + i]; }
  // Undefined when no gradient reaches output i (it then counts as zeros).
  const Tensor& grad_output(int i) const { return grads_[i]; }
  // Whether input i needs a gradient (others may be left undefined).
  bool needs_grad(int i) const {
    if (i >= num_inputs() || !node_.inputs[i].defined() || !node_.inputs[i].requires_grad())
      return false;
    return node_.needs_grad.empty() || node_.needs_grad[i];
  }
  const OpSchema& op() const { return *node_.op; }

 private:
  const autograd::Node& node_;
  const TensorList& grads_;
};

}  // namespace singa

namespace singa::internal {
// Called by the dispatcher after an op ran: records a Node on `outputs`
// (see RecordingEnabled), saving for backward when grad mode is on, the op
// has a backward and an input requires grad.
void MaybeRecord(const OpSchema& op, const std::shared_ptr<const void>& attrs,
                 std::span<const Tensor> inputs, TensorList& outputs);
}  // namespace singa::internal
