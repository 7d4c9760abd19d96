// FusedConv (domain ai.singa): the ONNX planner's Conv with an optional Z
// added to its result and an optional activation (src/ops/conv.cc). Its
// `blocked` attribute is a combination of these bits, one per tensor held
// in oneDNN's channel-blocked layout instead of NCHW:
//
//   m["blocked"] = fused_conv::kBlockedX | fused_conv::kBlockedY;
//   if (a.blocked & fused_conv::kBlockedZ) { ... }
#pragma once

#include <cstdint>

namespace singa::fused_conv {

inline constexpr int64_t kBlockedX = 1;  // input X
inline constexpr int64_t kBlockedY = 2;  // the result Y
inline constexpr int64_t kBlockedZ = 4;  // input Z, added to the result

}  // namespace singa::fused_conv
