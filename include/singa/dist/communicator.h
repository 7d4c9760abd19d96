// Communicator: data-parallel collectives over MPI (SINGA's NCCL
// communicator, on MPI here). Every rank runs the same program on its share
// of the data; gradients are averaged across ranks before the update.
//
//   dist::Communicator comm;                  // MPI_Init once per process
//   comm.Broadcast(w);                        // rank 0's initial parameters
//   comm.FusedAllReduce({g1, g2, g3});        // many small gradients, one message
//   comm.AllReduce(big_grad);                 // started now ...
//   comm.Wait();                              // ... averaged in place here
//
// Without an MPI launcher (no mpirun) the world has one rank and no MPI is
// initialized; the collectives still apply their compression (float16
// rounding, sparsification with residuals), so a single process computes
// what each rank of a larger run would.
//
// Each collective runs through Device::Exec, so a captured graph step
// replays its communication natively. Reductions are nonblocking MPI calls,
// started when a gradient (or a fused bucket) is ready and completed by
// Wait(). Waits poll with a timeout: a rank that died or stopped taking part
// makes the others throw singa::Error within `timeout_seconds` instead of
// hanging; the communicator is then broken (further calls throw) and the
// process ends with MPI_Abort at exit, which makes mpirun stop every rank.
// bytes_sent() and wait_seconds() count the traffic and the blocking time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "singa/core/tensor.h"

namespace singa::dist {

class Communicator {
 public:
  struct Options {
    // Elements (float32) of one fused buffer: FusedAllReduce starts a
    // reduction whenever its pending tensors reach this size.
    int64_t buff_size = 4194304;
    // Seconds a Wait may take before the peers are taken for dead; <= 0
    // reads SINGA_DIST_TIMEOUT from the environment (default 300).
    double timeout_seconds = 0;
  };
  Communicator();
  explicit Communicator(Options o);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int world_size() const { return world_size_; }
  int local_rank() const { return local_rank_; }  // rank among this host's processes
  int64_t buff_size() const { return opts_.buff_size; }
  double timeout_seconds() const { return opts_.timeout_seconds; }
  // True once a collective failed or timed out.
  bool broken() const;

  // Statistics since construction (or ResetStats), counted when the
  // collectives run (so graph replays count too).
  // bytes_sent: the payload this rank hands to MPI: 4 bytes per element of a
  // float32 all-reduce, 2 per element in float16, for a sparse reduction 8
  // per kept (index, value) pair plus 4 for the pair count, a broadcast's
  // data at its root. Nothing when the world has one rank. (How many bytes
  // cross the network depends on MPI's algorithm: a ring all-reduce moves
  // 2 (p - 1) / p times its payload per rank.)
  int64_t bytes_sent() const;
  // Seconds spent in Wait() completing the started collectives: with
  // DistOpt, the time from the last gradient to the averaged gradients.
  double wait_seconds() const;
  void ResetStats();

  // Starts averaging `t` (float32) over the ranks in place; done at Wait().
  void AllReduce(const Tensor& t);
  // The same with float16 on the wire: each rank sends t / world_size in
  // float16, partial sums are formed in float32, the result is float32.
  void AllReduceHalf(const Tensor& t);
  // Adds `ts` to the pending fused buffer; with `send` (or when the buffer
  // reaches buff_size) starts averaging the pending tensors as one message.
  void FusedAllReduce(const TensorList& ts, bool send = true);
  void FusedAllReduceHalf(const TensorList& ts, bool send = true);
  // Sparse averaging with error feedback: acc = t + residual; each rank sends
  // the (index, value) pairs of acc it keeps, residual keeps the rest for
  // the next step; t becomes the average of every rank's kept pairs. topK
  // keeps the ceil(spars * n) largest |acc| of the fused tensors, otherwise
  // those with |acc| >= spars. residuals[i] matches ts[i]. Done at Wait().
  void SparseAllReduce(const TensorList& ts, const TensorList& residuals, float spars, bool topK);
  // Rank `root`'s values of `t` on every rank (blocking).
  void Broadcast(const Tensor& t, int root = 0);
  // Completes every started collective and writes the results back.
  void Wait();

  struct State;  // shared with the recorded closures (src/dist/communicator.cc)

 private:
  void Flush(bool half);
  Options opts_;
  int rank_ = 0, world_size_ = 1, local_rank_ = 0;
  std::shared_ptr<State> state_;
  TensorList pending_[2];  // fused tensors not yet sent: [0] float32, [1] float16
  int64_t pending_numel_[2] = {0, 0};
  TensorList started_;  // tensors Wait() writes (recorded as its writes)
};

// True when this process was started by an MPI launcher (mpirun/srun).
bool LaunchedByMpi();

}  // namespace singa::dist
