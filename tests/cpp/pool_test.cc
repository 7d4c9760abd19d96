// MaxPool and AveragePool: the oneDNN fast path against the loop reference.
#include <gtest/gtest.h>

#include "op_table.h"
#include "singa/autograd/autograd.h"

namespace singa::testing {
namespace {

using Ints = std::vector<int64_t>;

std::vector<OpRow> PoolRows(const std::string& op) {
  const std::vector<DType> types =
      op == "MaxPool" ? std::vector<DType>{DType::kFloat32,  DType::kFloat64, DType::kFloat16,
                                           DType::kBFloat16, DType::kInt8,    DType::kUInt8}
                      : std::vector<DType>{DType::kFloat32, DType::kFloat64, DType::kBFloat16};
  auto s = [](const char* v) { return AttrValue(std::string(v)); };
  return {
      {op, {{1, 4, 8, 8}}, {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}}, types},
      {op,
       {{2, 3, 9, 9}},
       {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}},
      {op,
       {{1, 3, 112, 112}},
       {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}}},
      {op,
       {{1, 2, 7, 6}},
       {{"kernel_shape", Ints{3, 2}}, {"pads", Ints{1, 0, 0, 1}}, {"strides", Ints{2, 1}}}},
      {op,
       {{1, 2, 9, 9}},
       {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}}},
      {op,
       {{1, 2, 10, 10}},
       {{"kernel_shape", Ints{3, 3}},
        {"strides", Ints{3, 3}},
        {"pads", Ints{1, 1, 1, 1}},
        {"ceil_mode", int64_t{1}}}},
      {op,
       {{1, 2, 9, 10}},
       {{"kernel_shape", Ints{2, 3}}, {"dilations", Ints{2, 2}}, {"pads", Ints{1, 1, 1, 1}}}},
      {op,
       {{1, 2, 9, 10}},
       {{"kernel_shape", Ints{3, 3}}, {"auto_pad", s("SAME_UPPER")}, {"strides", Ints{2, 2}}}},
      {op, {{1, 2, 9, 10}}, {{"kernel_shape", Ints{2, 2}}, {"auto_pad", s("SAME_LOWER")}}},
      {op,
       {{1, 2, 9, 10}},
       {{"kernel_shape", Ints{3, 3}}, {"auto_pad", s("VALID")}, {"strides", Ints{2, 2}}}},
      {op, {{2, 3, 17}}, {{"kernel_shape", Ints{3}}, {"pads", Ints{1, 2}}, {"strides", Ints{2}}}},
      {op, {{1, 2, 5, 6, 7}}, {{"kernel_shape", Ints{2, 3, 2}}, {"pads", Ints{1, 0, 1, 0, 1, 1}}}},
      {op, {{0, 2, 6, 6}}, {{"kernel_shape", Ints{2, 2}}}},
  };
}

TEST(PoolTest, MaxPoolFastMatchesReference) {
  for (const OpRow& row : PoolRows("MaxPool")) CheckRow(row);
}

TEST(PoolTest, AveragePoolFastMatchesReference) {
  for (OpRow row : PoolRows("AveragePool")) {
    CheckRow(row);
    row.attrs["count_include_pad"] = int64_t{1};
    CheckRow(row);
  }
}

TEST(PoolTest, MaxPoolIndices) {
  // Rows are 0..15; a 2x2/2 window's max is its bottom-right element.
  std::vector<float> v(16);
  for (int i = 0; i < 16; ++i) v[i] = static_cast<float>(i);
  Tensor x = Tensor::FromVector<float>({1, 1, 4, 4}, v);
  AttrMap attrs = {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}};
  TensorList out = CallOp("MaxPool", {x}, attrs, kLatestOpset, 2);
  EXPECT_EQ(out[0].ToVector<float>(), (std::vector<float>{5, 7, 13, 15}));
  EXPECT_EQ(out[1].ToVector<int64_t>(), (std::vector<int64_t>{5, 7, 13, 15}));
  attrs["storage_order"] = int64_t{1};
  out = CallOp("MaxPool", {x}, attrs, kLatestOpset, 2);
  EXPECT_EQ(out[1].ToVector<int64_t>(), (std::vector<int64_t>{5, 13, 7, 15}));
}

