// Communicator and DistOpt in a single process (world size 1, no mpirun):
// averaging over one rank is the identity, while the compressions (float16
// rounding, sparsification with residuals) still apply. The multi-process
// behaviour is tested under mpirun by tests/python/test_dist.py.
#include <gtest/gtest.h>

#include <vector>

#include "singa/dist/communicator.h"
#include "singa/opt/dist_opt.h"
#include "singa/singa.h"

namespace singa {
namespace {

std::vector<float> Values(const Tensor& t) { return t.ToVector<float>(); }

TEST(Communicator, SingleProcessWorld) {
  ASSERT_FALSE(dist::LaunchedByMpi()) << "run this test without mpirun";
  dist::Communicator comm(dist::Communicator::Options{.buff_size = 3});
  EXPECT_EQ(comm.rank(), 0);
  EXPECT_EQ(comm.world_size(), 1);
  EXPECT_EQ(comm.local_rank(), 0);
  Tensor a = Tensor::FromVector<float>({2}, {1.5f, -2}),
         b = Tensor::FromVector<float>({3}, {1, 2, 3});
  Tensor c = Tensor::FromVector<float>({2, 2}, {4, 5, 6, 7}), empty = Tensor::Zeros({0, 3});
  comm.AllReduce(a);
  comm.FusedAllReduce({b, c, empty}, false);  // b fills the buffer: sent before c is added
  comm.Broadcast(c);
  comm.Wait();
  EXPECT_EQ(Values(a), (std::vector<float>{1.5f, -2}));
  EXPECT_EQ(Values(b), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(Values(c), (std::vector<float>{4, 5, 6, 7}));
  // One rank sends nothing (the byte counts under mpirun: test_dist.py).
  EXPECT_EQ(comm.bytes_sent(), 0);
  EXPECT_GE(comm.wait_seconds(), 0.0);
}

TEST(Communicator, HalfRoundsThroughFloat16) {
  dist::Communicator comm;
  const std::vector<float> x = {1.0001f, -3.14159f, 65504.0f, 1e-8f};
  Tensor t = Tensor::FromVector<float>({4}, x);
  comm.AllReduceHalf(t);
  comm.Wait();
  for (size_t i = 0; i < x.size(); ++i)
    EXPECT_EQ(t.At<float>({static_cast<int64_t>(i)}), static_cast<float>(Half(x[i]))) << i;
  EXPECT_NE(t.At<float>({0}), x[0]);  // 1.0001 is not a float16
}

TEST(Communicator, SparseTopKKeepsTheRestAsResidual) {
  dist::Communicator comm;
  Tensor g = Tensor::FromVector<float>({4}, {0.1f, -3, 0.5f, 2});
  Tensor r = Tensor::Zeros({4});
  comm.SparseAllReduce({g}, {r}, 0.5f, true);  // keeps ceil(0.5 * 4) = 2 entries
  comm.Wait();
  EXPECT_EQ(Values(g), (std::vector<float>{0, -3, 0, 2}));
  EXPECT_EQ(Values(r), (std::vector<float>{0.1f, 0, 0.5f, 0}));
  // The residual joins the next gradient: 0.2 and 0.6 are now the largest.
  Tensor g2 = Tensor::FromVector<float>({4}, {0.1f, 0, 0.1f, 0.05f});
  comm.SparseAllReduce({g2}, {r}, 0.5f, true);
  comm.Wait();
  EXPECT_EQ(Values(g2), (std::vector<float>{0.2f, 0, 0.6f, 0}));
  EXPECT_EQ(Values(r), (std::vector<float>{0, 0, 0, 0.05f}));
}

TEST(Communicator, SparseThresholdOverFusedTensors) {
  dist::Communicator comm;
  Tensor g1 = Tensor::FromVector<float>({2}, {0.3f, -0.1f});
  Tensor g2 = Tensor::FromVector<float>({3}, {-0.5f, 0.05f, 0.2f});
  Tensor r1 = Tensor::FromVector<float>({2}, {0, -0.15f}), r2 = Tensor::Zeros({3});
  comm.SparseAllReduce({g1, g2}, {r1, r2}, 0.25f, false);
  comm.Wait();
  EXPECT_EQ(Values(g1), (std::vector<float>{0.3f, -0.25f}));
  EXPECT_EQ(Values(r1), (std::vector<float>{0, 0}));
  EXPECT_EQ(Values(g2), (std::vector<float>{-0.5f, 0, 0}));
  EXPECT_EQ(Values(r2), (std::vector<float>{0, 0.05f, 0.2f}));
}

TEST(Communicator, Errors) {
  dist::Communicator comm;
  EXPECT_THROW(comm.AllReduce(Tensor::Zeros({2}, DType::kFloat64)), DTypeError);
  EXPECT_THROW(comm.AllReduce(Tensor::Zeros({2, 3}).Transpose()), Error);  // not contiguous
  Tensor g = Tensor::Zeros({3});
  EXPECT_THROW(comm.SparseAllReduce({g}, {Tensor::Zeros({2})}, 0.1f, true), ShapeError);
  EXPECT_THROW(comm.SparseAllReduce({g}, {}, 0.1f, true), Error);
  EXPECT_THROW(comm.SparseAllReduce({g}, {Tensor::Zeros({3})}, 1.5f, true), Error);
  EXPECT_THROW(comm.SparseAllReduce({g}, {Tensor::Zeros({3})}, -1.0f, false), Error);
  EXPECT_THROW(comm.Broadcast(g, 1), Error);
  EXPECT_THROW(dist::Communicator(dist::Communicator::Options{.buff_size = 0}), Error);
  EXPECT_FALSE(comm.broken());
}

// loss = mean(x * w) for two parameters; the same steps through DistOpt
// (world size 1) and through the plain optimizer give the same parameters.
struct Tiny {
  Tensor w1 = Tensor::FromVector<float>({3}, {0.5f, -1, 2}).set_stores_grad(true);
  Tensor w2 = Tensor::FromVector<float>({2}, {1, 3}).set_stores_grad(true);
  Tensor Loss(int step) const {
    Tensor x1 = Tensor::FromVector<float>({3}, {1.0f + step, -2, 0.5f});
    Tensor x2 = Tensor::FromVector<float>({2}, {0.25f, -1.0f * step});
    Tensor a = Call1("ReduceSum", {Call1("Mul", {x1, w1})});
    Tensor b = Call1("ReduceSum", {Call1("Mul", {x2, w2})});
    Tensor l = Call1("Add", {a, b});
    return Call1("Mul", {l, Call1("Mul", {l, Tensor::Scalar<float>(0.1f)})});
  }
};

TEST(DistOpt, SingleProcessMatchesThePlainOptimizer) {
  enum { kPlain, kFloat32, kPartial, kSparseAll };
  std::vector<std::vector<float>> results;
  for (int variant : {kPlain, kFloat32, kPartial, kSparseAll}) {
    Tiny m;
    auto sgd = std::make_shared<opt::SGD>(opt::SGD::Options{.lr = 0.05, .momentum = 0.9});
    opt::DistOpt dist(sgd, dist::Communicator::Options{.buff_size = 2});
    EXPECT_EQ(dist.world_size(), 1);
    EXPECT_EQ(dist.global_rank(), 0);
    for (int step = 0; step < 4; ++step) {
      Tensor loss = m.Loss(step);
      switch (variant) {
        case kPlain:
          sgd->BackwardAndUpdate(loss);
          break;
        case kFloat32:
          dist.BackwardAndUpdate(loss);
          break;
        case kPartial:
          dist.BackwardAndPartialUpdate(loss);
          break;
        case kSparseAll:
          dist.BackwardAndSparseUpdate(loss, 1.0f, true);
          break;
      }
    }
    EXPECT_EQ(sgd->step(), 4);
    std::vector<float> v = Values(m.w1), v2 = Values(m.w2);
    v.insert(v.end(), v2.begin(), v2.end());
    results.push_back(v);
  }
  for (size_t i = 1; i < results.size(); ++i) EXPECT_EQ(results[i], results[0]) << "variant " << i;
}

TEST(DistOpt, HalfAndSparseCompressTheGradients) {
  // One step of plain SGD (lr 1): the parameter moves by the gradient as sent.
  Tiny m;
  auto sgd = std::make_shared<opt::SGD>(opt::SGD::Options{.lr = 1});
  opt::DistOpt dist(sgd);
  const std::vector<Tensor> params = {m.w1, m.w2};
  auto grads = autograd::Gradients(m.Loss(1));
  std::vector<float> before = Values(m.w1);
  dist.BackwardAndUpdateHalf(m.Loss(1));
  std::vector<float> g1;
  for (auto& [p, g] : grads)
    if (p.id() == m.w1.id()) g1 = Values(g);
  ASSERT_EQ(g1.size(), 3u);
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(m.w1.At<float>({i}), before[i] - static_cast<float>(Half(g1[i]))) << i;

  // Top-K with a third kept over the fused 5 entries: two entries move.
  Tiny s;
  auto sgd2 = std::make_shared<opt::SGD>(opt::SGD::Options{.lr = 1});
  opt::DistOpt sparse(sgd2);
  std::vector<float> w1 = Values(s.w1), w2 = Values(s.w2);
  sparse.BackwardAndSparseUpdate(s.Loss(1), 0.34f, true);
  int moved = 0;
  for (int i = 0; i < 3; ++i) moved += s.w1.At<float>({i}) != w1[i];
  for (int i = 0; i < 2; ++i) moved += s.w2.At<float>({i}) != w2[i];
  EXPECT_EQ(moved, 2);
}

TEST(DistOpt, RejectsNonFloat32Parameters) {
  auto sgd = std::make_shared<opt::SGD>(opt::SGD::Options{.lr = 0.1});
  opt::DistOpt dist(sgd);
  Tensor w = Tensor::FromVector<double>({2}, {1, 2}).set_stores_grad(true);
  Tensor loss = Call1("ReduceSum", {Call1("Mul", {w, w})});
  EXPECT_THROW(dist.BackwardAndUpdate(loss), DTypeError);
  EXPECT_THROW(opt::DistOpt(nullptr), Error);
}

}  // namespace
}  // namespace singa
