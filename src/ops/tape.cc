// Grad mode and the recording of op applications for autograd.
#include "singa/ops/tape.h"

#include <algorithm>

#include "singa/ops/op.h"

namespace singa {

autograd::Node::~Node() {
  // Each input's record is kept alive here while the input is dropped, and
  // released on the next turn: a record whose only owner is the list gives
  // its own inputs' records to the list before it dies, so nothing recurses.
  std::vector<std::shared_ptr<Node>> pending;
  auto release_inputs = [&pending](Node& n) {
    for (const Tensor& t : n.inputs)
      if (t.defined() && t.creator()) pending.push_back(t.creator());
    n.inputs.clear();
  };
  release_inputs(*this);
  while (!pending.empty()) {
    std::shared_ptr<Node> n = std::move(pending.back());
    pending.pop_back();
    if (n.use_count() == 1) release_inputs(*n);
  }
}

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_training = false;
thread_local bool t_tracing = false;
thread_local bool t_recording = true;
}  // namespace

bool RecordingEnabled() { return t_recording; }
void SetRecording(bool on) { t_recording = on; }
NoGradGuard::NoGradGuard() : prev_grad_(t_grad_enabled), prev_recording_(t_recording) {
  t_grad_enabled = false;
  t_recording = false;
}
NoGradGuard::~NoGradGuard() {
  t_grad_enabled = prev_grad_;
  t_recording = prev_recording_;
}

bool TracingEnabled() { return t_tracing; }
void SetTracing(bool on) { t_tracing = on; }
TracingGuard::TracingGuard(bool on) : prev_(t_tracing) { t_tracing = on; }
TracingGuard::~TracingGuard() { t_tracing = prev_; }

bool TrainingMode() { return t_training; }
void SetTrainingMode(bool on) { t_training = on; }
TrainingModeGuard::TrainingModeGuard(bool on) : prev_(t_training) { t_training = on; }
TrainingModeGuard::~TrainingModeGuard() { t_training = prev_; }

bool GradEnabled() { return t_grad_enabled; }
void SetGradEnabled(bool enabled) { t_grad_enabled = enabled; }
GradModeGuard::GradModeGuard(bool enabled) : prev_(t_grad_enabled) { t_grad_enabled = enabled; }
GradModeGuard::~GradModeGuard() { t_grad_enabled = prev_; }

void internal::MaybeRecord(const OpSchema& op, const std::shared_ptr<const void>& attrs,
                           std::span<const Tensor> inputs, TensorList& outputs) {
  if (!t_recording) return;
  bool any = false;
  for (const Tensor& t : inputs) any |= t.defined() && t.requires_grad();
  const bool for_grad = t_grad_enabled && any && op.backward;
  auto node = std::make_shared<autograd::Node>();
  node->op = &op;
  node->attrs = attrs;
  node->num_inputs = static_cast<int>(inputs.size());
  node->num_outputs = static_cast<int>(outputs.size());
  if (for_grad) {
    node->inputs.assign(inputs.begin(), inputs.end());
    node->saved.reserve(inputs.size() + outputs.size());
    for (const Tensor& t : inputs) node->saved.push_back(t.defined() ? t.Detach() : Tensor());
    for (const Tensor& t : outputs) node->saved.push_back(t.Detach());
  } else {
    // Structure only: saves nothing, so backward never runs it, and keeps
    // the values of leaves (parameters, constants, graph inputs: the export
    // cannot tell them apart) but not of activations, unless tracing.
    node->released = true;
    node->inputs.reserve(inputs.size());
    for (const Tensor& t : inputs) {
      const autograd::Node* c = t.defined() ? t.creator().get() : nullptr;
      if (c) node->depth = std::max(node->depth, c->depth + 1);
      node->inputs.push_back(c && !t_tracing ? t.Hollow() : t);
    }
    if (node->depth >= kMaxRecordDepth) return;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].set_creator(node, static_cast<int>(i));
    if (!for_grad) outputs[i].set_requires_grad(false);
  }
}

}  // namespace singa
