// Fast (oneDNN eltwise) vs reference rows for src/ops/activations.cc.
#include <gtest/gtest.h>

#include "op_table.h"

namespace singa::testing {
namespace {

const std::vector<DType> kDnnlFloats = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};

TEST(Activations, OneDnnEltwiseRows) {
  const std::vector<Shape> shapes = {{2, 3, 4}, {}, {0, 3}, {3, 70000}};
  for (const char* op :
       {"Relu", "LeakyRelu", "Elu", "Selu", "Sigmoid", "HardSigmoid", "HardSwish", "Gelu"})
    for (const Shape& s : shapes) CheckRow({op, {s}, {}, kDnnlFloats});
}

TEST(Activations, OneDnnEltwiseAttributes) {
  CheckRow({"LeakyRelu", {{4, 5}}, {{"alpha", 0.3f}}, kDnnlFloats});
  CheckRow({"Elu", {{4, 5}}, {{"alpha", 0.5f}}, kDnnlFloats});
  CheckRow({"Selu", {{4, 5}}, {{"alpha", 1.5f}, {"gamma", 2.0f}}, kDnnlFloats});
  CheckRow({"HardSigmoid", {{4, 5}}, {{"alpha", 0.3f}, {"beta", 0.4f}}, kDnnlFloats});
  CheckRow({"Gelu", {{4, 5}}, {{"approximate", std::string("tanh")}}, kDnnlFloats});
}

TEST(Activations, ClipRows) {
  Tensor lo = Tensor::Scalar<float>(-0.5f), hi = Tensor::Scalar<float>(0.25f);
  CheckRow({"Clip", {{4, 5}}, {}, {DType::kFloat32}, {lo, hi}});
  CheckRow({"Clip", {{3, 7, 2}}, {}, {DType::kFloat32}, {lo}});
  // min > max: the loop runs (every value becomes max).
  CheckRow({"Clip", {{4, 5}}, {}, {DType::kFloat32}, {hi, lo}});
  CheckRow({"Clip", {{0, 5}}, {}, {DType::kFloat32}, {lo, hi}});
}

TEST(Activations, ClipMinAboveMaxGivesMax) {
  Tensor x = Tensor::FromVector<float>({3}, {-1, 0.5f, 2});
  Tensor y = Call1("Clip", {x, Tensor::Scalar<float>(1), Tensor::Scalar<float>(0)});
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{0, 0, 0}));
}

TEST(Activations, ReluInt) {
  Tensor x = Tensor::FromVector<int32_t>({4}, {-2, 0, 3, -7});
  Tensor y = Call1("Relu", {x});
  EXPECT_EQ(y.ToVector<int32_t>(), (std::vector<int32_t>{0, 0, 3, 0}));
}

// The Python table cannot cover this: onnx's reference Softsign fails on 0-d.
TEST(Activations, SoftsignScalar) {
  Tensor y = Call1("Softsign", {Tensor::Scalar<float>(3.0f)});
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_FLOAT_EQ(y.Item<float>(), 0.75f);
}

}  // namespace
}  // namespace singa::testing
