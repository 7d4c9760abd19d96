// Grad mode and the recording of op applications for autograd.
#include "singa/ops/tape.h"

#include "singa/ops/op.h"

namespace singa {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_training = false;
}  // namespace

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
  if (!t_grad_enabled) return;
  bool any = false;
  for (const Tensor& t : inputs) any |= t.defined() && t.requires_grad();
  // NOTE: in grad mode every op application is recorded, also those no
  // gradient flows through (ops without a backward, inputs that need no
  // gradient): the ONNX export (sonnx::ToOnnx) traces the graph from these
  // records, as SINGA's frontend does. Only a node on a gradient path saves
  // tensors for backward and makes its outputs require grad; the others are
  // invisible to backward.
  const bool for_grad = any && op.backward;
  auto node = std::make_shared<autograd::Node>();
  node->op = &op;
  node->attrs = attrs;
  node->inputs.assign(inputs.begin(), inputs.end());
  node->num_inputs = static_cast<int>(inputs.size());
  node->num_outputs = static_cast<int>(outputs.size());
  if (for_grad) {
    node->saved.reserve(inputs.size() + outputs.size());
    for (const Tensor& t : inputs) node->saved.push_back(t.defined() ? t.Detach() : Tensor());
    for (const Tensor& t : outputs) node->saved.push_back(t.Detach());
  } else {
    node->released = true;  // nothing saved: backward must never run it
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    outputs[i].set_creator(node, static_cast<int>(i));
    if (!for_grad) outputs[i].set_requires_grad(false);
  }
}

}  // namespace singa
