// The CUDA device: tensors and copies between host and GPU, the GPU's own
// kernels against the CPU's (the op-table rows of the other test files run
// on the GPU too, see op_table.h), the CPU fallback of ops without a GPU
// kernel, and training steps whose losses match the CPU's. Without a GPU
// every test but the first skips, saying so.
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>

#include "op_table.h"
#include "singa/autograd/autograd.h"
#include "singa/singa.h"
#if SINGA_CUDA
#include "kernels/cuda/cuda.h"
#endif

namespace singa::testing {
namespace {

#define SKIP_WITHOUT_GPU() \
  if (!HasGpu()) GTEST_SKIP() << "no GPU on this machine (or no CUDA in this build)"

bool FellBack(const std::string& op) {
  const auto f = OpRegistry::HostFallbacks();
  return std::find(f.begin(), f.end(), op) != f.end();
}

TEST(Cuda, MissingDeviceIsAClearError) {
  const int n = Device::NumCudaGpus();
  try {
    Device::Cuda(n);  // one past the last GPU
    FAIL() << "Device::Cuda(" << n << ") did not throw";
  } catch (const UnsupportedOp& e) {
    EXPECT_NE(std::string(e.what()).find("CUDA"), std::string::npos) << e.what();
  }
}

TEST(Cuda, TensorsMoveBetweenHostAndGpu) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  const std::vector<float> v = {1, -2, 3, 4.5f, 5, 6};
  Tensor x = Tensor::FromVector<float>({2, 3}, v, gpu);
  EXPECT_EQ(x.device(), gpu);
  EXPECT_EQ(x.ToVector<float>(), v);
  EXPECT_EQ(x.At<float>({1, 0}), 4.5f);
  // A strided view copies densely, in both directions.
  EXPECT_EQ(x.Transpose().ToVector<float>(), (std::vector<float>{1, 4.5f, -2, 5, 3, 6}));
  EXPECT_EQ(x.Transpose().Contiguous().ToDevice(Device::Cpu()).ToVector<float>(),
            (std::vector<float>{1, 4.5f, -2, 5, 3, 6}));
  // Up to 1 KiB travels inside a kernel launch, more through cudaMemcpyAsync.
  for (int64_t n : {1, 3, 255, 256, 257, 4096}) {
    std::vector<float> values(n);
    for (int64_t i = 0; i < n; ++i) values[i] = static_cast<float>(i) - 0.5f;
    EXPECT_EQ(Tensor::FromVector<float>({n}, values, gpu).ToVector<float>(), values) << n;
  }
  EXPECT_EQ(Tensor::FromVector<int8_t>({3}, {1, -2, 3}, gpu).ToVector<int8_t>(),
            (std::vector<int8_t>{1, -2, 3}));
  Tensor host_view = Tensor::FromVector<float>({2, 3}, v).Transpose();
  EXPECT_EQ(host_view.ToDevice(gpu).ToVector<float>(), host_view.ToVector<float>());
  // Conversions on the GPU.
  EXPECT_EQ(x.AsType(DType::kInt32).ToVector<int32_t>(), (std::vector<int32_t>{1, -2, 3, 4, 5, 6}));
  EXPECT_EQ(x.AsType(DType::kFloat16).AsType(DType::kFloat32).ToVector<float>(), v);
  EXPECT_EQ(x.AsType(DType::kBool).ToVector<bool>(), std::vector<bool>(6, true));
  // Fill, broadcast copies and a copy into a strided GPU view.
  EXPECT_EQ(Tensor::Full({2, 2}, 7, DType::kInt64, gpu).ToVector<int64_t>(),
            std::vector<int64_t>(4, 7));
  EXPECT_EQ(Tensor::Zeros({3}, DType::kFloat32, gpu).ToVector<float>(), std::vector<float>(3, 0));
  Tensor y({2, 3}, DType::kFloat32, gpu);
  y.CopyFrom(Tensor::FromVector<float>({3}, {1, 2, 3}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{1, 2, 3, 1, 2, 3}));
  Tensor z = Tensor::Zeros({3, 2}, DType::kFloat32, gpu);
  Tensor zt = z.Transpose();
  zt.CopyFrom(x);
  EXPECT_EQ(z.ToVector<float>(), (std::vector<float>{1, 4.5f, -2, 5, 3, 6}));
}

TEST(Cuda, MemoryComesFromTheGpusPool) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  const int64_t host_before = Device::Cpu().mem_pool().stats().current_bytes;
  const int64_t gpu_before = gpu.mem_pool().stats().current_bytes;
  {
    Tensor t = Tensor::Zeros({1 << 20}, DType::kFloat32, gpu);
    EXPECT_GE(gpu.mem_pool().stats().current_bytes - gpu_before, 4 << 20);
    EXPECT_EQ(Device::Cpu().mem_pool().stats().current_bytes, host_before);
  }
  EXPECT_EQ(gpu.mem_pool().stats().current_bytes, gpu_before);
  MemoryLimit limit(gpu.mem_pool(), 1 << 20);
  EXPECT_THROW(Tensor::Zeros({1 << 20}, DType::kFloat32, gpu), MemoryError);
}

