// What a profiled run learns from the kernels it runs. A KernelLog collects,
// on its thread and while it lives, the names of the kernel implementations
// the ops run (oneDNN's, e.g. "brg_conv_fwd:avx512_core"); kernels report
// theirs through NoteKernel, which costs one thread-local read when nothing
// collects.
//
//   KernelLog log;
//   op.fn();
//   for (const std::string& k : log.names()) ...
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace singa {

class KernelLog {
 public:
  KernelLog();
  ~KernelLog();
  KernelLog(const KernelLog&) = delete;
  KernelLog& operator=(const KernelLog&) = delete;

  // Each distinct name once, in the order first reported.
  const std::vector<std::string>& names() const { return names_; }
  void Clear() { names_.clear(); }

 private:
  friend void NoteKernel(std::string_view name);
  std::vector<std::string> names_;
  KernelLog* outer_;
};

// Whether a KernelLog collects on this thread (a kernel whose name costs
// something to find asks first).
bool KernelLogActive();
// Reports a kernel implementation to this thread's innermost KernelLog.
void NoteKernel(std::string_view name);

}  // namespace singa
