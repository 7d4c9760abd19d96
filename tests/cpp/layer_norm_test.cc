// Fast (oneDNN layer_normalization) vs reference rows for src/ops/layer_norm.cc.
#include <gtest/gtest.h>

#include "op_table.h"

namespace singa::testing {
namespace {

const std::vector<DType> kDnnlFloats = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};

TEST(LayerNormalization, OneDnnRows) {
  CheckRow({"LayerNormalization", {{2, 3, 4}, {4}, {4}}, {}, kDnnlFloats, {}, 1e-4, 1e-5, 3});
  CheckRow({"LayerNormalization", {{2, 3, 4}, {4}}, {}, kDnnlFloats});
  CheckRow({"LayerNormalization",
            {{2, 3, 4}, {3, 4}, {3, 4}},
            {{"axis", int64_t{1}}},
            kDnnlFloats,
            {},
            1e-4,
            1e-5,
            3});
  CheckRow({"LayerNormalization", {{16, 768}, {768}, {768}}, {{"epsilon", 1e-3f}}, kDnnlFloats});
  CheckRow({"LayerNormalization", {{0, 4}, {4}, {4}}, {}, kDnnlFloats, {}, 1e-4, 1e-5, 3});
  // Scale varying over a non-normalized dim: the loop runs in both kernels.
  CheckRow({"LayerNormalization", {{2, 3, 4}, {2, 1, 4}}, {}, {DType::kFloat32}});
}

TEST(LayerNormalization, StatsOutputs) {
  Tensor x = Tensor::FromVector<float>({2, 2}, {1, 3, 0, 4});
  Tensor s = Tensor::FromVector<float>({2}, {1, 1});
  TensorList out = CallOp("LayerNormalization", {x, s}, {{"epsilon", 0.0f}}, kLatestOpset, 3);
  EXPECT_EQ(out[1].shape(), (Shape{2, 1}));
  EXPECT_EQ(out[1].ToVector<float>(), (std::vector<float>{2, 2}));
  EXPECT_EQ(out[2].ToVector<float>(), (std::vector<float>{1, 0.5f}));
  EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{-1, 1, -1, 1}));
}

}  // namespace
}  // namespace singa::testing