const std::vector<DType> kFloats = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                    DType::kFloat64};

TEST(Cuda, UnaryKernelsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::string> ops = {
      "Abs",  "Neg",   "Exp",   "Log",     "Sqrt",      "Reciprocal", "Sin",
      "Cos",  "Tan",   "Asin",  "Acos",    "Atan",      "Sinh",       "Cosh",
      "Tanh", "Asinh", "Acosh", "Atanh",   "Ceil",      "Floor",      "Round",
      "Sign", "Erf",   "Relu",  "Sigmoid", "HardSwish", "Softplus",   "Softsign"};
  for (const std::string& op : ops) {
    CheckRow({op, {{3, 4, 5}}, {}, kFloats});
    CheckRow({op, {{7}}, {}, kFloats});  // a tail after the 16-byte packs
    EXPECT_FALSE(FellBack(op)) << op << " ran on the CPU";
  }
  CheckRow({"LeakyRelu", {{3, 4}}, {{"alpha", 0.3f}}, kFloats});
  CheckRow({"Elu", {{3, 4}}, {{"alpha", 0.7f}}, kFloats});
  CheckRow({"Selu", {{3, 4}}, {}, kFloats});
  CheckRow({"HardSigmoid", {{3, 4}}, {{"alpha", 0.3f}, {"beta", 0.4f}}, kFloats});
  CheckRow({"Gelu", {{3, 4}}, {}, kFloats});
  CheckRow({"Gelu", {{3, 4}}, {{"approximate", std::string("tanh")}}, kFloats});
  for (const char* op : {"LeakyRelu", "Elu", "Selu", "HardSigmoid", "Gelu"})
    EXPECT_FALSE(FellBack(op)) << op << " ran on the CPU";
}

