// The tape: what the dispatcher records for autograd. While grad mode is on,
// an op with a registered backward whose inputs require grad records a Node
// (SINGA's `creator`) on its outputs; autograd::Backward walks these back.
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

// Grad mode: ops record themselves only while it is on (the default). The
// dispatcher reads it; kernels never do.
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
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

// Tracing: while on (and grad mode is on) every op application records
// itself, also those no gradient flows through (ops without a backward,
// inputs that need no gradient): the ONNX export (singa/onnx/export.h) walks
// these records. Off by default: records of the others would keep their
// inputs alive for nothing.
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
  bool released = false;  // backward ran and freed `saved`
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
// Called by the dispatcher after an op ran: records a Node on `outputs` when
// grad mode is on, the op has a backward and an input requires grad.
void MaybeRecord(const OpSchema& op, const std::shared_ptr<const void>& attrs,
                 std::span<const Tensor> inputs, TensorList& outputs);
}  // namespace singa::internal
