#include "singa/core/parallel.h"

#include <omp.h>
#include <sched.h>

#include <algorithm>
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