TEST(Cuda, BinaryKernelsBroadcastLikeTheCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::vector<Shape>> shapes = {{{2, 3, 4}, {2, 3, 4}},
                                                  {{2, 3, 4}, {3, 1}},
                                                  {{4}, {2, 3, 4}},
                                                  {{}, {5}},
                                                  {{0, 3}, {3}},
                                                  // Read in 16-byte packs: a repeated row (a bias),
                                                  // one element, dense with a tail after the packs.
                                                  {{6, 16}, {16}},
                                                  {{16}, {3, 16}},
                                                  {{2, 3, 8}, {1}},
                                                  {{5, 7}, {5, 7}}};
  std::vector<DType> math = kFloats;
  math.push_back(DType::kInt32);
  math.push_back(DType::kInt64);
  for (const auto& s : shapes) {
    for (const char* op : {"Add", "Sub", "Mul"}) CheckRow({op, s, {}, math});
    CheckRow({"Div", s, {}, kFloats});
    for (const char* op : {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
      CheckRow({op, s, {}, {DType::kFloat32, DType::kInt64}});
  }
  for (const char* op :
       {"Add", "Sub", "Mul", "Div", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual"})
    EXPECT_FALSE(FellBack(op)) << op << " ran on the CPU";
}

TEST(Cuda, WhereAndLogicOnTheGpu) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  Tensor c = Tensor::FromVector<bool>({2, 1}, {true, false});
  Tensor a = RandomTensor({2, 3}, DType::kFloat32, 1), b = RandomTensor({3}, DType::kFloat32, 2);
  ExpectSameOnGpu({Call1("Where", {c.ToDevice(gpu), a.ToDevice(gpu), b.ToDevice(gpu)})},
                  {Call1("Where", {c, a, b})}, 0, 0, "Where");
  Tensor p = Tensor::FromVector<bool>({4}, {true, true, false, false});
  Tensor q = Tensor::FromVector<bool>({4}, {true, false, true, false});
  for (const char* op : {"And", "Or", "Xor"}) {
    ExpectSameOnGpu({Call1(op, {p.ToDevice(gpu), q.ToDevice(gpu)})}, {Call1(op, {p, q})}, 0, 0, op);
    EXPECT_FALSE(FellBack(op)) << op;
  }
  EXPECT_FALSE(FellBack("Where"));
}

// Where, Clip and the gradients of Relu and Clip over operands read in
// 16-byte packs (dense, a repeated row, one element), with and without a
// tail after the packs.
TEST(Cuda, PackedMasksAndClipsMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  const std::vector<std::vector<Shape>> shapes = {
      {{4, 16}, {4, 16}, {}}, {{16}, {3, 16}, {3, 16}}, {{5, 7}, {5, 7}, {1}}};
  std::vector<DType> dtypes = kFloats;
  dtypes.push_back(DType::kInt64);
  for (const auto& s : shapes)
    for (DType dt : dtypes) {
      const Tensor c =
          Call1("Greater", {RandomTensor(s[0], DType::kFloat32, 1), Tensor::Scalar<float>(0)});
      const Tensor a = RandomTensor(s[1], dt, 2, -100, 100),
                   b = RandomTensor(s[2], dt, 3, -100, 100);
      ExpectSameOnGpu({Call1("Where", {c.ToDevice(gpu), a.ToDevice(gpu), b.ToDevice(gpu)})},
                      {Call1("Where", {c, a, b})}, 0, 0, "Where " + std::string(Name(dt)));
    }
  const Tensor lo = Tensor::Scalar<float>(-0.5f), hi = Tensor::Scalar<float>(0.5f);
  for (const Shape& s : {Shape{4, 16}, Shape{7}}) {
    CheckRow({"Clip", {s}, {}, {DType::kFloat32}, {lo, hi}});
    CheckGrads("Relu", {s}, {});
    CheckGrads("Clip", {s}, {{"min", -0.5f}, {"max", 0.5f}}, 1e-4, 1e-4, -1, 6);
  }
  for (const char* op : {"Where", "Clip", "ClipGrad"})
    EXPECT_FALSE(FellBack(op)) << op << " ran on the CPU";
}

// Shape and Size read no data: no copy of the input to the host, which
// would wait for the GPU.
TEST(Cuda, ShapeAndSizeRunWithoutCopyingTheirInput) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  const Tensor x = Tensor::Zeros({2, 3, 4}, DType::kFloat32, gpu);
  const Tensor shape = Call1("Shape", {x});
  EXPECT_EQ(shape.device(), gpu);
  EXPECT_EQ(shape.ToVector<int64_t>(), (std::vector<int64_t>{2, 3, 4}));
  EXPECT_EQ(CallOp("Shape", {x}, {{"start", int64_t{1}}}, 15)[0].ToVector<int64_t>(),
            (std::vector<int64_t>{3, 4}));
  const Tensor size = Call1("Size", {x});
  EXPECT_EQ(size.device(), gpu);
  EXPECT_EQ(size.ToVector<int64_t>(), (std::vector<int64_t>{24}));
  for (const char* op : {"Shape", "Size"}) EXPECT_FALSE(FellBack(op)) << op << " ran on the CPU";
}

#if SINGA_CUDA
// Shape-like inputs on the host (a shape, axes, pads, repeats, split sizes)
// stay there beside GPU data: reading them copies nothing back from the
// GPU, which would wait for it.
TEST(Cuda, HostShapeInputsAreReadWithoutWaitingForTheGpu) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  const Tensor x = RandomTensor({2, 3, 4}, DType::kFloat32, 1);
  auto ints = [](std::vector<int64_t> v) {
    return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
  };
  auto run = [&](const Tensor& in) {
    TensorList out = {Call1("ReduceSum", {in, ints({1})}),
                      Call1("ReduceMean", {in, ints({0, 2})}, {{"keepdims", int64_t{0}}}),
                      Call1("Reshape", {in, ints({6, 4})}),
                      Call1("Unsqueeze", {in, ints({0})}),
                      Call1("Squeeze", {Call1("Unsqueeze", {in, ints({1})}), ints({1})}),
                      Call1("Expand", {Call1("Unsqueeze", {in, ints({0})}), ints({2, 1, 1, 1})}),
                      Call1("Slice", {in, ints({1}), ints({3}), ints({1})}),
                      Call1("Tile", {in, ints({1, 2, 1})}),
                      Call1("Pad", {in, ints({0, 0, 1, 0, 0, 2})})};
    for (const Tensor& t :
         CallOp("Split", {in, ints({1, 3})}, {{"axis", int64_t{2}}}, kLatestOpset, 2))
      out.push_back(t);
    return out;
  };
  const int64_t before = cuda::HostCopies();
  const TensorList on_gpu = run(x.ToDevice(gpu));
  EXPECT_EQ(cuda::HostCopies(), before) << "an op read its shape-like input back from the GPU";
  ExpectSameOnGpu(on_gpu, run(x), 1e-5, 1e-6, "ops with host shape inputs");
  // A GPU tensor there still works (it is read back).
  EXPECT_EQ(Call1("Reshape", {x.ToDevice(gpu), ints({4, 6}).ToDevice(gpu)}).shape(), (Shape{4, 6}));
}
#endif

// Gather moves whole rows in 16-byte words where the rows allow (an
// embedding lookup), else element by element; negative indices count from
// the end.
TEST(Cuda, GatherMatchesTheCpu) {
  SKIP_WITHOUT_GPU();
  const Tensor rows = Tensor::FromVector<int64_t>({2, 3}, {0, 9, -1, 3, 3, -10});
  const Tensor cols = Tensor::FromVector<int32_t>({4}, {4, 0, -2, 1});
  CheckRow({"Gather", {{10, 8}}, {{"axis", int64_t{0}}}, kFloats, {rows}});
  CheckRow({"Gather", {{10, 3}}, {{"axis", int64_t{0}}}, kFloats, {rows}});
  CheckRow({"Gather", {{2, 5, 3}}, {{"axis", int64_t{1}}}, kFloats, {cols}});
  CheckRow({"Gather", {{4, 6}}, {{"axis", int64_t{-1}}}, kFloats, {cols}});
  EXPECT_FALSE(FellBack("Gather"));
}

// A transposed operand (the backward of a Linear layer: dx = dy w^T, dw =
// x^T dy) is read in place: the product allocates its output alone.
TEST(Cuda, MatMulReadsTransposedOperandsInPlace) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  const Tensor x = RandomTensor({4, 8}, DType::kFloat32, 1);
  const Tensor w = RandomTensor({16, 8}, DType::kFloat32, 2);
  const Tensor dy = RandomTensor({4, 16}, DType::kFloat32, 3);
  // The three products, over tensors on `d`.
  auto products = [&](Device d) {
    const Tensor xd = x.ToDevice(d), wd = w.ToDevice(d), dyd = dy.ToDevice(d);
    return std::vector<std::pair<Tensor, Tensor>>{{xd, wd.Transpose()},
                                                  {xd.Transpose(), dyd},
                                                  {xd, wd.Reshape({1, 16, 8}).Permute({0, 2, 1})}};
  };
  const auto on_gpu = products(gpu), on_cpu = products(Device::Cpu());
  for (size_t i = 0; i < on_gpu.size(); ++i) {
    const int64_t before = gpu.mem_pool().stats().num_mallocs;
    const Tensor y = Call1("MatMul", {on_gpu[i].first, on_gpu[i].second});
    EXPECT_EQ(gpu.mem_pool().stats().num_mallocs - before, 1) << "product " << i;
    ExpectSameOnGpu({y}, {Call1("MatMul", {on_cpu[i].first, on_cpu[i].second})}, 1e-5, 1e-6,
                    "MatMul of transposed operands");
  }
}

