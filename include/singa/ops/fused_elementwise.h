// FusedElementwise (domain ai.singa): a group of float32 elementwise ops
// the ONNX planner runs as one program (src/ops/fused_elementwise.cc, made
// by src/onnx/passes/fuse_elementwise.cc). The bounds both keep to: a
// step's results for one chunk live on the stack.
#pragma once

#include <cstddef>

namespace singa::fused_elementwise {

inline constexpr size_t kMaxSteps = 32;
inline constexpr size_t kMaxOperands = 48;  // inputs and steps together

}  // namespace singa::fused_elementwise
