// The intra-op thread pool. It is OpenMP's, which oneDNN uses too, so our
// loops and oneDNN primitives share one set of threads on the cores.
//
//   SetNumThreads(2);
//   ParallelFor(0, n, 1 << 14, [&](int64_t lo, int64_t hi) {
//     for (int64_t i = lo; i < hi; ++i) y[i] = x[i] * 2;
//   });
#pragma once

#include <algorithm>
#include <cstdint>

namespace singa {

// The intra-op threads SetNumThreads asked for.
int GetNumThreads();
// The threads ParallelFor and oneDNN's primitives use now: GetNumThreads(),
// but 1 inside a SerialScope and while the CPU is contended (CpuContended).
int ActiveThreads();
// n <= 0 restores the default (the number of cores).
void SetNumThreads(int n);
bool InParallelRegion();

// Work this small (bytes of an op's inputs and outputs) runs on the calling
// thread alone: waking a second thread for it costs more than it saves, and
// on a machine whose cores other processes keep busy every parallel region
// waits for a thread the scheduler has not run yet.
inline constexpr int64_t kSerialBytes = int64_t{32} << 10;

// Whether other work keeps this machine's cores busy: the kernel's CPU
// pressure (/proc/pressure/cpu: the share of time some runnable task waited
// for a core) over the last ~100 ms above 60%, and not yet back below 20%.
// While it is, every op runs serially: a parallel region would wait at its
// barrier for a thread the scheduler has not run. False where the kernel
// does not report pressure. Cheap: a clock read, and a file read at most
// every 100 ms.
bool CpuContended();

// While one lives, the calling thread runs ParallelFor's chunks and the
// oneDNN primitives created and executed in it alone (OpenMP's thread count
// for this thread is 1). Nests; restores the count on destruction.
class SerialScope {
 public:
  explicit SerialScope(bool active = true);
  ~SerialScope();
  SerialScope(const SerialScope&) = delete;
  SerialScope& operator=(const SerialScope&) = delete;

 private:
  int saved_ = 0;  // OpenMP's thread count before, 0 when inactive
};

namespace internal {
// Runs body(tid, nthreads) on nthreads threads.
void ParallelRun(int nthreads, void (*body)(void*, int, int), void* ctx);
}  // namespace internal

// Splits [begin, end) into contiguous chunks of at least `grain` items and runs
// f(lo, hi) on each, one chunk per thread.
template <class F>
void ParallelFor(int64_t begin, int64_t end, int64_t grain, F&& f) {
  int64_t n = end - begin;
  if (n <= 0) return;
  int64_t max_chunks = std::max<int64_t>(1, n / std::max<int64_t>(grain, 1));
  int nthreads = static_cast<int>(std::min<int64_t>(ActiveThreads(), max_chunks));
  if (nthreads <= 1 || InParallelRegion()) {
    f(begin, end);
    return;
  }
  struct Ctx {
    F* f;
    int64_t begin, n;
  } ctx{&f, begin, n};
  internal::ParallelRun(
      nthreads,
      [](void* p, int tid, int nt) {
        auto* c = static_cast<Ctx*>(p);
        int64_t lo = c->begin + c->n * tid / nt, hi = c->begin + c->n * (tid + 1) / nt;
        if (lo < hi) (*c->f)(lo, hi);
      },
      &ctx);
}

}  // namespace singa
