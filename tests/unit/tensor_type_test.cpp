#include "ir/tensor_type.h"

#include <gtest/gtest.h>

#include "tensor/tensor.h"

namespace gxc {
namespace {

TEST(TensorTypeTest, PrintsDtypeShapeAndDevice) {
  EXPECT_EQ(TensorType::of(DType::F32, {200, 8}, Device::cuda(1)).str(), "f32[200,8] @cuda:1");
  EXPECT_EQ(TensorType::of(DType::I64, {}, Device::cpu()).str(), "i64[] @cpu");
  EXPECT_EQ(TensorType{}.str(), "? @?");
}

TEST(TensorTypeTest, ParsesDevices) {
  EXPECT_EQ(parseDevice("cpu"), Device::cpu());
  EXPECT_EQ(parseDevice("cuda"), Device::cuda(0));
  EXPECT_EQ(parseDevice("cuda:3"), Device::cuda(3));
  EXPECT_FALSE(parseDevice("cuda:").has_value());
  EXPECT_FALSE(parseDevice("cuda:-1").has_value());
  EXPECT_FALSE(parseDevice("cuda:1x").has_value());
  EXPECT_FALSE(parseDevice("gpu").has_value());
}

TEST(TensorTypeTest, NumelOverflowIsDetected) {
  EXPECT_EQ(checkedNumel({100000, 20000}), 2000000000);
  EXPECT_FALSE(checkedNumel({1LL << 40, 1LL << 40}).has_value());
}

TEST(HalfTest, RoundsToNearestEven) {
  EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);                // rounds to infinity
  EXPECT_EQ(floatToHalf(5.960464477539063e-08f), 0x0001);  // smallest subnormal
  EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);      // tie to even
  EXPECT_EQ(floatToHalf(-2.0f), 0xc000);
  EXPECT_FLOAT_EQ(halfToFloat(0x3555), 0.333251953125f);
  EXPECT_FLOAT_EQ(halfToFloat(0x0001), 5.960464477539063e-08f);
  EXPECT_EQ(floatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(floatToBFloat16(1.00390625f), 0x3f80);  // tie to even
  EXPECT_FLOAT_EQ(bfloat16ToFloat(0x4049), 3.140625f);
}

}  // namespace
}  // namespace gxc
