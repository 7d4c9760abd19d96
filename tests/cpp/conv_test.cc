// Conv: the oneDNN fast path against the plain-loop reference kernel.
#include <gtest/gtest.h>

#include "op_table.h"
#include "singa/autograd/autograd.h"

namespace singa::testing {
namespace {

using Ints = std::vector<int64_t>;

const std::vector<DType> kFastTypes = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};

std::vector<OpRow> ConvRows() {
  return {
      {"Conv", {{1, 3, 8, 8}, {4, 3, 3, 3}}, {{"pads", Ints{1, 1, 1, 1}}}, kFastTypes},
      {"Conv", {{2, 3, 9, 9}, {8, 3, 3, 3}, {8}}, {{"strides", Ints{2, 2}}}, kFastTypes},
      {"Conv",
       {{1, 4, 7, 6}, {5, 4, 3, 2}, {5}},
       {{"pads", Ints{0, 1, 2, 0}}, {"strides", Ints{2, 1}}}},
      {"Conv",
       {{1, 4, 10, 10}, {6, 4, 3, 3}},
       {{"dilations", Ints{2, 3}}, {"pads", Ints{2, 1, 2, 3}}}},
      {"Conv",
       {{1, 8, 9, 9}, {12, 2, 3, 3}, {12}},
       {{"group", int64_t{4}}, {"pads", Ints{1, 1, 1, 1}}}},
      // depthwise, as in MobileNet: stride 2, then multiplier 2
      {"Conv",
       {{2, 16, 12, 12}, {16, 1, 3, 3}, {16}},
       {{"group", int64_t{16}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}},
       kFastTypes},
      {"Conv",
       {{1, 8, 7, 7}, {16, 1, 5, 5}},
       {{"group", int64_t{8}}, {"auto_pad", std::string("SAME_UPPER")}}},
      {"Conv", {{1, 8, 7, 7}, {16, 8, 1, 1}, {16}}, {}, kFastTypes},
      {"Conv",
       {{1, 3, 11, 10}, {4, 3, 3, 3}},
       {{"auto_pad", std::string("SAME_LOWER")}, {"strides", Ints{2, 2}}}},
      {"Conv",
       {{1, 3, 11, 10}, {4, 3, 3, 3}},
       {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 3}}}},
      {"Conv",
       {{1, 3, 11, 10}, {4, 3, 3, 3}},
       {{"auto_pad", std::string("VALID")}, {"strides", Ints{2, 2}}}},
      // ResNet-18 shapes, scaled down in space
      {"Conv",
       {{1, 3, 32, 32}, {8, 3, 7, 7}},
       {{"pads", Ints{3, 3, 3, 3}}, {"strides", Ints{2, 2}}}},
      {"Conv",
       {{2, 64, 8, 8}, {64, 64, 3, 3}, {64}},
       {{"pads", Ints{1, 1, 1, 1}}},
       kFastTypes,
       {},
       1e-4,
       1e-4},
      {"Conv", {{1, 64, 8, 8}, {128, 64, 1, 1}}, {{"strides", Ints{2, 2}}}},
      // 1-D and 3-D
      {"Conv",
       {{2, 4, 17}, {6, 4, 3}, {6}},
       {{"pads", Ints{1, 2}}, {"strides", Ints{2}}},
       kFastTypes},
      {"Conv",
       {{1, 6, 20}, {6, 1, 5}},
       {{"group", int64_t{6}}, {"dilations", Ints{2}}, {"pads", Ints{4, 4}}}},
      {"Conv",
       {{1, 3, 5, 6, 7}, {4, 3, 3, 3, 3}, {4}},
       {{"pads", Ints{1, 0, 1, 1, 1, 0}}},
       kFastTypes},
      {"Conv",
       {{1, 4, 6, 6, 6}, {4, 2, 2, 3, 2}},
       {{"group", int64_t{2}}, {"strides", Ints{2, 1, 2}}, {"dilations", Ints{1, 2, 1}}}},
      // channels multiples of 16: the channel-blocked candidate (nCw16c,
      // nChw16c, nCdhw16c) competes with oneDNN's pick and, for 1x1, plain
      {"Conv",
       {{2, 16, 19}, {32, 16, 3}, {32}},
       {{"pads", Ints{1, 1}}},
       kFastTypes,
       {},
       1e-4,
       1e-4},
      {"Conv", {{2, 32, 6, 6}, {16, 32, 1, 1}, {16}}, {}, kFastTypes, {}, 1e-4, 1e-4},
      {"Conv",
       {{2, 32, 7, 7}, {32, 16, 3, 3}},
       {{"group", int64_t{2}}, {"pads", Ints{1, 1, 1, 1}}},
       kFastTypes,
       {},
       1e-4,
       1e-4},
      {"Conv",
       {{1, 16, 4, 5, 6}, {16, 16, 3, 3, 3}, {16}},
       {{"pads", Ints{1, 1, 1, 1, 1, 1}}},
       kFastTypes,
       {},
       1e-4,
       1e-4},
      // empty: no batch, no output channels, no input channels (bias only)
      {"Conv", {{0, 3, 5, 5}, {4, 3, 3, 3}, {4}}},
      {"Conv", {{1, 3, 5, 5}, {0, 3, 3, 3}}},
      {"Conv", {{1, 0, 5, 5}, {4, 0, 3, 3}, {4}}},
      // float64 runs the loop kernel on both paths
      {"Conv", {{1, 3, 6, 6}, {2, 3, 3, 3}}, {{"pads", Ints{1, 1, 1, 1}}}, {DType::kFloat64}},
  };
}

