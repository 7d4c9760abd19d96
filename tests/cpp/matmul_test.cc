// MatMul and Gemm: oneDNN fast path vs the plain-loop reference kernel,
// non-contiguous (transposed) inputs, shapes against inference.
#include "kernels/cpu/matmul.h"

#include <gtest/gtest.h>

#include "op_table.h"
#include "singa/core/parallel.h"

namespace singa::testing {
namespace {

const std::vector<DType> kDnnlTypes = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};
const std::vector<DType> kLoopTypes = {DType::kFloat64, DType::kInt32, DType::kInt64};

TEST(MatMul, FastMatchesReference) {
  const std::vector<std::vector<Shape>> shapes = {
      {{3, 4}, {4, 5}},
      {{64, 96}, {96, 80}},
      {{2, 64, 96}, {96, 80}},    // batch broadcast of B
      {{64, 96}, {3, 96, 80}},    // batch broadcast of A
      {{2, 1, 7, 9}, {3, 9, 5}},  // both broadcast
      {{96}, {2, 96, 80}},        // 1-D A
      {{2, 64, 96}, {96}},        // 1-D B
      {{96}, {96}},               // dot product
      {{0, 8}, {8, 5}},           // empty M
      {{4, 0}, {0, 5}},           // K = 0: zeros
      {{1, 1}, {1, 1}},
  };
  for (const auto& s : shapes) {
    CheckRow({"MatMul", s, {}, kDnnlTypes});
    CheckRow({"MatMul", s, {}, kLoopTypes});
  }
}

TEST(MatMul, TransposedViewInputs) {
  // The fast path describes transposed operands by strides; compare with dense copies.
  Tensor a = RandomTensor({96, 64}, DType::kFloat32, 1).Transpose();
  Tensor b = RandomTensor({80, 96}, DType::kFloat32, 2).Transpose();
  Tensor fast = Call1("MatMul", {a, b});
  Tensor dense = Call1("MatMul", {a.Contiguous(), b.Contiguous()});
  KernelVariantGuard guard(KernelVariant::kReference);
  Tensor ref = Call1("MatMul", {a, b});
  EXPECT_LE(CloseRatio(fast, ref, 1e-4, 1e-5), 1.0);
  EXPECT_LE(CloseRatio(dense, ref, 1e-4, 1e-5), 1.0);
}

TEST(MatMul, KnownValues) {
  Tensor a = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = Tensor::FromVector<float>({3, 2}, {7, 8, 9, 10, 11, 12});
  Tensor y = Call1("MatMul", {a, b});
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{58, 64, 139, 154}));
  Tensor v = Call1("MatMul", {a.Slice(0, 0, 1).Squeeze(0), b});  // 1-D A
  EXPECT_EQ(v.shape(), (Shape{2}));
  EXPECT_EQ(v.ToVector<float>(), (std::vector<float>{58, 64}));
}

TEST(Gemm, FastMatchesReference) {
  using Attrs = AttrMap;
  struct Row {
    std::vector<Shape> inputs;
    Attrs attrs;
  };
  const std::vector<Row> rows = {
      {{{64, 96}, {96, 80}}, {}},
      {{{64, 96}, {96, 80}, {80}}, {}},
      {{{96, 64}, {96, 80}, {64, 80}}, {{"transA", int64_t{1}}}},
      {{{64, 96}, {80, 96}, {64, 1}}, {{"transB", int64_t{1}}, {"beta", 0.5f}}},
      {{{96, 64}, {80, 96}, {}},
       {{"transA", int64_t{1}}, {"transB", int64_t{1}}, {"alpha", 0.25f}}},
      {{{64, 96}, {96, 80}, {1, 80}}, {{"alpha", 2.0f}, {"beta", -1.0f}}},
      {{{64, 96}, {96, 80}, {64, 80}}, {{"beta", 0.0f}}},
      {{{3, 0}, {0, 5}, {5}}, {{"beta", 2.0f}}},  // K = 0: beta * C
      {{{0, 4}, {4, 5}, {5}}, {}},
      // A few rows by large weights: PanelMatMul over its panels, on threads.
      {{{1, 1536}, {256, 1536}, {256}}, {{"transB", int64_t{1}}}},
      {{{3, 700}, {700, 130}, {1, 130}}, {}},
  };
  for (const Row& r : rows) {
    CheckRow({"Gemm", r.inputs, r.attrs, kDnnlTypes});
    CheckRow({"Gemm", r.inputs, r.attrs, kLoopTypes});
  }
}

TEST(Gemm, KnownValues) {
  Tensor a = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  Tensor b = Tensor::FromVector<float>({2, 2}, {5, 6, 7, 8});
  Tensor c = Tensor::FromVector<float>({2}, {1, -1});
  Tensor y = Call1("Gemm", {a, b, c}, {{"alpha", 2.0f}, {"beta", 3.0f}, {"transB", int64_t{1}}});
  // A @ B^T = [[17, 23], [39, 53]]
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{37, 43, 81, 103}));
}

// PanelMatMul against the plain loops: every row remainder (1 to 4 rows at
// the end), panels cut short, K odd (one row takes two steps of K at a
// time), weights dense and transposed views, with and without a bias, on
// one thread and on two.
TEST(PanelMatMul, MatchesLoops) {
  for (int threads : {1, 2}) {
    SetNumThreads(threads);
    for (int64_t m : {1, 2, 3, 4, 5, 6, 7, 9})
      for (int64_t k : {1, 3, 64, 131})
        for (int64_t n : {1, 37, 64, 65, 300})
          for (bool transposed : {false, true})
            for (bool with_bias : {false, true}) {
              const uint64_t seed = static_cast<uint64_t>(m * 1000 + k * 10 + n);
              const Tensor a = RandomTensor({m, k}, DType::kFloat32, seed);
              const Tensor w = transposed
                                   ? RandomTensor({k, n}, DType::kFloat32, seed + 1).Transpose()
                                   : RandomTensor({n, k}, DType::kFloat32, seed + 1);
              const Tensor bias = RandomTensor({n}, DType::kFloat32, seed + 2);
              Tensor y({m, n}, DType::kFloat32), want({m, n}, DType::kFloat32);
              cpu::PanelMatMul(a.data<float>(), cpu::PanelWeights(w),
                               with_bias ? bias.data<float>() : nullptr, y.data<float>(), m, k, n);
              cpu::MatMulLoops(a, w.Transpose(), want, 1.0, with_bias ? 1.0 : 0.0,
                               with_bias ? bias : Tensor());
              EXPECT_LE(CloseRatio(y, want, 1e-5, 1e-5), 1.0)
                  << "m " << m << " k " << k << " n " << n << " transposed " << transposed
                  << " bias " << with_bias << " threads " << threads;
            }
  }
  SetNumThreads(0);
}

}  // namespace
}  // namespace singa::testing
