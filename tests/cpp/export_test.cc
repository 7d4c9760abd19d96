// ONNX export from C++: a trained model round-trips through ToOnnx and the
// importer with the same outputs and weights; bad inputs raise errors that
// name the tensor or op, and SaveOnnx never leaves a half-written file.
#include "singa/onnx/export.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "singa/onnx/model.h"
#include "singa/onnx/sonnx.h"
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

Tensor Input(int64_t n) {
  std::vector<float> xs(n * 5);
  for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>((i * 7) % 11) / 5.0f - 1.0f;
  return Tensor::FromVector<float>({n, 5}, xs);
}

void Trained(Mlp& m, const Tensor& x) {
  Device::Cpu().SetRandSeed(3);
  m.SetOptimizer(std::make_shared<opt::SGD>(opt::SGD::Options{0.1, 0.9}));
  m.Compile({x}, /*is_train=*/true);
  std::vector<int32_t> ys(x.shape()[0]);
  for (size_t i = 0; i < ys.size(); ++i) ys[i] = static_cast<int32_t>(i % 3);
  Tensor y = Tensor::FromVector<int32_t>({x.shape()[0]}, ys);
  for (int step = 0; step < 3; ++step) m.Call({x, y});
}

// The model's inference forward, recorded (grad mode on, training mode off).
Tensor RecordedForward(Mlp& m, const Tensor& x) {
  GradModeGuard record(true);
  TracingGuard trace;
  TrainingModeGuard inference(false);
  return m.Forward({x})[0];
}

void ExpectNear(const Tensor& a, const Tensor& b) {
  std::vector<float> va = a.ToVector<float>(), vb = b.ToVector<float>();
  ASSERT_EQ(va.size(), vb.size());
  for (size_t i = 0; i < va.size(); ++i) EXPECT_NEAR(va[i], vb[i], 1e-5f) << i;
}

template <class E>
std::string ErrorOf(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return "";
}

TEST(Export, TrainedModelRoundTripsThroughTheImporter) {
  Mlp m;
  Tensor x = Input(16);
  Trained(m, x);
  Tensor y = RecordedForward(m, x);
  std::string bytes = sonnx::ToOnnx({x}, {y}, {.model_name = "mlp", .dynamic_batch = true});
  auto rep = sonnx::PrepareFromBytes(bytes);
  EXPECT_EQ(rep->opset(), kLatestOpset);
  ASSERT_EQ(rep->inputs().size(), 1u);
  EXPECT_EQ(rep->inputs()[0].dim_params[0], "batch");
  ExpectNear(rep->Run({x})[0], y);
  // Dynamic batch: another batch size runs too.
  Tensor x4 = Input(4);
  ExpectNear(rep->Run({x4})[0], RecordedForward(m, x4));
  // The trained weights and running statistics under their dotted paths.
  for (auto& [name, value] : m.GetStates()) {
    ASSERT_EQ(rep->params().count(name), 1u) << name;
    EXPECT_EQ(rep->params().at(name).ToVector<float>(), value.ToVector<float>()) << name;
  }
  // BatchNormalization in inference form: one output, no training_mode.
  std::vector<std::string> ops = rep->node_op_types();
  EXPECT_NE(std::find(ops.begin(), ops.end(), "BatchNormalization"), ops.end());
}

// Transfer learning in C++: an imported model cut before its classifier,
// with a new head, trained and saved.
class Transfer : public sonnx::SONNXModel {
 public:
  explicit Transfer(std::shared_ptr<sonnx::SingaRep> rep) : SONNXModel(std::move(rep)) {
    head_ = Add("head", std::make_shared<nn::Linear>(2));
  }
  TensorList Forward(const TensorList& x) override { return {(*head_)(Run(x, -2)[0])}; }
  TensorList TrainOneBatch(const TensorList& xy) override {
    Tensor out = Forward({xy[0]})[0];
    Tensor loss = nn::SoftmaxCrossEntropy(out, xy[1]);
    optimizer().BackwardAndUpdate(loss);
    return {out, loss};
  }

 private:
  std::shared_ptr<nn::Linear> head_;
};