TEST(PoolTest, AveragePoolCeilModeCountsOnlyPaddedInput) {
  // Length 6, kernel 3, stride 2, pads 1/1, ceil_mode: 4 windows; the last
  // covers positions 5, 6 (end padding) and 7 (past it): 2 counted with padding.
  Tensor x = Tensor::Ones({1, 1, 6});
  AttrMap attrs = {{"kernel_shape", Ints{3}},
                   {"strides", Ints{2}},
                   {"pads", Ints{1, 1}},
                   {"ceil_mode", int64_t{1}},
                   {"count_include_pad", int64_t{1}}};
  Tensor y = Call1("AveragePool", {x}, attrs);
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{2.0f / 3, 1, 1, 0.5f}));
}

TEST(PoolTest, GlobalPoolsReduceEverySpatialAxis) {
  // Plane p of the [1, 2, 2, 3] / [1, 2, 6] / [1, 2, 1, 2, 3] views holds 6p..6p+5.
  std::vector<float> v(12);
  for (int i = 0; i < 12; ++i) v[i] = static_cast<float>(i);
  for (const Shape& s : {Shape{1, 2, 2, 3}, Shape{1, 2, 6}, Shape{1, 2, 1, 2, 3}}) {
    Tensor x = Tensor::FromVector<float>(s, v);
    Shape want = s;
    std::fill(want.begin() + 2, want.end(), 1);
    Tensor avg = Call1("GlobalAveragePool", {x});
    Tensor max = Call1("GlobalMaxPool", {x});
    EXPECT_EQ(avg.shape(), want);
    EXPECT_EQ(max.shape(), want);
    EXPECT_EQ(avg.ToVector<float>(), (std::vector<float>{2.5f, 8.5f}));
    EXPECT_EQ(max.ToVector<float>(), (std::vector<float>{5, 11}));
  }
  Tensor empty = Call1("GlobalAveragePool", {Tensor::Zeros({0, 3, 4, 4})});
  EXPECT_EQ(empty.shape(), (Shape{0, 3, 1, 1}));
}

// Backward (MaxPoolGrad, AveragePoolGrad): oneDNN against the loops.
TEST(PoolTest, BackwardFastMatchesReference) {
  auto s = [](const char* v) { return AttrValue(std::string(v)); };
  const std::vector<AttrMap> attrs = {
      {{"kernel_shape", Ints{3, 3}}, {"pads", Ints{1, 1, 1, 1}}, {"strides", Ints{2, 2}}},
      {{"kernel_shape", Ints{2, 2}}, {"strides", Ints{2, 2}}},
      {{"kernel_shape", Ints{3, 3}}, {"strides", Ints{2, 2}}, {"ceil_mode", int64_t{1}}},
      {{"kernel_shape", Ints{3, 2}}, {"pads", Ints{1, 0, 0, 1}}, {"auto_pad", s("NOTSET")}},
      {{"kernel_shape", Ints{3, 3}}, {"auto_pad", s("SAME_UPPER")}, {"strides", Ints{2, 2}}},
  };
  for (const char* op : {"MaxPool", "AveragePool"})
    for (const AttrMap& a : attrs) CheckGrads(op, {{2, 16, 17, 17}}, a);
  AttrMap cip = attrs[0];
  cip["count_include_pad"] = int64_t{1};
  CheckGrads("AveragePool", {{2, 16, 17, 17}}, cip);
  cip["ceil_mode"] = int64_t{1};  // a window past the end padding: the loop on both paths
  CheckGrads("AveragePool", {{2, 16, 16, 16}}, cip);
  CheckGrads("MaxPool", {{1, 4, 6, 7, 8}},
             {{"kernel_shape", Ints{2, 2, 2}}, {"strides", Ints{2, 2, 2}}});
  CheckGrads("AveragePool", {{2, 4, 31}},
             {{"kernel_shape", Ints{3}}, {"strides", Ints{2}}, {"pads", Ints{1, 1}}});
}

}  // namespace
}  // namespace singa::testing
