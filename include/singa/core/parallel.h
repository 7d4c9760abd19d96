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

int GetNumThreads();
// n <= 0 restores the default (the number of cores).
void SetNumThreads(int n);
bool InParallelRegion();

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
  int nthreads = static_cast<int>(std::min<int64_t>(GetNumThreads(), max_chunks));
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
