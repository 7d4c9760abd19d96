// Fast (oneDNN batch_normalization) vs reference rows for src/ops/batch_norm.cc,
// and opset 9 training outputs (which onnx's reference evaluator lacks).
#include <gtest/gtest.h>

#include "op_table.h"
#include "singa/autograd/autograd.h"

namespace singa::testing {
namespace {

const std::vector<DType> kDnnlFloats = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};

OpRow Bn(Shape x, int64_t c, AttrMap attrs = {}, int outputs = -1) {
  // var must be positive: a fixed input (the swept dtype's random values are in [-1, 1)).
  return {"BatchNormalization",
          {x, {c}, {c}, {c}},
          std::move(attrs),
          {DType::kFloat32},
          {RandomTensor({c}, DType::kFloat32, 99, 0.1, 2.0)},
          1e-4,
          1e-5,
          outputs};
}

TEST(BatchNormalization, OneDnnRows) {
  for (const Shape& x : std::vector<Shape>{
           {2, 3, 4, 5}, {2, 3}, {2, 3, 4}, {1, 2, 2, 2, 2}, {0, 3, 2, 2}, {8, 16, 7, 7}}) {
    CheckRow(Bn(x, x[1]));
    CheckRow(Bn(x, x[1], {{"epsilon", 0.5f}}));
  }
  CheckRow(Bn({5}, 1));
  CheckRow(Bn({2, 3, 4, 5}, 3, {{"training_mode", int64_t{1}}}, 3));
}

TEST(BatchNormalization, Half) {
  for (DType dt : {DType::kBFloat16, DType::kFloat16}) {
    OpRow row = Bn({2, 3, 4, 5}, 3);
    row.dtypes = {dt};
    row.fixed = {RandomTensor({3}, dt, 99, 0.1, 2.0)};
    CheckRow(row);
  }
}

TEST(BatchNormalization, Opset9Training) {
  // channel 0: {1, 3, 1, 3} mean 2 var 1; channel 1: {0, -2, 2, 0} mean 0 var 2
  Tensor x = Tensor::FromVector<float>({2, 2, 2}, {1, 3, 0, -2, 1, 3, 2, 0});
  Tensor ones = Tensor::FromVector<float>({2}, {1, 1}),
         zeros = Tensor::FromVector<float>({2}, {0, 0});
  TensorList out = CallOp("BatchNormalization", {x, ones, zeros, zeros, ones},
                          {{"epsilon", 0.0f}, {"momentum", 0.5f}}, 9, 5);
  EXPECT_EQ(out[1].ToVector<float>(), (std::vector<float>{1, 0}));     // running mean
  EXPECT_EQ(out[2].ToVector<float>(), (std::vector<float>{1, 1.5f}));  // running var
  EXPECT_EQ(out[3].ToVector<float>(), (std::vector<float>{2, 0}));     // batch mean
  EXPECT_EQ(out[4].ToVector<float>(), (std::vector<float>{1, 2}));     // batch var
  EXPECT_EQ(out[0].At<float>({0, 0, 0}), -1.0f);
}

// Backward (BatchNormGrad): oneDNN against the loop, training (opset 14 and
// opset 9's extra outputs) and inference.
TEST(BatchNormTest, BackwardFastMatchesReference) {
  for (const Shape& x : {Shape{4, 16, 14, 14}, Shape{16, 32}, Shape{2, 8, 5, 6, 7}}) {
    const Shape c = {x[1]};
    CheckGrads("BatchNormalization", {x, c, c, c, c}, {{"training_mode", int64_t{1}}}, 1e-4, 1e-4,
               3);
    CheckGrads("BatchNormalization", {x, c, c, c, c}, {}, 1e-4, 1e-4, 5, 9);
    CheckGrads("BatchNormalization", {x, c, c, c, c}, {{"epsilon", 1e-3f}}, 1e-4, 1e-4, 1,
               kLatestOpset, true);
  }
}

}  // namespace
}  // namespace singa::testing
