// The oneDNN glue's primitive cache (src/kernels/cpu/dnnl_util.h): bounded
// per value type, least recently used dropped first, a held value alive.
#include "kernels/cpu/dnnl_util.h"

#include <gtest/gtest.h>

namespace singa {
namespace {

namespace du = cpu::dnnl_util;

struct Probe {
  size_t id;
};

TEST(DnnlCache, KeepsTheMostRecentlyUsedValuesOfATypeAndWhatCallersHold) {
  size_t made = 0;
  const auto get = [&](size_t i) {
    return du::Cached<Probe>("probe;" + std::to_string(i), [&] { return Probe{made++}; });
  };
  const auto first = get(0);
  for (size_t i = 1; i < du::kCachedPerType; ++i) get(i);  // full
  EXPECT_EQ(made, du::kCachedPerType);
  get(0);  // 0 the most recently used, 1 the least
  EXPECT_EQ(made, du::kCachedPerType);
  get(du::kCachedPerType);  // one more value drops 1
  EXPECT_EQ(made, du::kCachedPerType + 1);
  get(0);
  EXPECT_EQ(made, du::kCachedPerType + 1);
  EXPECT_EQ(get(1)->id, du::kCachedPerType + 1);  // made again
  // A value dropped while a caller holds it stays alive for the caller.
  for (size_t i = 0; i < du::kCachedPerType; ++i) get(2 * du::kCachedPerType + i);
  EXPECT_EQ(first->id, 0u);
  EXPECT_NE(get(0)->id, 0u);
}

}  // namespace
}  // namespace singa
