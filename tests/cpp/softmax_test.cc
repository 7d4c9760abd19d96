// Fast (oneDNN softmax) vs reference rows for src/ops/softmax.cc, and the
// opset 1/11 coercion to 2-D (which onnx's reference evaluator does not do).
#include <gtest/gtest.h>

#include <limits>

#include "op_table.h"

namespace singa::testing {
namespace {

const std::vector<DType> kDnnlFloats = {DType::kFloat32, DType::kBFloat16, DType::kFloat16};

TEST(Softmax, OneDnnRows) {
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    CheckRow({op, {{2, 3, 4}}, {}, kDnnlFloats});
    CheckRow({op, {{2, 3, 4}}, {{"axis", int64_t{1}}}, kDnnlFloats});
    CheckRow({op, {{2, 3, 4}}, {{"axis", int64_t{0}}}, kDnnlFloats});
    CheckRow({op, {{7}}, {}, kDnnlFloats});
    CheckRow({op, {{0, 5}}, {}, kDnnlFloats});
    CheckRow({op, {{5, 0}}, {}, kDnnlFloats});
    CheckRow({op, {{32, 1000}}, {}, kDnnlFloats});
  }
}

TEST(Softmax, InnerAxisRows) {
  // float32 along an axis with positions after it: the fast kernel's own
  // loop, blocks of 256 inner positions (one partial), split over threads.
  for (const char* op : {"Softmax", "LogSoftmax"}) {
    CheckRow({op, {{1, 16, 4, 2100}}, {{"axis", int64_t{1}}}, {DType::kFloat32}});
    CheckRow({op, {{3, 5, 300}}, {{"axis", int64_t{1}}}, {DType::kFloat32}});
    CheckRow({op, {{2, 3, 4}}, {{"axis", int64_t{0}}}, {DType::kFloat32}});
    CheckRow({op, {{6, 1, 7}}, {{"axis", int64_t{1}}}, {DType::kFloat32}});
  }
}

TEST(Softmax, InnerAxisMasksWithMinusInfinityToExactZeros) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Tensor::FromVector<float>({2, 2}, {-inf, 0.f, 0.f, 0.f});
  for (KernelVariant v : {KernelVariant::kFast, KernelVariant::kReference}) {
    KernelVariantGuard guard(v);
    EXPECT_EQ(Call1("Softmax", {x}, {{"axis", int64_t{0}}}).ToVector<float>(),
              (std::vector<float>{0.f, 0.5f, 1.f, 0.5f}));
    const std::vector<float> log =
        Call1("LogSoftmax", {x}, {{"axis", int64_t{0}}}).ToVector<float>();
    EXPECT_EQ(log[0], -inf);
    EXPECT_EQ(log[2], 0.f);
  }
}

TEST(Softmax, Opset11CoercesTo2D) {
  Tensor x = RandomTensor({2, 3, 4}, DType::kFloat32, 7);
  for (const char* op : {"Softmax", "LogSoftmax", "Hardmax"}) {
    for (KernelVariant v : {KernelVariant::kFast, KernelVariant::kReference}) {
      KernelVariantGuard guard(v);
      Tensor got = Call1(op, {x}, {}, 11);  // axis = 1: normalize over dims 1 and 2
      Tensor want = Call1(op, {x.Reshape({2, 12})}, {{"axis", int64_t{1}}}).Reshape({2, 3, 4});
      EXPECT_LE(CloseRatio(got, want, 1e-5, 1e-6), 1.0) << op;
    }
  }
}

TEST(Softmax, Opset11AxisEqualRankIsOneColumn) {
  Tensor x = RandomTensor({2, 3}, DType::kFloat32, 3);
  Tensor y = Call1("Softmax", {x}, {{"axis", int64_t{2}}}, 11);
  EXPECT_EQ(y.ToVector<float>(), std::vector<float>(6, 1.0f));
}

}  // namespace
}  // namespace singa::testing