TEST(Cuda, MatrixProductsThroughCublas) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::vector<Shape>> shapes = {
      {{3, 4}, {4, 5}},          {{64, 96}, {96, 80}},
      {{2, 64, 96}, {96, 80}},   {{64, 96}, {3, 96, 80}},
      {{2, 1, 7, 9}, {3, 9, 5}}, {{96}, {2, 96, 80}},
      {{2, 64, 96}, {96}},       {{96}, {96}},
      {{0, 8}, {8, 5}},          {{4, 0}, {0, 5}}};
  for (const auto& s : shapes) CheckRow({"MatMul", s, {}, kFloats});
  for (int64_t ta : {0, 1})
    for (int64_t tb : {0, 1}) {
      const Shape a = ta ? Shape{7, 5} : Shape{5, 7}, b = tb ? Shape{3, 7} : Shape{7, 3};
      const AttrMap attrs = {{"transA", ta}, {"transB", tb}, {"alpha", 0.5f}, {"beta", 2.0f}};
      CheckRow({"Gemm", {a, b, {3}}, attrs, kFloats});
      CheckRow({"Gemm", {a, b, {5, 3}}, attrs, kFloats});
      CheckRow({"Gemm", {a, b}, attrs, kFloats});
    }
  CheckRow({"Gemm", {{5, 0}, {0, 3}, {5, 3}}, {{"beta", 2.0f}}, kFloats});
  EXPECT_FALSE(FellBack("MatMul"));
  EXPECT_FALSE(FellBack("Gemm"));
}

