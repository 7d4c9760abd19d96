// Layers, Model (graph vs eager), optimizers and the states file from C++.
#include <gtest/gtest.h>
#include <pthread.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "singa/singa.h"

namespace singa {
namespace {

class Mlp : public nn::Model {
 public:
  Mlp() {
    fc1_ = Add("fc1", std::make_shared<nn::Linear>(8));
    bn_ = Add("bn", std::make_shared<nn::BatchNorm2d>());
    fc2_ = Add("fc2", std::make_shared<nn::Linear>(3));
  }
  TensorList Forward(const TensorList& x) override {
    return {(*fc2_)(Call1("Relu", {(*bn_)((*fc1_)(x[0]))}))};
  }
  TensorList TrainOneBatch(const TensorList& xy) override {
    Tensor out = Forward({xy[0]})[0];
    Tensor loss = nn::SoftmaxCrossEntropy(out, xy[1]);
    optimizer().BackwardAndUpdate(loss);
    return {out, loss};
  }

 private:
  std::shared_ptr<nn::Linear> fc1_, fc2_;
  std::shared_ptr<nn::BatchNorm2d> bn_;
};

struct Batch {
  Tensor x, y;
};

Batch MakeBatch(int step) {
  std::vector<float> xs(16 * 5);
  std::vector<int32_t> ys(16);
  for (int i = 0; i < 16; ++i) {
    for (int j = 0; j < 5; ++j)
      xs[i * 5 + j] = static_cast<float>(((i + step) * 7 + j * 3) % 11) / 5.0f - 1.0f;
    ys[i] = (i + step) % 3;
  }
  return {Tensor::FromVector<float>({16, 5}, xs), Tensor::FromVector<int32_t>({16}, ys)};
}

std::vector<float> Train(bool graph, Mlp& m) {
  Device::Cpu().SetRandSeed(3);
  m.SetOptimizer(std::make_shared<opt::SGD>(opt::SGD::Options{0.1, 0.9}));
  Batch b = MakeBatch(0);
  m.Compile({b.x}, /*is_train=*/true, graph);
  std::vector<float> losses;
  for (int step = 0; step < 6; ++step) {
    Batch next = MakeBatch(step);
    b.x.CopyFrom(next.x);
    b.y.CopyFrom(next.y);
    losses.push_back(m.Call({b.x, b.y})[1].Item<float>());
  }
  return losses;
}

TEST(Model, GraphModeGivesTheSameNumbersAsEager) {
  Mlp eager, graph;
  std::vector<float> a = Train(false, eager), b = Train(true, graph);
  EXPECT_EQ(a, b);
  EXPECT_LT(a.back(), a.front());
  EXPECT_EQ(graph.num_captured_steps(), 1u);
  auto pa = eager.GetStates(), pb = graph.GetStates();
  ASSERT_EQ(pa.size(), pb.size());
  for (auto& [k, v] : pa) EXPECT_EQ(v.ToVector<float>(), pb[k].ToVector<float>()) << k;
  // Running statistics are buffers: states, not parameters.
  EXPECT_EQ(pa.count("bn.running_mean"), 1u);
  EXPECT_EQ(eager.GetParams().count("bn.running_mean"), 0u);
  EXPECT_EQ(eager.GetParams().at("fc1.W").name(), "fc1.W");
}

TEST(Model, StatesFileRoundTripAndMismatch) {
  Mlp m;
  Train(false, m);
  const std::string path = testing::TempDir() + "/mlp.states";
  m.SaveStates(path, {{"epoch", Tensor::Scalar<int64_t>(4)}});
  // SINGA's checkpoint: a zip holding the arrays and their attributes.
  const nn::StatesFile file = nn::LoadStatesFile(path);
  EXPECT_EQ(file.states.size(), m.GetStates().size());
  EXPECT_EQ(file.aux.count("epoch"), 1u);
  {
    std::ifstream in(path, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(bytes.rfind("PK", 0), 0u);
    EXPECT_NE(bytes.find("states_attr.json"), std::string::npos);
    EXPECT_NE(bytes.find("tensor_dict.npz"), std::string::npos);
  }
  Mlp other;
  other.Compile({MakeBatch(0).x}, false);
  nn::TensorMap aux = other.LoadStates(path);
  EXPECT_EQ(aux.at("epoch").Item<int64_t>(), 4);
  for (auto& [k, v] : m.GetStates())
    EXPECT_EQ(v.ToVector<float>(), other.GetStates()[k].ToVector<float>());

  Mlp wider;
  wider.Compile({Tensor::Zeros({2, 6})}, false);
  try {
    wider.LoadStates(path);
    FAIL() << "expected a mismatch";
  } catch (const IOError& e) {
    EXPECT_NE(std::string(e.what()).find("fc1.W: the model has float32[6,8]"), std::string::npos)
        << e.what();
  }
  std::filesystem::remove(path);
}

TEST(Model, TrainOneBatchMustBeDefined) {
  struct Bare : nn::Model {
    TensorList Forward(const TensorList& x) override { return x; }
  } bare;
  bare.Compile({Tensor::Zeros({1})}, true);
  EXPECT_THROW(bare.Call({Tensor::Zeros({1})}), Error);
}

TEST(Optimizer, SgdMomentumByHand) {
  Tensor p = Tensor::FromVector<float>({2}, {1, 2}).set_stores_grad(true);
  p.set_name("p");
  opt::SGD sgd(opt::SGD::Options{0.5, 0.9});
  Tensor g = Tensor::FromVector<float>({2}, {1, -1});
  sgd.Update(p, g);  // buf = g; p -= 0.5 g
  sgd.Update(p, g);  // buf = 0.9 g + g; p -= 0.5 * 1.9 g
  EXPECT_FLOAT_EQ(p.At<float>({0}), 1 - 0.5f - 0.95f);
  EXPECT_FLOAT_EQ(p.At<float>({1}), 2 + 0.5f + 0.95f);
  EXPECT_FLOAT_EQ(sgd.GetStates().at("p:momentum").At<float>({0}), 1.9f);
}

TEST(Layer, LazyInitializationAndErrors) {
  nn::Conv2d conv(4, 3);
  EXPECT_THROW(conv(Tensor::Zeros({1, 2, 5})), ShapeError);  // not [N, C, H, W]
  Tensor y = conv(Tensor::Zeros({1, 2, 5, 5}));
  EXPECT_EQ(y.shape(), (Shape{1, 4, 3, 3}));
  EXPECT_EQ(conv.GetParams().at("W").shape(), (Shape{4, 2, 3, 3}));
  nn::Linear fc(4, 2);
  EXPECT_THROW(fc(Tensor::Zeros({3, 5})), ShapeError);
  nn::LSTM lstm(3, 4);
  TensorList out = lstm(TensorList{Tensor::Zeros({5, 2, 3})});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{5, 2, 4}));
  EXPECT_EQ(lstm.GetParams().size(), 4u);
}

}  // namespace
}  // namespace singa

namespace singa {
namespace {

// A long recorded chain (a Loop or an RNN over many steps) is freed without
// recursion: dropping it must not overflow the stack. It is dropped on a
// thread of 256 KiB of stack, which a recursive release of 100,000 records
// would overflow in any build (a call takes at least 16 bytes of stack).
TEST(Tape, LongChainsAreFreedWithoutRecursion) {
  Tensor x = Tensor::FromVector<float>({1}, {0.0f});
  x.set_stores_grad(true);
  const Tensor one = Tensor::FromVector<float>({1}, {1.0f});
  Tensor y = x;
  for (int i = 0; i < 100'000; ++i) y = Call1("Add", {y, one});
  EXPECT_EQ(y.ToVector<float>()[0], 1e5f);
  EXPECT_TRUE(y.creator());
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 256 << 10), 0);
  pthread_t dropper;
  const auto drop = [](void* t) -> void* {
    *static_cast<Tensor*>(t) = Tensor();  // the whole chain goes here
    return nullptr;
  };
  ASSERT_EQ(pthread_create(&dropper, &attr, drop, &y), 0);
  pthread_join(dropper, nullptr);
  pthread_attr_destroy(&attr);
  EXPECT_FALSE(y.defined());
}

}  // namespace
}  // namespace singa
