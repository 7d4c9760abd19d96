// FusedElementwise (src/ops/fused_elementwise.cc): programs against their
// steps run as the ops they replace (the reference kernel), on contiguous
// and strided inputs, with broadcasting; malformed programs are refused.
#include <gtest/gtest.h>

#include "op_table.h"
#include "singa/core/error.h"

namespace singa::testing {
namespace {

OpRow Row(std::vector<Shape> inputs, AttrMap program) {
  return {.op = "FusedElementwise", .inputs = inputs, .attrs = program, .domain = "ai.singa"};
}

AttrMap Program(std::vector<std::string> ops, std::vector<int64_t> args,
                std::vector<float> alphas = {}, std::vector<float> betas = {}) {
  alphas.resize(ops.size(), 0.f);
  betas.resize(ops.size(), 0.f);
  return {{"ops", ops}, {"args", args}, {"alphas", alphas}, {"betas", betas}};
}

TEST(FusedElementwise, HardSwishInItsParts) {
  // x * (Clip(x + a, 0, 6) / b): inputs x, a, b.
  CheckRow(
      Row({{2, 16, 5, 7}, {}, {}}, Program({"Add", "Clip", "Div", "Mul"}, {0, 1, 3, -1, 4, 2, 0, 5},
                                           {0, 0, 0, 0}, {0, 6, 0, 0})));
}

TEST(FusedElementwise, SqueezeExcitationScaleBroadcastsPerChannel) {
  CheckRow(Row({{2, 8, 5, 7}, {2, 8, 1, 1}}, Program({"Sigmoid", "Mul"}, {1, -1, 0, 2})));
}

TEST(FusedElementwise, GeluInItsParts) {
  // x * (Erf(x / c) + one) * half.
  CheckRow(Row({{3, 40}, {}, {}, {}},
               Program({"Div", "Erf", "Add", "Mul", "Mul"}, {0, 1, 4, -1, 5, 2, 0, 6, 7, 3})));
}

TEST(FusedElementwise, EveryStepWithBroadcastingBothWays) {
  // x [4,1,40] and y [3,1]: the result is [4,3,40].
  CheckRow(Row({{4, 1, 40}, {3, 1}},
               Program({"Abs", "Sqrt", "Exp", "Neg", "Reciprocal", "Tanh", "Max", "Min", "Sub",
                        "Relu", "LeakyRelu", "Add", "HardSigmoid", "Sigmoid", "Mul"},
                       {0, -1, 2, -1, 3,  -1, 4,  -1, 5,  -1, 6,  -1, 7,  1,  8,
                        0, 9,  1, 10, -1, 10, -1, 11, 12, 13, -1, 14, -1, 15, 0},
                       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.1f, 0, 0.2f, 0, 0},
                       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0.5f, 0, 0})));
}

TEST(FusedElementwise, MalformedProgramsAreRefused) {
  const OpSchema& op = OpRegistry::Get("FusedElementwise", kLatestOpset, "ai.singa");
  const TensorList x = {RandomTensor({2, 3}, DType::kFloat32, 1)};
  const auto run = [&](const AttrMap& program) { op.Run(x, op.ParseAttrs(program, x)); };
  EXPECT_THROW(run(Program({"Relu", "Relu"}, {2, -1, 1, -1})), ShapeError);  // a later step
  // A unary step given a second operand, a binary one without.
  EXPECT_THROW(run(Program({"Relu"}, {0, 0})), ShapeError);
  EXPECT_THROW(run(Program({"Add"}, {0, -1})), ShapeError);
  EXPECT_THROW(run(Program({"Softmax"}, {0, -1})), UnsupportedOp);
  EXPECT_THROW(run(Program({"Relu"}, {0})), ShapeError);
}

}  // namespace
}  // namespace singa::testing
