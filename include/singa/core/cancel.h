// Cancelling a run. Work that can go on without bound (an ONNX Loop with
// neither a trip count nor a cond that ever turns false) calls
// CheckCancelled() between its steps; it throws Cancelled when the
// Canceller of the run in progress on this thread has fired, and lets the
// interrupt hook (the Python binding's: Ctrl-C) throw its own exception.
//
//   Canceller c;                                  // e.g. one per SingaRep
//   { CancelScope scope(c); RunTheModel(); }      // another thread: c.Cancel()
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>

#include "singa/core/error.h"

namespace singa {

// The run was cancelled (Canceller::Cancel) before it finished.
class Cancelled : public Error {
 public:
  using Error::Error;
};

class Canceller {
 public:
  // Cancels the runs in progress under this canceller (not later ones).
  void Cancel() { generation_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t generation() const { return generation_.load(std::memory_order_relaxed); }

 private:
  std::atomic<uint64_t> generation_{0};
};

// While alive, CheckCancelled on this thread watches `c` (nested scopes
// restore the outer one).
class CancelScope {
 public:
  explicit CancelScope(const Canceller& c);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const Canceller* outer_;
  uint64_t outer_generation_;
};

void CheckCancelled();
// Called by every CheckCancelled; it may throw. One per process.
void SetInterruptHook(std::function<void()> hook);

}  // namespace singa