TEST(Cuda, SoftmaxReductionsAndCasts) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  for (int64_t axis : {-1, 0, 1}) {
    CheckRow({"Softmax", {{3, 4, 50}}, {{"axis", axis}}, kFloats});
    CheckRow({"LogSoftmax", {{3, 4, 50}}, {{"axis", axis}}, kFloats});
  }
  // Rows in a warp's registers, read in packs where the row length allows.
  for (const Shape& s : {Shape{3, 1024}, Shape{5, 64}, Shape{4, 8}, Shape{3, 100}})
    for (const char* op : {"Softmax", "LogSoftmax"}) CheckRow({op, {s}, {}, kFloats});
  // Rows longer than a warp's registers hold: one block per row.
  CheckRow({"Softmax", {{2, 3000}}, {}, kFloats});
  CheckRow({"LogSoftmax", {{2, 3000}}, {}, kFloats});
  // Opset 11: the input seen as 2-D at `axis`.
  Tensor x = RandomTensor({3, 4, 5}, DType::kFloat32, 3);
  for (const char* op : {"Softmax", "LogSoftmax"})
    ExpectSameOnGpu(CallOp(op, {x.ToDevice(gpu)}, {{"axis", int64_t{1}}}, 11),
                    CallOp(op, {x}, {{"axis", int64_t{1}}}, 11), 1e-5, 1e-6, op);
  const Tensor axes = Tensor::FromVector<int64_t>({1}, {1});
  const Tensor two_axes = Tensor::FromVector<int64_t>({2}, {0, 2});
  for (const char* op : {"ReduceSum", "ReduceMean"})
    for (int64_t keep : {0, 1}) {
      CheckRow({op, {{3, 4, 5}}, {{"keepdims", keep}}, kFloats, {axes}});
      CheckRow({op, {{3, 4, 5}}, {{"keepdims", keep}}, kFloats, {two_axes}});
      CheckRow({op, {{3, 4, 5}}, {{"keepdims", keep}}, kFloats});  // every axis
    }
  for (DType to : {DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kInt8, DType::kBool,
                   DType::kFloat64}) {
    const AttrMap attrs = {{"to", static_cast<int64_t>(to)}};
    ExpectSameOnGpu({Call1("Cast", {x.ToDevice(gpu)}, attrs)}, {Call1("Cast", {x}, attrs)}, 0, 0,
                    "Cast to " + std::string(Name(to)));
  }
  for (const char* op : {"Softmax", "LogSoftmax", "ReduceSum", "ReduceMean", "Cast"})
    EXPECT_FALSE(FellBack(op)) << op << " ran on the CPU";
}

