// Behaviour of the index/bit ops that the Python op table cannot check
// against onnx's reference evaluator: string zeros (the evaluator puts the
// integer 0 into string tensors), the errors of ops that exist only above
// the op table's error-row opset (BitCast, CumProd: opset 26), and BitCast of
// 16-bit floats (the table hands those to the evaluator as float32).
#include <gtest/gtest.h>

#include "singa/core/tensor.h"
#include "singa/ops/op.h"

namespace singa {
namespace {

Tensor Strings(Shape shape, std::vector<std::string> v) {
  return Tensor::FromVector<std::string>(std::move(shape), v);
}

TEST(Trilu, StringZerosAreEmpty) {
  Tensor x = Strings({2, 3}, {"a", "b", "c", "d", "e", "f"});
  EXPECT_EQ(Call1("Trilu", {x}).ToVector<std::string>(),
            (std::vector<std::string>{"a", "b", "c", "", "e", "f"}));
  EXPECT_EQ(Call1("Trilu", {x, Tensor::Scalar<int64_t>(-1)}, {{"upper", int64_t{0}}})
                .ToVector<std::string>(),
            (std::vector<std::string>{"", "", "", "d", "", ""}));
}

TEST(CenterCropPad, StringPadIsEmpty) {
  Tensor x = Strings({1, 2}, {"a", "b"});
  Tensor shape = Tensor::FromVector<int64_t>({2}, {2, 3});
  Tensor y = Call1("CenterCropPad", {x, shape});
  EXPECT_EQ(y.shape(), (Shape{2, 3}));
  // Padded by 1 at the end of axis 0 and (3 - 2) / 2 = 0 at the start of axis 1.
  EXPECT_EQ(y.ToVector<std::string>(), (std::vector<std::string>{"a", "b", "", "", "", ""}));
}

TEST(BitCast, HalfBitsAreKept) {
  Tensor x = Tensor::FromVector<Half>({3}, {Half(1.0f), Half(-2.0f), Half(0.5f)});
  Tensor y = Call1("BitCast", {x}, {{"to", int64_t{static_cast<int64_t>(DType::kUInt16)}}}, 26);
  EXPECT_EQ(y.dtype(), DType::kUInt16);
  EXPECT_EQ(y.ToVector<uint16_t>(), (std::vector<uint16_t>{0x3C00, 0xC000, 0x3800}));
  Tensor back = Call1("BitCast", {y}, {{"to", int64_t{static_cast<int64_t>(DType::kFloat16)}}}, 26);
  EXPECT_EQ(back.ToVector<float>(), (std::vector<float>{1.0f, -2.0f, 0.5f}));
}

TEST(BitCast, Errors) {
  Tensor x = Tensor::FromVector<float>({2}, {1, 2});
  EXPECT_THROW(CallOp("BitCast", {x}, {{"to", int64_t{static_cast<int64_t>(DType::kInt16)}}}, 26),
               DTypeError);
  EXPECT_THROW(CallOp("BitCast", {x}, {{"to", int64_t{static_cast<int64_t>(DType::kString)}}}, 26),
               DTypeError);
  EXPECT_THROW(CallOp("BitCast", {x}, {}, 26), InvalidModel);  // `to` is required
  EXPECT_THROW(CallOp("BitCast", {Strings({1}, {"a"})},
                      {{"to", int64_t{static_cast<int64_t>(DType::kInt32)}}}, 26),
               DTypeError);
}

TEST(CumProd, Errors) {
  Tensor x = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_THROW(CallOp("CumProd", {x, Tensor::Scalar<int64_t>(2)}, {}, 26), ShapeError);
  EXPECT_THROW(CallOp("CumProd", {x, Tensor::FromVector<int64_t>({2}, {0, 1})}, {}, 26),
               ShapeError);
  EXPECT_THROW(CallOp("CumProd", {x, Tensor::Scalar<float>(0)}, {}, 26), DTypeError);
}

TEST(CumProd, Values) {
  Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor y = Call1("CumProd", {x, Tensor::Scalar<int64_t>(1)},
                   {{"exclusive", int64_t{1}}, {"reverse", int64_t{1}}}, 26);
  EXPECT_EQ(y.ToVector<float>(), (std::vector<float>{6, 3, 1, 30, 6, 1}));
}

}  // namespace
}  // namespace singa
