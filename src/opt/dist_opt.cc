#include "singa/opt/dist_opt.h"

#include "singa/autograd/autograd.h"
#include "singa/core/device.h"
#include "singa/core/error.h"

namespace singa::opt {

DistOpt::DistOpt(std::shared_ptr<Optimizer> opt, dist::Communicator::Options o)
    : opt_(std::move(opt)), comm_(std::make_shared<dist::Communicator>(o)) {
  SINGA_CHECK(opt_ != nullptr, Error, "DistOpt: the optimizer to wrap is null");
}

Tensor DistOpt::Prepare(const Tensor& param, const Tensor& grad) {
  SINGA_CHECK(param.dtype() == DType::kFloat32, DTypeError,
              "DistOpt: parameter '" << param.name() << "' is " << param.ToString()
                                     << "; distributed training supports float32 parameters");
  if (synced_.insert(param.id()).second) {
    // Parameters exist before the step: during a graph capture the broadcast
    // happens once, now, not on every replay.
    CaptureSuspendGuard now(param.device());
    comm_->Broadcast(param, 0);
  }
  return grad.Contiguous();
}

Tensor& DistOpt::ResidualFor(const Tensor& param) {
  auto it = residuals_.find(param.id());
  if (it != residuals_.end()) return it->second;
  CaptureSuspendGuard now(param.device());  // state across steps, like optimizer slots
  return residuals_.emplace(param.id(), Tensor::Zeros(param.shape(), param.dtype(), param.device()))
      .first->second;
}

void DistOpt::ReduceAndUpdate(const Tensor& loss, Mode mode) {
  const int64_t limit = comm_->buff_size();
  std::vector<std::pair<Tensor, Tensor>> grads;
  autograd::Backward(loss, Tensor(), [&](const Tensor& p, const Tensor& grad) {
    Tensor g = Prepare(p, grad);
    // Large gradients go alone; small ones fill a bucket that is sent as
    // soon as it is full, while backward carries on.
    if (mode == Mode::kHalf)
      comm_->FusedAllReduceHalf({g}, g.numel() >= limit);
    else if (g.numel() >= limit)
      comm_->AllReduce(g);
    else
      comm_->FusedAllReduce({g}, false);
    grads.emplace_back(p, g);
  });
  comm_->Wait();
  for (auto& [p, g] : grads) opt_->Update(p, g);
  opt_->Step();
}

void DistOpt::BackwardAndUpdate(const Tensor& loss) { ReduceAndUpdate(loss, Mode::kFloat32); }

void DistOpt::BackwardAndUpdateHalf(const Tensor& loss) { ReduceAndUpdate(loss, Mode::kHalf); }

void DistOpt::BackwardAndPartialUpdate(const Tensor& loss) {
  TensorList params;
  autograd::Backward(loss, Tensor(), [&](const Tensor& p, const Tensor& grad) {
    opt_->Update(p, Prepare(p, grad));
    params.push_back(p.Detach());
  });
  opt_->Step();
  if (params.empty()) return;
  // The subset is chosen when the step runs (a replayed graph step moves on
  // too): from *partial_, parameters until buff_size elements are reached.
  params[0].device().Exec(
      [comm = comm_, params, next = partial_] {
        TensorList part;
        int64_t numel = 0;
        size_t i = *next;
        for (; i < params.size() && (part.empty() || numel < comm->buff_size()); ++i) {
          part.push_back(params[i]);
          numel += params[i].numel();
        }
        *next = i < params.size() ? i : 0;
        comm->FusedAllReduce(part, true);
        comm->Wait();
      },
      params, params);
}

void DistOpt::BackwardAndSparseUpdate(const Tensor& loss, float spars, bool topK) {
  const int64_t limit = comm_->buff_size();
  std::vector<std::pair<Tensor, Tensor>> grads;
  TensorList bucket, residuals;
  int64_t numel = 0;
  auto send = [&] {
    if (bucket.empty()) return;
    comm_->SparseAllReduce(bucket, residuals, spars, topK);
    bucket.clear();
    residuals.clear();
    numel = 0;
  };
  autograd::Backward(loss, Tensor(), [&](const Tensor& p, const Tensor& grad) {
    Tensor g = Prepare(p, grad);
    if (numel > 0 && numel + g.numel() > limit) send();
    bucket.push_back(g);
    residuals.push_back(ResidualFor(p));
    numel += g.numel();
    grads.emplace_back(p, g);
  });
  send();
  comm_->Wait();
  for (auto& [p, g] : grads) opt_->Update(p, g);
  opt_->Step();
}

void DistOpt::BroadcastParams(const TensorList& params) {
  for (const Tensor& p : params) {
    comm_->Broadcast(p, 0);
    synced_.insert(p.id());
  }
}

}  // namespace singa::opt