TEST(Cuda, OpsWithoutGpuKernelsRunOnTheCpuWithCopies) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  Tensor x = RandomTensor({1, 2, 6, 6}, DType::kFloat32, 1);
  // GlobalMaxPool has no GPU kernel, and cuDNN pools without dilations.
  const Tensor y = Call1("GlobalMaxPool", {x.ToDevice(gpu)});
  EXPECT_EQ(y.device(), gpu);
  ExpectSameOnGpu({y}, {Call1("GlobalMaxPool", {x})}, 0, 0, "GlobalMaxPool");
  EXPECT_TRUE(FellBack("GlobalMaxPool"));
  const AttrMap dilated = {{"kernel_shape", std::vector<int64_t>{2, 2}},
                           {"dilations", std::vector<int64_t>{2, 2}}};
  ExpectSameOnGpu({Call1("MaxPool", {x.ToDevice(gpu)}, dilated)}, {Call1("MaxPool", {x}, dilated)},
                  0, 0, "MaxPool");
  EXPECT_TRUE(FellBack("MaxPool"));
  // A host constant beside GPU inputs is copied over; a host tensor that
  // autograd tracks is an error naming the devices.
  EXPECT_EQ(Call1("Add", {x.ToDevice(gpu), Tensor::Scalar<float>(1)}).device(), gpu);
  Tensor p = x.Clone();
  p.set_requires_grad(true);
  try {
    Call1("Add", {x.ToDevice(gpu), p});
    FAIL() << "no error for a tracked host input";
  } catch (const ShapeError& e) {
    EXPECT_NE(std::string(e.what()).find("cuda:0"), std::string::npos) << e.what();
  }
}

// A two-layer classifier trained by plain SGD with autograd: the losses of
// every step on the GPU match the CPU's.
std::vector<float> TrainLosses(Device device, int steps) {
  TensorList params = {RandomTensor({8, 16}, DType::kFloat32, 1, -0.5, 0.5), Tensor::Zeros({16}),
                       RandomTensor({16, 4}, DType::kFloat32, 2, -0.5, 0.5), Tensor::Zeros({4})};
  for (Tensor& p : params) p = p.ToDevice(device);
  const Tensor x = RandomTensor({32, 8}, DType::kFloat32, 3).ToDevice(device);
  std::vector<int64_t> labels(32);
  for (int i = 0; i < 32; ++i) labels[i] = (i * 7) % 4;
  const Tensor y = Tensor::FromVector<int64_t>({32}, labels, device);
  const Tensor lr = Tensor::Scalar<float>(0.5f, device);
  std::vector<float> losses;
  for (int s = 0; s < steps; ++s) {
    for (Tensor& p : params) {
      p = p.Detach();
      p.set_stores_grad(true);
    }
    const Tensor h = Call1("Relu", {Call1("Gemm", {x, params[0], params[1]})});
    const Tensor logits = Call1("Gemm", {h, params[2], params[3]});
    const Tensor loss = Call1("SoftmaxCrossEntropyLoss", {logits, y});
    losses.push_back(loss.Item<float>());
    for (auto& [p, g] : autograd::Gradients(loss))
      for (Tensor& q : params)
        if (q.id() == p.id()) q = Call1("Sub", {q, Call1("Mul", {g, lr})});
  }
  return losses;
}