TEST(SONNXModel, SubclassedInCppCutsAppendsTrainsAndSaves) {
  Mlp m;
  Tensor x = Input(16);
  Trained(m, x);
  auto rep = sonnx::PrepareFromBytes(sonnx::ToOnnx({x}, {RecordedForward(m, x)}));
  std::vector<int32_t> labels(16);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<int32_t>(i % 2);
  Tensor y = Tensor::FromVector<int32_t>({16}, labels);
  std::vector<float> losses[2];
  for (bool graph : {false, true}) {
    Transfer t(sonnx::PrepareFromBytes(sonnx::ToOnnx({x}, {RecordedForward(m, x)})));
    t.SetOptimizer(std::make_shared<opt::SGD>(opt::SGD::Options{0.1}));
    Device::Cpu().SetRandSeed(5);
    t.Compile({x}, /*is_train=*/true, graph);
    // The imported initializers keep their ONNX names; the head is under its path.
    nn::TensorMap params = t.GetParams();
    for (auto& [name, w] : rep->params())
      if (w.stores_grad()) EXPECT_EQ(params.count(name), 1u) << name;
    EXPECT_EQ(params.count("head.W"), 1u);
    EXPECT_EQ(params.count("head.b"), 1u);
    EXPECT_EQ(t.GetStates().size(), rep->params().size() + 2);
    for (int step = 0; step < 4; ++step)
      losses[graph].push_back(t.Call({x, y})[1].ToVector<float>()[0]);
    EXPECT_LT(losses[graph].back(), losses[graph].front());
    const std::string path = testing::TempDir() + "/transfer.states";
    t.SaveStates(path);
    Transfer u(sonnx::PrepareFromBytes(sonnx::ToOnnx({x}, {RecordedForward(m, x)})));
    u.Compile({x}, /*is_train=*/false);
    u.LoadStates(path);
    t.Eval();
    u.Eval();
    ExpectNear(u.Call({x})[0], t.Call({x})[0]);
    std::filesystem::remove(path);
  }
  EXPECT_EQ(losses[0], losses[1]);
}

// SINGA's workflow: export right after an inference call, no guards, in
// eager and in graph mode (the step's record expands into its ops).
TEST(Export, AfterAnInferenceCallInEveryMode) {
  for (bool graph : {false, true}) {
    Mlp m;
    Tensor x = Input(8);
    Trained(m, x);
    m.Eval();
    m.Graph(graph);
    Tensor y;
    for (int call = 0; call < 2; ++call) y = m.Call({x})[0];  // the second replays
    auto rep = sonnx::PrepareFromBytes(sonnx::ToOnnx({x}, {y}));
    ExpectNear(rep->Run({x})[0], y);
    // And the imported model's own (planned) run exports too.
    Tensor z = rep->Run({x})[0];
    ExpectNear(sonnx::PrepareFromBytes(sonnx::ToOnnx({x}, {z}))->Run({x})[0], y);
  }
}

// A record of an older op version is written in the target opset's form:
// Softmax-1 (the input seen as 2-d) beside an op that needs opset 13.
TEST(Export, UpgradesOlderForms) {
  Tensor x = Tensor::FromVector<float>({2, 3, 2}, {1, 2, 3, 4, 5, 6, -1, 0, 1, 2, 3, 9});
  const OpSchema& softmax1 = OpRegistry::Get("Softmax", 9);
  Tensor s =
      softmax1.Run(std::vector<Tensor>{x}, softmax1.ParseAttrs({{"axis", int64_t{1}}}, {}))[0];
  Tensor y = Call1("Unsqueeze", {s, Tensor::FromVector<int64_t>({1}, {0})});
  const std::string bytes = sonnx::ToOnnx({x}, {y});
  auto rep = sonnx::PrepareFromBytes(bytes);
  EXPECT_EQ(rep->opset(), 13);
  ExpectNear(rep->Run({x})[0], y);
  // The same at an explicit newer target.
  ExpectNear(sonnx::PrepareFromBytes(sonnx::ToOnnx({x}, {s}, {.opset = 21}))->Run({x})[0], s);
}

// An imported model that declares batch 1 takes the batch of Compile's inputs.
TEST(SONNXModel, CompileTakesThePlaceholdersBatch) {
  Mlp m;
  Tensor x1 = Input(1);
  Trained(m, Input(8));
  m.Eval();
  Tensor y1 = m.Call({x1})[0];
  sonnx::SONNXModel s(sonnx::PrepareFromBytes(sonnx::ToOnnx({x1}, {y1})));
  s.Compile({Input(4)}, /*is_train=*/false);
  EXPECT_EQ(s.Call({Input(4)})[0].shape(), (Shape{4, 3}));
  EXPECT_EQ(s.rep()->inputs()[0].dims, (std::vector<int64_t>{4, 5}));
}

