// Reverse-mode automatic differentiation over the tape the dispatcher records
// (see ops/tape.h). Backward walks from a result to the tensors marked
// stores_grad (parameters) in dependency order, calling each op's registered
// backward, and reports each parameter's gradient as soon as it is complete
// (so a distributed optimizer can start reducing it while backward goes on).
//
//   Tensor w = RandomWeights().set_stores_grad(true);
//   Tensor loss = Call1("ReduceMean", {Call1("Mul", {x, w})});
//   autograd::Backward(loss, Tensor(), [&](const Tensor& p, const Tensor& g) {
//     optimizer.Update(p, g);
//   });
#pragma once

#include <functional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "singa/ops/op.h"

namespace singa::autograd {

using GradCallback = std::function<void(const Tensor& param, const Tensor& grad)>;

// dy defaults to ones of y's shape. Gradients run with grad mode off.
void Backward(const Tensor& y, const Tensor& dy, const GradCallback& on_grad);
// Every (param, grad) pair of Backward, in the order they completed.
std::vector<std::pair<Tensor, Tensor>> Gradients(const Tensor& y, const Tensor& dy = Tensor());

// A user-defined differentiable function (SINGA's autograd.Operator): the
// caller computes `outputs` from `inputs` (with grad mode off, say) and
// records here how to differentiate them; `backward` maps the outputs'
// gradients (undefined = none reached) to the inputs' (undefined = none).
// Records nothing unless grad mode is on and an input requires grad.
using CustomBackward = std::function<TensorList(const TensorList& grad_outputs)>;
void RecordFunction(std::string name, std::span<const Tensor> inputs, TensorList& outputs,
                    CustomBackward backward);

}  // namespace singa::autograd