TEST(ConvTest, FastMatchesReference) {
  for (const OpRow& row : ConvRows()) CheckRow(row);
}

TEST(ConvTest, RepeatedCallsReuseCachedPrimitives) {
  Tensor x = RandomTensor({1, 8, 10, 10}, DType::kFloat32, 7);
  Tensor w = RandomTensor({8, 8, 3, 3}, DType::kFloat32, 8);
  AttrMap attrs = {{"pads", Ints{1, 1, 1, 1}}};
  Tensor first = Call1("Conv", {x, w}, attrs);
  Tensor second = Call1("Conv", {x, w}, attrs);
  EXPECT_EQ(CloseRatio(first, second, 0, 0), 0.0);
}

TEST(ConvTest, KnownValues) {
  // 1x1x3x3 input of 1..9, a 2x2 kernel of ones, bias 10: window sums + 10.
  Tensor x = Tensor::FromVector<float>({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Tensor w = Tensor::Ones({1, 1, 2, 2});
  Tensor b = Tensor::FromVector<float>({1}, {10});
  Tensor y = Call1("Conv", {x, w, b});
  EXPECT_EQ(y.shape(), (Shape{1, 1, 2, 2}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{22, 26, 34, 38}));
}

// Backward (ConvGradData, ConvGradWeight): oneDNN against the loops. NOTE:
// float32 sums of up to N*H*W (dW) products in different orders: 1e-4.
TEST(ConvTest, BackwardFastMatchesReference) {
  const Ints p1 = {1, 1, 1, 1};
  CheckGrads("Conv", {{2, 16, 14, 14}, {32, 16, 3, 3}, {32}}, {{"pads", p1}});
  CheckGrads("Conv", {{2, 16, 15, 15}, {32, 16, 3, 3}}, {{"pads", p1}, {"strides", Ints{2, 2}}});
  CheckGrads("Conv", {{2, 32, 14, 14}, {32, 1, 3, 3}, {32}},
             {{"group", int64_t{32}}, {"pads", p1}, {"strides", Ints{2, 2}}});
  CheckGrads("Conv", {{2, 16, 9, 9}, {32, 1, 3, 3}},
             {{"group", int64_t{16}}, {"pads", Ints{0, 1, 1, 0}}});
  CheckGrads("Conv", {{2, 32, 7, 7}, {64, 32, 1, 1}, {64}}, {{"strides", Ints{2, 2}}});
  CheckGrads("Conv", {{2, 16, 10, 10}, {24, 4, 3, 3}},
             {{"group", int64_t{4}}, {"dilations", Ints{2, 2}}, {"pads", Ints{2, 2, 2, 2}}});
  CheckGrads("Conv", {{2, 3, 32, 32}, {16, 3, 7, 7}},
             {{"pads", Ints{3, 3, 3, 3}}, {"strides", Ints{2, 2}}});
  CheckGrads("Conv", {{2, 8, 30}, {16, 8, 5}, {16}}, {{"pads", Ints{2, 2}}});
  CheckGrads("Conv", {{1, 8, 6, 7, 8}, {8, 8, 3, 3, 3}, {8}}, {{"pads", Ints{1, 1, 1, 1, 1, 1}}});
  CheckGrads("Conv", {{1, 8, 9, 9}, {8, 8, 3, 3}},
             {{"auto_pad", std::string("SAME_UPPER")}, {"strides", Ints{2, 2}}});
}

TEST(ConvTest, BackwardEmpty) {
  // No batch: dW and dB are zeros; no output channels: dX is zeros.
  TensorList g =
      Grads("Conv", {Tensor::Zeros({0, 3, 5, 5}), Tensor::Ones({4, 3, 3, 3}), Tensor::Ones({4})},
            {}, KernelVariant::kFast);
  EXPECT_EQ(g[0].shape(), (Shape{0, 3, 5, 5}));
  EXPECT_EQ(g[1].ToVector<float>(), std::vector<float>(108, 0.0f));
  EXPECT_EQ(g[2].ToVector<float>(), std::vector<float>(4, 0.0f));
  g = Grads("Conv", {Tensor::Ones({1, 3, 5, 5}), Tensor::Zeros({0, 3, 3, 3})}, {},
            KernelVariant::kFast);
  EXPECT_EQ(g[0].ToVector<float>(), std::vector<float>(75, 0.0f));
}

}  // namespace
}  // namespace singa::testing
