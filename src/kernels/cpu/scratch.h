// Memory a kernel needs only while it runs (a oneDNN primitive's
// scratchpad, a convolution's input widened with zeros): one buffer per
// thread and use, grown to the largest request and kept. Allocated per call
// from the memory pool instead, every new input size asked for a new size
// class, whose pages faulted in afresh: over a text recognizer's stream of
// line widths, the widened inputs were 60% of the page faults of a call.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <memory>

#include "singa/core/error.h"

namespace singa::cpu {

class ScratchBuffer {
 public:
  // At least `bytes`, page-aligned; valid until the next call. `what` names
  // the use in the error when memory runs out. The buffer grows by half
  // again at least, so that inputs growing a little on every call (a stream
  // of ever wider lines) do not fault in a new buffer each time.
  void* Get(size_t bytes, const char* what) {
    if (bytes_ < bytes) {
      const size_t rounded = (std::max(bytes, bytes_ + bytes_ / 2) + kPage - 1) / kPage * kPage;
      data_.reset();
      data_.reset(static_cast<char*>(std::aligned_alloc(kPage, rounded)));
      bytes_ = data_ ? rounded : 0;
      SINGA_CHECK(data_, MemoryError, what << ": no memory for " << bytes << " bytes of scratch");
    }
    return data_.get();
  }

 private:
  static constexpr size_t kPage = 4096;
  std::unique_ptr<char, decltype(&std::free)> data_{nullptr, &std::free};
  size_t bytes_ = 0;
};

}  // namespace singa::cpu
