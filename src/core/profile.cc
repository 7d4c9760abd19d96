#include "singa/core/profile.h"

#include <algorithm>

namespace singa {
namespace {
thread_local KernelLog* current = nullptr;
}  // namespace

KernelLog::KernelLog() : outer_(current) { current = this; }
KernelLog::~KernelLog() { current = outer_; }

bool KernelLogActive() { return current != nullptr; }

void NoteKernel(std::string_view name) {
  if (!current || name.empty()) return;
  auto& names = current->names_;
  if (std::find(names.begin(), names.end(), name) == names.end()) names.emplace_back(name);
}

}  // namespace singa
