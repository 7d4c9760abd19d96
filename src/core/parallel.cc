#include "singa/core/parallel.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <mutex>
#include <thread>

namespace singa {

namespace {
// The CPUs this process may run on (mpirun and taskset bind processes to a
// subset): more threads than that only take turns on the same cores.
int DefaultThreads() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(CPU_COUNT(&set), 1);
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}
int g_num_threads = DefaultThreads();
thread_local int t_serial_depth = 0;

// Microseconds some task waited for a core, since boot; -1 when unknown.
int64_t CpuStallMicros() {
  std::FILE* f = std::fopen("/proc/pressure/cpu", "r");
  if (!f) return -1;
  long long total = -1;
  if (std::fscanf(f, "some avg10=%*f avg60=%*f avg300=%*f total=%lld", &total) != 1) total = -1;
  std::fclose(f);
  return total;
}
}  // namespace

bool CpuContended() {
  using Clock = std::chrono::steady_clock;
  constexpr int64_t kPeriodUs = 100'000;
  static std::atomic<bool> contended{false};
  static std::atomic<int64_t> next_check_us{0};
  static std::mutex mu;
  static int64_t last_stall = -1, last_us = 0;
  const int64_t now =
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
          .count();
  if (now < next_check_us.load(std::memory_order_relaxed))
    return contended.load(std::memory_order_relaxed);
  std::unique_lock<std::mutex> lock(mu, std::try_to_lock);
  if (!lock.owns_lock()) return contended.load(std::memory_order_relaxed);
  const int64_t stall = CpuStallMicros();
  if (stall < 0) {
    next_check_us.store(INT64_MAX, std::memory_order_relaxed);  // never again
    return false;
  }
  if (last_stall >= 0 && now > last_us) {
    const double share =
        static_cast<double>(stall - last_stall) / static_cast<double>(now - last_us);
    if (share > 0.6) contended.store(true, std::memory_order_relaxed);
    if (share < 0.2) contended.store(false, std::memory_order_relaxed);
  }
  last_stall = stall;
  last_us = now;
  next_check_us.store(now + kPeriodUs, std::memory_order_relaxed);
  return contended.load(std::memory_order_relaxed);
}

int GetNumThreads() { return g_num_threads; }

int ActiveThreads() { return t_serial_depth > 0 || CpuContended() ? 1 : g_num_threads; }

SerialScope::SerialScope(bool active) {
  if (!active) return;
  saved_ = omp_get_max_threads();
  omp_set_num_threads(1);
  ++t_serial_depth;
}

SerialScope::~SerialScope() {
  if (saved_ == 0) return;
  --t_serial_depth;
  omp_set_num_threads(saved_);
}

void SetNumThreads(int n) {
  g_num_threads = n > 0 ? n : DefaultThreads();
  omp_set_num_threads(g_num_threads);  // oneDNN reads OpenMP's setting
}

bool InParallelRegion() { return omp_in_parallel(); }

void internal::ParallelRun(int nthreads, void (*body)(void*, int, int), void* ctx) {
#pragma omp parallel num_threads(nthreads)
  body(ctx, omp_get_thread_num(), omp_get_num_threads());
}

}  // namespace singa