TEST(Cuda, TrainingLossesMatchTheCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<float> cpu = TrainLosses(Device::Cpu(), 20);
  const std::vector<float> gpu = TrainLosses(Device::Cuda(0), 20);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_NEAR(gpu[i], cpu[i], 1e-4 * (1 + std::abs(cpu[i]))) << "step " << i;
  EXPECT_LT(gpu.back(), gpu.front());
  for (const char* op : {"Gemm", "Relu", "Sub", "Mul"}) EXPECT_FALSE(FellBack(op)) << op;
}

// A small CNN trained by plain SGD: a convolution with unequal pads, batch
// normalization in training mode, max and average pooling, global average
// pooling. Every step's loss on the GPU matches the CPU's, and none of these
// ops (nor their gradients) leaves the GPU.
std::vector<float> CnnLosses(Device device, int steps) {
  TensorList params = {RandomTensor({4, 3, 3, 3}, DType::kFloat32, 1, -0.5, 0.5),
                       Tensor::Zeros({4}),
                       Tensor::Full({4}, 1.0),
                       Tensor::Zeros({4}),
                       RandomTensor({4, 5}, DType::kFloat32, 2, -0.5, 0.5),
                       Tensor::Zeros({5})};
  for (Tensor& p : params) p = p.ToDevice(device);
  const Tensor x = RandomTensor({8, 3, 9, 9}, DType::kFloat32, 3).ToDevice(device);
  const Tensor mean = Tensor::Zeros({4}).ToDevice(device);
  const Tensor var = Tensor::Full({4}, 1.0).ToDevice(device);
  std::vector<int64_t> labels(8);
  for (int i = 0; i < 8; ++i) labels[i] = (i * 3) % 5;
  const Tensor y = Tensor::FromVector<int64_t>({8}, labels, device);
  const Tensor lr = Tensor::Scalar<float>(0.2f, device);
  const AttrMap conv = {{"pads", std::vector<int64_t>{1, 0, 2, 1}}};
  const AttrMap norm = {{"training_mode", int64_t{1}}};
  const AttrMap max = {{"kernel_shape", std::vector<int64_t>{2, 2}},
                       {"strides", std::vector<int64_t>{2, 2}}};
  const AttrMap avg = {{"kernel_shape", std::vector<int64_t>{3, 3}},
                       {"pads", std::vector<int64_t>{1, 1, 1, 1}}};
  std::vector<float> losses;
  for (int s = 0; s < steps; ++s) {
    for (Tensor& p : params) {
      p = p.Detach();
      p.set_stores_grad(true);
    }
    Tensor h = Call1("Conv", {x, params[0], params[1]}, conv);  // [8, 4, 10, 8]
    h = Call1("BatchNormalization", {h, params[2], params[3], mean, var}, norm);
    h = Call1("MaxPool", {Call1("Relu", {h})}, max);  // [8, 4, 5, 4]
    h = Call1("AveragePool", {h}, avg);
    h = Call1("Flatten", {Call1("GlobalAveragePool", {h})});
    const Tensor loss =
        Call1("SoftmaxCrossEntropyLoss", {Call1("Gemm", {h, params[4], params[5]}), y});
    losses.push_back(loss.Item<float>());
    for (auto& [p, g] : autograd::Gradients(loss))
      for (Tensor& q : params)
        if (q.id() == p.id()) q = Call1("Sub", {q, Call1("Mul", {g, lr})});
  }
  return losses;
}

