// DistOpt: data-parallel training around any Optimizer (SINGA's DistOpt).
// Launch one process per worker with mpirun; each computes the loss of its
// share of the batch and DistOpt averages what the ranks need to agree on.
//
//   auto sgd = std::make_shared<opt::SGD>(opt::SGD::Options{.lr = 0.05});
//   opt::DistOpt dist(sgd);                   // rank, world size from MPI
//   Tensor loss = nn::SoftmaxCrossEntropy(model(x_of_this_rank), y);
//   dist.BackwardAndUpdate(loss);             // averaged gradients, same update everywhere
//
// Variants (SINGA's names): BackwardAndUpdateHalf sends gradients in
// float16; BackwardAndPartialUpdate updates locally and averages a rotating
// subset of the parameters each step; BackwardAndSparseUpdate sends only the
// top-K (or above-threshold) gradient entries, keeping the rest as a
// residual added to the next step's gradient.
//
// A parameter is set to rank 0's value the first time DistOpt sees it, so
// ranks whose initializations differ still train one model.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "singa/dist/communicator.h"
#include "singa/opt/optimizer.h"

namespace singa::opt {

class DistOpt {
 public:
  explicit DistOpt(std::shared_ptr<Optimizer> opt, dist::Communicator::Options o = {});
  DistOpt(const DistOpt&) = delete;
  DistOpt& operator=(const DistOpt&) = delete;

  // Backward; each gradient's reduction starts as soon as its fused bucket
  // (buff_size elements) is complete, overlapping the rest of backward;
  // after waiting, every parameter is updated with the averaged gradient.
  void BackwardAndUpdate(const Tensor& loss);
  // The same with float16 on the wire.
  void BackwardAndUpdateHalf(const Tensor& loss);
  // Local updates, then the next buff_size elements' worth of parameters (in
  // backward order, wrapping around) are averaged across the ranks.
  void BackwardAndPartialUpdate(const Tensor& loss);
  // Sparse gradient exchange with error feedback (see
  // Communicator::SparseAllReduce): spars is the fraction kept with topK,
  // the magnitude threshold without.
  void BackwardAndSparseUpdate(const Tensor& loss, float spars = 0.05f, bool topK = false);

  // Rank 0's values of `params` on every rank.
  void BroadcastParams(const TensorList& params);

  Optimizer& optimizer() const { return *opt_; }
  dist::Communicator& communicator() const { return *comm_; }
  int global_rank() const { return comm_->rank(); }
  int local_rank() const { return comm_->local_rank(); }
  int world_size() const { return comm_->world_size(); }

 private:
  enum class Mode { kFloat32, kHalf };
  void ReduceAndUpdate(const Tensor& loss, Mode mode);
  // Checks the gradient, broadcasts a parameter seen for the first time,
  // and returns the gradient contiguous.
  Tensor Prepare(const Tensor& param, const Tensor& grad);
  Tensor& ResidualFor(const Tensor& param);

  std::shared_ptr<Optimizer> opt_;
  std::shared_ptr<dist::Communicator> comm_;
  std::unordered_set<const void*> synced_;
  std::unordered_map<const void*, Tensor> residuals_;
  std::shared_ptr<size_t> partial_ = std::make_shared<size_t>(0);  // next parameter to average
};

}  // namespace singa::opt
