#include <gtest/gtest.h>

#include "singa/core/tensor.h"
#include "singa/ops/op.h"

namespace singa {
namespace {

TEST(Tensor, ViewsShareStorage) {
  Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor xt = x.Permute({1, 0});
  EXPECT_FALSE(xt.is_contiguous());
  EXPECT_EQ(xt.block(), x.block());
  EXPECT_EQ(xt.At<float>({2, 1}), 6.f);
  Tensor c = xt.Contiguous();
  EXPECT_TRUE(c.is_contiguous());
  EXPECT_EQ(c.ToVector<float>(), (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

TEST(Ops, AddBroadcasts) {
  Tensor a = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::FromVector<float>({3}, {10, 20, 30});
  Tensor y = CallOp("Add", {a, b})[0];
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

}  // namespace
}  // namespace singa
