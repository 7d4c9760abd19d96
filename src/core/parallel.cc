#include "singa/core/parallel.h"

#include <omp.h>

#include <thread>

namespace singa {

namespace {
int DefaultThreads() {
  unsigned hc = std::thread::hardware_concurrency();
  return hc ? static_cast<int>(hc) : 1;
}
int g_num_threads = DefaultThreads();
}  // namespace

int GetNumThreads() { return g_num_threads; }

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