TEST(Cuda, ConvolutionPoolingAndNormalizationTrainThroughCudnn) {
  SKIP_WITHOUT_GPU();
  const std::vector<float> cpu = CnnLosses(Device::Cpu(), 10);
  const std::vector<float> gpu = CnnLosses(Device::Cuda(0), 10);
  ASSERT_EQ(cpu.size(), gpu.size());
  for (size_t i = 0; i < cpu.size(); ++i)
    EXPECT_NEAR(gpu[i], cpu[i], 1e-4 * (1 + std::abs(cpu[i]))) << "step " << i;
  EXPECT_LT(gpu.back(), gpu.front());
  for (const char* op : {"Conv", "ConvGradData", "ConvGradWeight", "BatchNormalization",
                         "BatchNormGrad", "MaxPoolGrad", "AveragePool", "AveragePoolGrad",
                         "GlobalAveragePool", "SoftmaxCrossEntropyLoss", "OneHot"})
    EXPECT_FALSE(FellBack(op)) << op;
}

// SGD (momentum, Nesterov, weight decay) and Adam update GPU parameters with
// their fused kernels to the values the CPU loops give.
TEST(Cuda, OptimizersUpdateOnTheGpuAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  using Make = std::function<std::shared_ptr<opt::Optimizer>()>;
  const std::vector<std::pair<std::string, Make>> optimizers = {
      {"SGD",
       [] {
         return std::make_shared<opt::SGD>(opt::SGD::Options{0.1, 0.9, 0, 1e-3, true});
       }},
      {"Adam",
       [] {
         return std::make_shared<opt::Adam>(opt::Adam::Options{1e-2, 0.9, 0.999, 1e-8, 1e-3});
       }},
  };
  for (const auto& entry : optimizers) {
    const std::string& name = entry.first;
    const Make& make = entry.second;
    auto run = [&](Device d) {
      std::shared_ptr<opt::Optimizer> o = make();
      Tensor p = RandomTensor({1000}, DType::kFloat32, 5).ToDevice(d);
      p.set_stores_grad(true);
      p.set_name("w");
      for (int s = 0; s < 5; ++s) {
        o->Update(p, RandomTensor({1000}, DType::kFloat32, 10 + s).ToDevice(d));
        o->Step();
      }
      return p.ToDevice(Device::Cpu());
    };
    EXPECT_LE(CloseRatio(run(Device::Cuda(0)), run(Device::Cpu()), 1e-5, 1e-6), 1.0) << name;
  }
}

TEST(Cuda, GraphReplayOnTheGpu) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  Tensor x = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}, gpu);
  gpu.ResetGraph();
  gpu.EnableGraph(true);
  Tensor y = Call1("Mul", {Call1("Add", {x, x}), x});
  gpu.EnableGraph(false);
  EXPECT_GE(gpu.graph_size(), 2u);
  gpu.RunGraph();
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{2, 8, 18, 32}));
  x.CopyFrom(Tensor::FromVector<float>({2, 2}, {1, 1, 1, 1}));
  gpu.RunGraph();
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{2, 2, 2, 2}));
  gpu.ResetGraph();
}

TEST(Cuda, CapturedOpsReadHostConstantsAndGpuConstants) {
  SKIP_WITHOUT_GPU();
  const Device gpu = Device::Cuda(0);
  Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6}, gpu);
  gpu.ResetGraph();
  gpu.EnableGraph(true);
  // Shape inference reads both shapes while the ops are only recorded.
  Tensor a = Call1("Reshape", {x, Tensor::FromVector<int64_t>({2}, {3, 2})});
  Tensor b = Call1("Reshape", {a, Tensor::FromVector<int64_t>({1}, {-1}, gpu)});
  Tensor y = Call1("Mul", {b, Tensor::Scalar<float>(2)});
  gpu.EnableGraph(false);
  EXPECT_EQ(y.shape(), (Shape{6}));
  gpu.RunGraph();
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{2, 4, 6, 8, 10, 12}));
  gpu.ResetGraph();
}

}  // namespace
}  // namespace singa::testing
