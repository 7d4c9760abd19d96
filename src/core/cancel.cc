#include "singa/core/cancel.h"

#include <utility>

namespace singa {
namespace {

thread_local const Canceller* t_canceller = nullptr;
thread_local uint64_t t_generation = 0;

std::function<void()>& Hook() {
  static std::function<void()> hook;
  return hook;
}

}  // namespace

CancelScope::CancelScope(const Canceller& c)
    : outer_(t_canceller), outer_generation_(t_generation) {
  t_canceller = &c;
  t_generation = c.generation();
}

CancelScope::~CancelScope() {
  t_canceller = outer_;
  t_generation = outer_generation_;
}

void CheckCancelled() {
  if (t_canceller && t_canceller->generation() != t_generation)
    throw Cancelled("the run was cancelled");
  if (const auto& hook = Hook()) hook();
}

void SetInterruptHook(std::function<void()> hook) { Hook() = std::move(hook); }

}  // namespace singa
