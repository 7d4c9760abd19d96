// Differentiable functions that are not a single ONNX op, written with ops
// (so autograd, graph capture and export see only ops): the losses and
// helpers of SINGA's autograd module. Single ops are called by name with
// Call1 (or, from Python, autograd.relu(x) and friends).
//
//   Tensor logits = model(x);                       // [N, C]
//   Tensor loss = nn::SoftmaxCrossEntropy(logits, labels);   // shape {1}
//   auto grads = autograd::Gradients(loss);
//
// Losses return a tensor of shape {1}, as SINGA's do.
#pragma once

#include "singa/core/tensor.h"
#include "singa/ops/op.h"

namespace singa::nn {

// A 0-d tensor of `like`'s dtype and device.
Tensor ScalarLike(double value, const Tensor& like);
// An int64 1-D tensor (axes, shapes) on `device`.
Tensor Ints(const std::vector<int64_t>& values, Device device = Device::Cpu());

// Mean over the batch of -sum(t * log_softmax(x)) along the last axis. `t`
// holds class indices (any integer dtype, shape x.shape[:-1]) or a
// distribution over the classes (x's shape and dtype; one-hot labels).
Tensor SoftmaxCrossEntropy(const Tensor& x, const Tensor& t);
// Mean over the batch of -sum(t * log(p)): p holds probabilities.
Tensor CrossEntropy(const Tensor& p, const Tensor& t);
// Mean over the batch of -sum(t log p + (1 - t) log(1 - p)).
Tensor BinaryCrossEntropy(const Tensor& p, const Tensor& t);
// Mean over all elements of (x - t)^2.
Tensor MseLoss(const Tensor& x, const Tensor& t);
// Mean over the batch of max(0, margin - (pos - neg)).
Tensor RankingLoss(const Tensor& pos, const Tensor& neg, double margin = 0.2);
// Row-wise cosine similarity of two [N, D] tensors: [N].
Tensor CosSim(const Tensor& a, const Tensor& b);
// x + b with b broadcast along `axis` (0: b is a row added to every row).
Tensor AddBias(const Tensor& x, const Tensor& b, int axis = 0);
// One-hot float32 rows of the integer labels: [..., depth].
Tensor OneHotLabels(const Tensor& labels, int64_t depth, DType dtype = DType::kFloat32);

}  // namespace singa::nn
