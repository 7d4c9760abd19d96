// Behaviour of the shape ops that the Python op table cannot check against
// onnx's reference evaluator: negative pads (numpy's pad rejects them),
// outputs that are views sharing the input's storage, and which input values
// shape inference reads.
#include <gtest/gtest.h>

#include "singa/core/tensor.h"
#include "singa/ops/op.h"

namespace singa {
namespace {

Tensor Ints(std::vector<int64_t> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<int64_t>({n}, v);
}

TEST(Pad, NegativePadsCrop) {
  Tensor x = Tensor::FromVector<float>({3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  // Crop one row at the top, pad one column on the left with 9, crop two on the right.
  Tensor y = Call1("Pad", {x, Ints({-1, 1, 0, -2}), Tensor::Scalar<float>(9)});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{9, 4, 5, 9, 8, 9}));
}

TEST(Pad, NegativePadsEdgeMode) {
  Tensor x = Tensor::FromVector<float>({5}, {0, 1, 2, 3, 4});
  Tensor y = Call1("Pad", {x, Ints({-2, 2})}, {{"mode", std::string("edge")}});
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{2, 3, 4, 4, 4}));
}

TEST(Pad, CropEverything) {
  Tensor x = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  Tensor y = Call1("Pad", {x, Ints({-2, 1, 1, 0})});
  // Axis 0 loses both rows and gains one of padding: nothing of x is left.
  EXPECT_EQ(y.shape(), (Shape{1, 3}));
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{0, 0, 0}));
}

// numpy's pad rejects an empty pad list, so the oracle cannot check these.
TEST(Pad, Scalar) {
  Tensor y = Call1("Pad", {Tensor::Scalar<float>(3), Ints({})});
  EXPECT_EQ(y.shape(), Shape{});
  EXPECT_EQ(y.Item<float>(), 3.f);
}

// The oracle pads strings with the integer 0; the spec says "".
TEST(Pad, StringsPadWithEmptyString) {
  Tensor x = Tensor::FromVector<std::string>({2}, {"a", "b"});
  Tensor y = Call1("Pad", {x, Ints({1, 0})});
  EXPECT_EQ(y.ToVector<std::string>(), (std::vector<std::string>{"", "a", "b"}));
}

TEST(ShapeOps, ViewsShareStorage) {
  Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  EXPECT_EQ(Call1("Reshape", {x, Ints({3, 2})}).block(), x.block());
  EXPECT_EQ(Call1("Flatten", {x}, {{"axis", int64_t{0}}}).block(), x.block());
  EXPECT_EQ(Call1("Identity", {x}).block(), x.block());
  EXPECT_EQ(Call1("Unsqueeze", {x, Ints({0})}).block(), x.block());
  EXPECT_EQ(Call1("Transpose", {x}).block(), x.block());
  EXPECT_EQ(Call1("Slice", {x, Ints({1}), Ints({3}), Ints({1})}).block(), x.block());
  Tensor e = Call1("Expand", {x, Ints({4, 2, 3})});
  EXPECT_EQ(e.block(), x.block());
  EXPECT_EQ(e.strides()[0], 0);
  Tensor s = Call1("Squeeze", {Call1("Unsqueeze", {x, Ints({1})})});
  EXPECT_EQ(s.block(), x.block());
  EXPECT_EQ(s.shape(), (Shape{2, 3}));
}

TEST(ShapeOps, InferMatchesAlias) {
  Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor in[] = {x, Ints({-1}), Ints({-100}), Ints({1}), Ints({-2})};
  const OpSchema& slice = OpRegistry::Get("Slice");
  auto attrs = slice.ParseAttrs({}, in);
  SpecList specs = slice.Infer(in, attrs.get());
  TensorList out = slice.Run(in, attrs);
  EXPECT_EQ(specs[0].shape, out[0].shape());
  EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{3, 1, 6, 4}));
}

// Shape inference reads input values only through InferCtx::value, which
// logs them for a caller that asks (the ONNX planner): Reshape's shape and
// NonZero's data, not a tensor Reshape copies or a Relu's input.
TEST(InferCtx, ValueReadsLogTheInputsWhoseValuesInferenceRead) {
  using Blocks = std::vector<const Block*>;
  const auto block = [](const Tensor& t) { return internal::BlockOf(t).get(); };
  const Tensor x = Tensor::FromVector<float>({2, 3}, {1, 0, 2, 0, 3, 0});
  ValueReads reads;

  const OpSchema& reshape = OpRegistry::Get("Reshape");
  const Tensor to32[] = {x, Ints({3, 2})};
  const auto attrs = reshape.ParseAttrs({}, to32);
  EXPECT_EQ(reshape.Infer(to32, attrs.get(), -1, "", &reads)[0].shape, (Shape{3, 2}));
  EXPECT_EQ(reads.blocks, Blocks{block(to32[1])});
  // A non-contiguous X is copied: its values are read, but by no inference.
  reads.blocks.clear();
  const Tensor flat[] = {x.Permute({1, 0}), Ints({6})};
  EXPECT_EQ(reshape.Run(flat, attrs, -1, "", &reads)[0].ToVector<float>(),
            (std::vector<float>{1, 0, 0, 3, 2, 0}));
  EXPECT_EQ(reads.blocks, Blocks{block(flat[1])});

  const OpSchema& nonzero = OpRegistry::Get("NonZero");
  const Tensor data[] = {x};
  reads.blocks.clear();
  EXPECT_EQ(nonzero.Infer(data, nonzero.ParseAttrs({}, data).get(), -1, "", &reads)[0].shape,
            (Shape{2, 3}));
  EXPECT_EQ(reads.blocks, Blocks{block(x)});

  // Resize with sizes: the empty roi and scales have no values to read.
  const OpSchema& resize = OpRegistry::Get("Resize");
  const Tensor image = Tensor::Zeros({1, 1, 2, 2});
  const Tensor resize_in[] = {image, Tensor::Zeros({0}), Tensor::Zeros({0}), Ints({1, 1, 4, 4})};
  reads.blocks.clear();
  EXPECT_EQ(
      resize.Infer(resize_in, resize.ParseAttrs({}, resize_in).get(), -1, "", &reads)[0].shape,
      (Shape{1, 1, 4, 4}));
  EXPECT_EQ(reads.blocks, Blocks{block(resize_in[3])});

  const OpSchema& relu = OpRegistry::Get("Relu");
  reads.blocks.clear();
  relu.Run(data, relu.ParseAttrs({}, data), -1, "", &reads);
  EXPECT_TRUE(reads.blocks.empty());
}

}  // namespace
}  // namespace singa