// A state carried over many inference calls: its chain of records starts
// over at kMaxRecordDepth instead of growing without bound.
TEST(Export, InferenceRecordChainsAreBounded) {
  GradModeGuard inference(false);
  Tensor x = Tensor::FromVector<float>({2}, {1, 2});
  Tensor h = x;
  for (int i = 0; i < kMaxRecordDepth + 10; ++i) h = Call1("Relu", {h});
  ASSERT_TRUE(h.creator());
  EXPECT_LT(h.creator()->depth, 16);
  std::string msg = ErrorOf<ShapeError>([&] { sonnx::ToOnnx({x}, {h}); });
  EXPECT_NE(msg.find("not used"), std::string::npos) << msg;
  Tensor y = Call1("Relu", {x});
  EXPECT_EQ(y.creator()->depth, 0);
  EXPECT_TRUE(y.creator()->inputs[0].defined());
}

TEST(Export, OlderOpsetWhereTheOpsAllowIt) {
  Mlp m;
  Tensor x = Input(8);
  Trained(m, x);
  Tensor y = RecordedForward(m, x);
  auto rep = sonnx::PrepareFromBytes(sonnx::ToOnnx({x}, {y}, {.opset = 15}));
  EXPECT_EQ(rep->opset(), 15);
  ExpectNear(rep->Run({x})[0], y);
  std::string msg = ErrorOf<UnsupportedOp>([&] { sonnx::ToOnnx({x}, {y}, {.opset = 10}); });
  EXPECT_NE(msg.find("opset 10 is not supported"), std::string::npos) << msg;
  // BatchNormalization-14 has no opset-13 form.
  msg = ErrorOf<UnsupportedOp>([&] { sonnx::ToOnnx({x}, {y}, {.opset = 13}); });
  EXPECT_NE(msg.find("BatchNormalization"), std::string::npos) << msg;
}

TEST(Export, OutputWithoutHistory) {
  Mlp m;
  Tensor x = Input(4);
  Trained(m, x);
  Tensor y;
  {
    NoGradGuard no_recording;
    y = m.Forward({x})[0];
  }
  y.set_name("logits");
  std::string msg = ErrorOf<ShapeError>([&] { sonnx::ToOnnx({x}, {y}); });
  EXPECT_NE(msg.find("'logits'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no recorded history"), std::string::npos) << msg;
}

TEST(Export, OpWithoutOnnxForm) {
  Tensor x = Input(2);
  Tensor w = Tensor::Ones({5, 3}).set_stores_grad(true).set_name("w");
  GradModeGuard record(true);
  Tensor h = Call1("MatMul", {x, w});
  TensorList out = {Call1("Relu", {h})};
  autograd::RecordFunction("my_fn", {&h, 1}, out, [](const TensorList& dy) { return dy; });
  std::string msg = ErrorOf<UnsupportedOp>([&] { sonnx::ToOnnx({x}, out); });
  EXPECT_NE(msg.find("Function"), std::string::npos) << msg;
  EXPECT_NE(msg.find("no ONNX form"), std::string::npos) << msg;
}

TEST(Export, NameClashAndUnusedInput) {
  Tensor x = Input(2);
  Tensor w1 = Tensor::Ones({5, 3}).set_stores_grad(true).set_name("w");
  Tensor w2 = Tensor::Ones({5, 3}).set_stores_grad(true).set_name("w");
  GradModeGuard record(true);
  Tensor y = Call1("Add", {Call1("MatMul", {x, w1}), Call1("MatMul", {x, w2})});
  std::string msg = ErrorOf<ShapeError>([&] { sonnx::ToOnnx({x}, {y}); });
  EXPECT_NE(msg.find("name clash: 'w'"), std::string::npos) << msg;

  Tensor other = Input(2);
  Tensor z = Call1("MatMul", {other, w1});
  msg = ErrorOf<ShapeError>([&] { sonnx::ToOnnx({x}, {z}); });
  EXPECT_NE(msg.find("input 0"), std::string::npos) << msg;
  EXPECT_NE(msg.find("not used"), std::string::npos) << msg;
}

TEST(Export, SaveIsAtomic) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::path(testing::TempDir()) / "singa_export_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = (dir / "m.onnx").string();
  { std::ofstream(path) << "previous"; }
  Tensor x = Input(2);
  Tensor w = Tensor::Ones({5, 3}).set_stores_grad(true).set_name("w");
  Tensor untraced;
  {
    NoGradGuard no_grad;
    untraced = Call1("MatMul", {x, w});
  }
  EXPECT_THROW(sonnx::SaveOnnx(path, {x}, {untraced}), ShapeError);
  std::ifstream in(path);
  std::string contents((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(contents, "previous");

  GradModeGuard record(true);
  Tensor y = Call1("MatMul", {x, w});
  sonnx::SaveOnnx(path, {x}, {y});
  ExpectNear(sonnx::Prepare(path)->Run({x})[0], y);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 1);
  EXPECT_THROW(sonnx::SaveOnnx((dir / "missing" / "m.onnx").string(), {x}, {y}), IOError);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace singa
